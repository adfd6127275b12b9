package paystack

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/payments"
)

var (
	_ payments.Refunder        = (*Provider)(nil)
	_ payments.RefundCallbacks = (*Provider)(nil)
)

// refundRequest is the body of POST /refund: the transaction by its
// reference, the amount in subunits, and the service's refund id as the
// merchant note, which Paystack keeps and lists with the refund.
type refundRequest struct {
	Transaction  string `json:"transaction"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency,omitempty"`
	MerchantNote string `json:"merchant_note"`
}

// refund is a refund as Paystack's create and list answers show it.
type refund struct {
	ID           int64  `json:"id"`
	Amount       int64  `json:"amount"`
	Status       string `json:"status"`
	MerchantNote string `json:"merchant_note"`
}

// RefundState maps a Paystack refund status to a refund state: "processed"
// is RefundSucceeded, "failed" RefundFailed, and anything else ("pending",
// "processing", "needs-attention", or a status Paystack adds later)
// RefundPending.
func RefundState(status string) payments.RefundState {
	switch strings.ToLower(status) {
	case "processed":
		return payments.RefundSucceeded
	case "failed":
		return payments.RefundFailed
	}
	return payments.RefundPending
}

func (r refund) result() payments.RefundResult {
	res := payments.RefundResult{RefundID: r.MerchantNote, ProviderID: strconv.FormatInt(r.ID, 10),
		State: RefundState(r.Status), Amount: r.Amount}
	if res.State == payments.RefundFailed {
		res.FailureReason = "Paystack could not return the money to the buyer's payment method (refund status failed); " +
			"check the refund in the Paystack dashboard."
	}
	return res
}

// Refund implements payments.Refunder: POST /refund for r.Amount
// subunits of the transaction r.PaymentReference (Paystack's reference),
// with r.RefundID as the merchant note. Paystack queues refunds, so the
// answer is nearly always pending; its refund.processed or refund.failed
// webhook, or RefundsOf, tells the end.
func (p *Provider) Refund(ctx context.Context, r payments.RefundRequest) (*payments.RefundResult, error) {
	if r.PaymentReference == "" || r.RefundID == "" || r.Amount <= 0 {
		return nil, fmt.Errorf("paystack: refund %s: a payment reference, an id and a positive amount are required", r.RefundID)
	}
	body, err := json.Marshal(refundRequest{Transaction: r.PaymentReference, Amount: r.Amount,
		Currency: strings.ToUpper(r.Currency), MerchantNote: r.RefundID})
	if err != nil {
		return nil, fmt.Errorf("paystack: refund %s: %w", r.RefundID, err)
	}
	d, err := execute(p, func() (refund, error) {
		return call[refund](ctx, p, http.MethodPost, "/refund", body)
	})
	if err != nil {
		return nil, fmt.Errorf("paystack: refund %s: %w", r.RefundID, err)
	}
	res := d.result()
	if res.RefundID == "" {
		res.RefundID = r.RefundID
	}
	return &res, nil
}

// RefundsOf implements payments.Refunder: GET /refund?reference=…, the
// refunds of one transaction.
func (p *Provider) RefundsOf(ctx context.Context, paymentReference string) ([]payments.RefundResult, error) {
	q := url.Values{"reference": {paymentReference}, "perPage": {"100"}}
	list, err := execute(p, func() ([]refund, error) {
		return call[[]refund](ctx, p, http.MethodGet, "/refund?"+q.Encode(), nil)
	})
	if err != nil {
		return nil, fmt.Errorf("paystack: refunds of %s: %w", paymentReference, err)
	}
	out := make([]payments.RefundResult, len(list))
	for i, r := range list {
		out[i] = r.result()
	}
	return out, nil
}

// ParseRefundCallback implements payments.RefundCallbacks: a signed
// refund.* webhook names the transaction whose refunds changed.
func (p *Provider) ParseRefundCallback(h http.Header, body []byte) (*payments.RefundNotice, error) {
	if err := p.authentic(h, body); err != nil {
		return nil, err
	}
	var ev struct {
		Event string `json:"event"`
		Data  struct {
			TransactionReference string `json:"transaction_reference"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("paystack: webhook: malformed body: %w", err)
	}
	if !strings.HasPrefix(ev.Event, "refund.") {
		return nil, nil
	}
	if ev.Data.TransactionReference == "" {
		return nil, errors.New("paystack: webhook: " + ev.Event + " without a transaction_reference")
	}
	return &payments.RefundNotice{OrderReference: DecodeReference(ev.Data.TransactionReference)}, nil
}

// authentic checks a webhook's signature.
func (p *Provider) authentic(h http.Header, body []byte) error {
	sig := header(h, SignatureHeader)
	if sig == "" {
		return fmt.Errorf("paystack: webhook without %s: %w", SignatureHeader, payments.ErrForged)
	}
	got, err := hex.DecodeString(strings.TrimSpace(sig))
	if err != nil || !hmac.Equal(got, p.sign(body)) {
		return fmt.Errorf("paystack: webhook: %w", payments.ErrForged)
	}
	return nil
}
