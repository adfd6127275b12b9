package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// local turns a URL the service handed out (PUBLIC_BASE_URL is
// http://boxoffice.test in tests) into one of the test server.
func (tb *testBundle) local(u string) string {
	return strings.Replace(u, "http://boxoffice.test", tb.srv.URL, 1)
}

// browse GETs a page and returns its status and text.
func (tb *testBundle) browse(t testing.TB, u string) (int, string) {
	t.Helper()
	res, err := noRedirects.Get(tb.local(u))
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// press submits a form and returns where it redirects.
func (tb *testBundle) press(t testing.TB, u string, form url.Values) string {
	t.Helper()
	res, err := noRedirects.PostForm(tb.local(u), form)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "POST %s", u)
	return res.Header.Get("Location")
}

func (tb *testBundle) ticket(t testing.TB, ref string) store.Ticket {
	t.Helper()
	var tk store.Ticket
	require.NoError(t, tb.db.NewSelect().Model(&tk).Where("id = ?", tb.demo.Catalog.Tickets[ref]).Scan(context.Background()))
	return tk
}

func TestLivePaymentsDevProvider(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, fastJobs)
		rc := newReceiver(t, ok)
		tb.pointWebhooks(t, rc.srv.URL)
		tb.startJobs(t)

		t.Run("PayOnHostedPage", func(t *testing.T) {
			before := tb.ticket(t, "DEMO-HIGHLIFE-VIP")
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.cartFor("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-VIP", 2)).data()
			ref := sess["order_reference"].(string)
			require.Equal(t, ref, sess["payment_reference"], "payment_reference comes from the provider")
			require.Equal(t, "http://boxoffice.test/checkout/"+ref, sess["checkout_url"])

			code, html := tb.browse(t, sess["checkout_url"].(string))
			require.Equal(t, 200, code)
			require.Contains(t, html, "Pay GH₵ 900.00")
			toProvider := tb.press(t, sess["checkout_url"].(string)+"/pay", nil)
			require.Equal(t, "http://boxoffice.test/dev-pay/"+ref, toProvider)
			_, providerPage := tb.browse(t, toProvider)
			require.Contains(t, providerPage, "Development payment provider")

			back := tb.press(t, toProvider, url.Values{"outcome": {"pay"}})
			require.Equal(t, "http://boxoffice.test/checkout/"+ref+"/return", back, "the provider returns the buyer to the service's own site")
			_, outcome := tb.browse(t, back)
			require.Contains(t, outcome, "Payment received")

			order := tb.get(t, "/api/v1/orders/"+ref, tb.liveKey).data()
			require.Equal(t, "paid", order["status"])
			require.Equal(t, ref, order["payment_reference"])
			require.Len(t, order["tickets"], 2, "paid: the tickets are issued")
			require.Contains(t, outcome, `href="`+order["tickets_url"].(string)+`"`, "the return page links to the buyer's tickets")
			after := tb.ticket(t, "DEMO-HIGHLIFE-VIP")
			require.Equal(t, before.Sold+2, after.Sold, "holds become sold")
			require.Equal(t, before.Held, after.Held)
			d := rc.waitType(t, "order.paid")
			require.Contains(t, string(d.Body), ref)

			// A duplicate confirmation changes nothing.
			o, err := tb.m.Checkout.ConfirmPayment(context.Background(), &payments.Status{Reference: ref, State: payments.Paid, Amount: 90000, Currency: "GHS"})
			require.NoError(t, err)
			require.Equal(t, "paid", o.Status)
			require.False(t, o.RefundReview)
			require.Equal(t, after.Sold, tb.ticket(t, "DEMO-HIGHLIFE-VIP").Sold)
		})
		t.Run("Decline", func(t *testing.T) {
			before := tb.ticket(t, "DEMO-HIGHLIFE-REG")
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(3)).data()
			ref := sess["order_reference"].(string)
			require.Equal(t, before.Held+3, tb.ticket(t, "DEMO-HIGHLIFE-REG").Held)
			toProvider := tb.press(t, sess["checkout_url"].(string)+"/pay", nil)
			back := tb.press(t, toProvider, url.Values{"outcome": {"decline"}})
			_, outcome := tb.browse(t, back)
			require.Contains(t, outcome, "declined")
			require.Equal(t, "failed", tb.get(t, "/api/v1/orders/"+ref, tb.liveKey).data()["status"])
			require.Equal(t, before.Held, tb.ticket(t, "DEMO-HIGHLIFE-REG").Held, "the hold is released")
			rc.waitType(t, "order.failed")
		})
		t.Run("LateConfirmationIsFlagged", func(t *testing.T) {
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).data()
			ref := sess["order_reference"].(string)
			_, _, err := tb.m.Checkout.Settle(context.Background(), ref, store.OrderExpired)
			require.NoError(t, err)
			o, err := tb.m.Checkout.ConfirmPayment(context.Background(), &payments.Status{Reference: ref, State: payments.Paid, Amount: 12000, Currency: "GHS"})
			require.NoError(t, err)
			require.Equal(t, "expired", o.Status, "not silently accepted")
			require.True(t, o.RefundReview)
			require.Contains(t, *o.ReviewNote, "confirmed while the order was expired")
			_, page := tb.browse(t, sess["checkout_url"].(string))
			require.Contains(t, page, "reviewed for a refund")
		})
		t.Run("WrongAmountIsFlagged", func(t *testing.T) {
			ref := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).data()["order_reference"].(string)
			o, err := tb.m.Checkout.ConfirmPayment(context.Background(), &payments.Status{Reference: ref, State: payments.Paid, Amount: 100, Currency: "GHS"})
			require.NoError(t, err)
			require.Equal(t, "pending", o.Status)
			require.True(t, o.RefundReview)
		})
	})
}

func TestLiveCheckoutSwitches(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, func(c *Config) { c.PaymentProvider = ""; c.LiveFreeDisabled = true })
		t.Run("ErrPaymentGatewayUnavailable", func(t *testing.T) {
			before := tb.ticket(t, "DEMO-HIGHLIFE-REG")
			orders, err := db.NewSelect().Model((*store.Order)(nil)).Count(context.Background())
			require.NoError(t, err)
			key := newIdemKey()
			res := tb.checkout(t, tb.liveKey, key, tb.highlife(1))
			require.Equal(t, 503, res.Status, "%s", res.Raw)
			require.Equal(t, "payment_gateway_unavailable", res.errorCode())
			require.Equal(t, map[string]any{"status_code": 503.0}, res.Body["meta"])
			after, err := db.NewSelect().Model((*store.Order)(nil)).Count(context.Background())
			require.NoError(t, err)
			require.Equal(t, orders, after, "nothing half-written")
			require.Equal(t, before.Held, tb.ticket(t, "DEMO-HIGHLIFE-REG").Held)
			require.Equal(t, 503, tb.checkout(t, tb.liveKey, key, tb.highlife(1)).Status, "a 503 is not saved: the key stays usable")
			require.Equal(t, 201, tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).Status, "sandbox needs no provider")
		})
		t.Run("ErrFreeCheckoutUnavailable", func(t *testing.T) {
			res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
			require.Equal(t, 503, res.Status, "%s", res.Raw)
			require.Equal(t, "free_checkout_unavailable", res.errorCode())
			require.Equal(t, 201, tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1)).Status)
		})
	})
}
