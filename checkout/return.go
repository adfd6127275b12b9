package checkout

import (
	"net/url"
	"strings"

	"github.com/boxoffice/boxoffice/store"
)

// OrderParam is the query parameter that tells the partner's page which
// order a returning buyer comes from: the buyer lands on
// success_url?…&order_reference=sbx_… (or ord_…).
const OrderParam = "order_reference"

// PartnerReturnURL is where a buyer goes back to the partner once an order
// is settled: its success_url when status (the order's status as the buyer
// sees it, see StatusAt) is paid or completed, its cancel_url otherwise
// (failed, expired, or a payment under refund review), with the order's
// reference added as OrderParam. The URL's own query parameters and
// fragment stay exactly as the partner wrote them; a parameter of
// OrderParam's name is replaced, so the reference is never ambiguous.
func PartnerReturnURL(o *store.Order, status string) string {
	raw := o.CancelURL
	if status == store.OrderPaid || status == store.OrderCompleted {
		raw = o.SuccessURL
	}
	return withOrderParam(raw, o.Reference)
}

func withOrderParam(raw, ref string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// Checkout accepts only valid https URLs, so this is a row written
		// by hand: send the buyer there unchanged rather than nowhere.
		return raw
	}
	var keep []string
	for _, pair := range strings.Split(u.RawQuery, "&") {
		if pair == "" {
			continue
		}
		name, _, _ := strings.Cut(pair, "=")
		if n, err := url.QueryUnescape(name); err == nil && n == OrderParam {
			continue
		}
		keep = append(keep, pair)
	}
	u.RawQuery = strings.Join(append(keep, OrderParam+"="+url.QueryEscape(ref)), "&")
	u.ForceQuery = false
	return u.String()
}
