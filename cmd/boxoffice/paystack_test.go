package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/payments/paystacktest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

const paystackSecret = "sk_test_boxoffice_0123456789abcdef"

// TestPaystackFlow drives live payments through the Paystack adapter and a
// local stand-in of Paystack's API: approve, decline, forged and replayed
// callbacks, and an outage.
func TestPaystackFlow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ps := paystacktest.New(t, paystackSecret)
		tb := setup(t, db, fastJobs, func(c *Config) {
			c.PaymentProvider, c.PaystackSecretKey, c.PaystackBaseURL = "paystack", paystackSecret, ps.URL
		})
		ps.SetWebhookURL(tb.srv.URL + "/payments/paystack/callback")
		rc := newReceiver(t, ok)
		tb.pointWebhooks(t, rc.srv.URL)
		tb.startJobs(t)
		orderOf := func(ref string) map[string]any { return tb.get(t, "/api/v1/orders/"+ref, tb.liveKey).data() }

		t.Run("Approve", func(t *testing.T) {
			before := tb.ticket(t, "DEMO-HIGHLIFE-REG")
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(2)).data()
			ref := sess["order_reference"].(string)
			require.Equal(t, strings.Replace(ref, "_", "-", 1), sess["payment_reference"], "Paystack's reference for the order")
			tx, found := ps.Transaction(sess["payment_reference"].(string))
			require.True(t, found)
			require.Equal(t, int64(24000), tx.Amount, "amount in pesewas")
			require.Equal(t, "GHS", tx.Currency)
			require.Equal(t, "http://boxoffice.test/checkout/"+ref+"/return", tx.CallbackURL)

			toProvider := tb.press(t, sess["checkout_url"].(string)+"/pay", nil)
			require.True(t, strings.HasPrefix(toProvider, ps.URL+"/pay/"), toProvider)
			// The buyer approves on the provider's page; its signed webhook arrives.
			res, err := noRedirects.PostForm(toProvider, url.Values{"outcome": {"approve"}})
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, "paid", orderOf(ref)["status"])
			after := tb.ticket(t, "DEMO-HIGHLIFE-REG")
			require.Equal(t, before.Sold+2, after.Sold)
			require.Equal(t, before.Held, after.Held)
			rc.waitType(t, "order.paid")

			_, page := tb.browse(t, res.Header.Get("Location"))
			require.Contains(t, page, "Payment received")

			// The same callback again (the provider retries) changes nothing.
			code, err := ps.SendWebhook("charge.success", sess["payment_reference"].(string))
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, after.Sold, tb.ticket(t, "DEMO-HIGHLIFE-REG").Sold)
			n, err := db.NewSelect().Model((*store.WebhookEvent)(nil)).Where("type = 'order.paid'").Where("payload LIKE ?", "%"+ref+"%").Count(context.Background())
			require.NoError(t, err)
			require.EqualValues(t, 1, n, "one order.paid")
		})
		t.Run("DeclineFoundByVerification", func(t *testing.T) {
			before := tb.ticket(t, "DEMO-HIGHLIFE-REG")
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).data()
			ref := sess["order_reference"].(string)
			ps.Decline(sess["payment_reference"].(string)) // Paystack sends no webhook for a decline
			_, page := tb.browse(t, sess["checkout_url"].(string)+"/return")
			require.Contains(t, page, "declined")
			require.Equal(t, "failed", orderOf(ref)["status"])
			require.Equal(t, before.Held, tb.ticket(t, "DEMO-HIGHLIFE-REG").Held, "the hold is released")
		})
		t.Run("ReturnBeforeConfirmationWaits", func(t *testing.T) {
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).data()
			_, page := tb.browse(t, sess["checkout_url"].(string)+"/return?trxref=x&reference=x&status=success")
			require.Contains(t, page, "Waiting for the payment provider", "a redirect alone confirms nothing")
			require.Equal(t, "pending", orderOf(sess["order_reference"].(string))["status"])
		})
		t.Run("ErrForgedCallback", func(t *testing.T) {
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).data()
			code, err := ps.SendForgedWebhook("charge.success", sess["payment_reference"].(string))
			require.NoError(t, err)
			require.Equal(t, http.StatusUnauthorized, code)
			require.Equal(t, "pending", orderOf(sess["order_reference"].(string))["status"], "a forged callback changes nothing")
		})
		t.Run("ErrProviderDown", func(t *testing.T) {
			ps.Down(true)
			defer ps.Down(false)
			before := tb.ticket(t, "DEMO-HIGHLIFE-REG")
			orders, err := db.NewSelect().Model((*store.Order)(nil)).Count(context.Background())
			require.NoError(t, err)
			res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1))
			require.Equal(t, 503, res.Status, "%s", res.Raw)
			require.Equal(t, "payment_gateway_unavailable", res.errorCode())
			after, err := db.NewSelect().Model((*store.Order)(nil)).Count(context.Background())
			require.NoError(t, err)
			require.Equal(t, orders, after, "nothing half-written")
			require.Equal(t, before.Held, tb.ticket(t, "DEMO-HIGHLIFE-REG").Held)
		})
	})
}
