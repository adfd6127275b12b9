package hosted_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/payments/paystack"
	"github.com/boxoffice/boxoffice/payments/paystacktest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

const paystackSecret = "sk_test_hosted_0123456789abcdef"

// paystackBundle is the hosted checkout with the Paystack adapter talking
// to a local stand-in of Paystack's API, whose webhooks come to the
// callback endpoint.
type paystackBundle struct {
	*bundle
	ps *paystacktest.Server
}

func setupPaystack(t *testing.T, db *store.DB) *paystackBundle {
	t.Helper()
	b := newBundle(t, db)
	ps := paystacktest.New(t, paystackSecret)
	p, err := paystack.New(paystack.Config{SecretKey: paystackSecret, BaseURL: ps.URL})
	require.NoError(t, err)
	b.Service.Payments = p
	b.handler(p)
	ps.SetWebhookURL(b.srv.URL + "/payments/paystack/callback")
	return &paystackBundle{bundle: b, ps: ps}
}

// callback posts body to the callback endpoint signed with key ("" for
// no signature header).
func (b *paystackBundle) callback(t *testing.T, key string, body []byte) answer {
	t.Helper()
	headers := []string{"Content-Type", "application/json"}
	if key != "" {
		headers = append(headers, paystack.SignatureHeader, paystacktest.Sign(key, body))
	}
	return b.do(t, http.MethodPost, "/payments/paystack/callback", bytes.NewReader(body), headers...)
}

// charge is the body of a charge.success webhook about the order's
// payment, for amount (minor units).
func charge(o *store.Order, amount int64) []byte {
	return paystacktest.WebhookBody("charge.success", paystacktest.Transaction{ID: 1, Reference: *o.PaymentReference,
		Email: o.CustomerEmail, Amount: amount, Currency: o.Currency, Status: "success"})
}

// TestPaystack: the live flow through a real provider's API: the pay
// button leads to its page, its signed callback settles the order once,
// the return page verifies what no callback reported, and a callback that
// is not the provider's changes nothing.
func TestPaystack(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setupPaystack(t, db)
		returnPath := func(o *store.Order) string { return "/checkout/" + o.Reference + "/return" }

		t.Run("OKApprovedByCallback", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			require.Equal(t, strings.Replace(o.Reference, "_", "-", 1), *o.PaymentReference)
			tx, ok := b.ps.Transaction(*o.PaymentReference)
			require.True(t, ok)
			require.Equal(t, b.srv.URL+returnPath(o), tx.CallbackURL, "the buyer comes back to the service's own page")

			page := b.get(t, "/checkout/"+o.Reference)
			requirePage(t, page, `<button type="submit">Pay GH₵ 240.00</button>`)
			require.Contains(t, page.Header.Get("Content-Security-Policy"), "form-action 'self' "+b.ps.URL+";",
				"the pay form's redirect goes to the provider")
			a := b.post(t, "/checkout/"+o.Reference+"/pay", url.Values{})
			require.Equal(t, http.StatusSeeOther, a.Status)
			require.Equal(t, b.ps.URL+"/pay/"+tx.AccessCode, a.Header.Get("Location"))

			// The buyer approves: Paystack calls back, signed, before it
			// redirects the buyer.
			b.ps.Approve(*o.PaymentReference)
			hooks := b.ps.Webhooks()
			require.Equal(t, http.StatusOK, hooks[len(hooks)-1].StatusCode)
			require.Equal(t, store.OrderPaid, b.order(t, o.Reference).Status)
			requirePage(t, b.get(t, returnPath(o)), `<p class="outcome paid">`+paidText+`</p>`)

			// Paystack delivers again: answered 200, nothing changes.
			status, err := b.ps.SendWebhook("charge.success", *o.PaymentReference)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, []string{"order.paid"}, b.webhooks(t, o.Reference))
		})

		// Paystack sends no webhook for a declined charge: the return page
		// learns it by verifying.
		t.Run("OKDeclineFoundByVerification", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			b.ps.Decline(*o.PaymentReference)
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
			requirePage(t, b.get(t, returnPath(o)+"?trxref="+*o.PaymentReference), `<p class="outcome failed">`+declinedText+`</p>`)
			require.Equal(t, store.OrderFailed, b.order(t, o.Reference).Status)
		})

		t.Run("OKWaitingWhileAbandoned", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			requirePage(t, b.get(t, returnPath(o)+"?trxref=x&reference=x&status=success"), waitingText)
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status, "a redirect alone confirms nothing")
		})

		t.Run("OKWaitingWhileProviderDown", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			b.ps.SetStatus(*o.PaymentReference, "success")
			b.ps.Down(true)
			t.Cleanup(func() { b.ps.Down(false) }) // should the test stop before it is back
			requirePage(t, b.get(t, returnPath(o)), waitingText)
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
			b.ps.Down(false)
			requirePage(t, b.get(t, returnPath(o)), paidText)
			require.Equal(t, store.OrderPaid, b.order(t, o.Reference).Status)
		})

		// A callback for an order the service does not have is
		// acknowledged, so Paystack stops retrying it.
		t.Run("OKUnknownOrder", func(t *testing.T) {
			ghost := &store.Order{PaymentReference: ptr("ord-" + strings.Repeat("z", 32)), CustomerEmail: "ama@example.com", Currency: "GHS"}
			a := b.callback(t, paystackSecret, charge(ghost, 24000))
			require.Equal(t, http.StatusOK, a.Status, a.Body)
		})

		// Events other than a charge's success are acknowledged and ignored.
		t.Run("OKOtherEvent", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			body := paystacktest.WebhookBody("transfer.success", paystacktest.Transaction{Reference: *o.PaymentReference,
				Amount: o.TotalAmount, Currency: o.Currency, Status: "success"})
			a := b.callback(t, paystackSecret, body)
			require.Equal(t, http.StatusOK, a.Status, a.Body)
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
		})

		// A confirmed payment of the wrong amount is kept for review and
		// does not make the order paid.
		t.Run("OKWrongAmountFlagged", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			a := b.callback(t, paystackSecret, charge(o, 100))
			require.Equal(t, http.StatusOK, a.Status, a.Body)
			got := b.order(t, o.Reference)
			require.Equal(t, store.OrderPending, got.Status)
			require.True(t, got.RefundReview)
			requirePage(t, b.get(t, "/checkout/"+o.Reference), `<p class="outcome review">`+reviewText+`</p>`)
		})

		for _, tt := range []struct {
			name   string
			key    string
			body   func(o *store.Order) []byte
			status int
			text   string
		}{
			{"ErrForgedSignature", "sk_test_someone_else", func(o *store.Order) []byte { return charge(o, o.TotalAmount) },
				http.StatusUnauthorized, "signature does not match\n"},
			{"ErrNoSignature", "", func(o *store.Order) []byte { return charge(o, o.TotalAmount) },
				http.StatusUnauthorized, "signature does not match\n"},
			{"ErrMalformedBody", paystackSecret, func(*store.Order) []byte { return []byte(`{"event":`) },
				http.StatusBadRequest, "malformed callback\n"},
			{"ErrChargeWithoutReference", paystackSecret, func(*store.Order) []byte {
				return []byte(`{"event":"charge.success","data":{"status":"success","amount":24000,"currency":"GHS"}}`)
			}, http.StatusBadRequest, "malformed callback\n"},
			{"ErrBodyTooLarge", paystackSecret, func(*store.Order) []byte {
				return []byte(`{"event":"charge.success","padding":"` + strings.Repeat("x", 1<<20) + `"}`)
			}, http.StatusBadRequest, "unreadable body\n"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				o := b.pending(t, store.EnvLive)
				a := b.callback(t, tt.key, tt.body(o))
				require.Equal(t, tt.status, a.Status, a.Body)
				require.Equal(t, tt.text, a.Body)
				got := b.order(t, o.Reference)
				require.Equal(t, store.OrderPending, got.Status, "nothing changes")
				require.False(t, got.RefundReview)
				require.Empty(t, b.webhooks(t, o.Reference))
			})
		}

		// A body changed after it was signed: the amount of a payment of
		// 1.00 raised to the order's total.
		t.Run("ErrTamperedBody", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			signed := charge(o, 100)
			sent := bytes.Replace(signed, []byte(`"amount":100,`), []byte(`"amount":24000,`), 1)
			require.NotEqual(t, signed, sent)
			a := b.do(t, http.MethodPost, "/payments/paystack/callback", bytes.NewReader(sent),
				"Content-Type", "application/json", paystack.SignatureHeader, paystacktest.Sign(paystackSecret, signed))
			require.Equal(t, http.StatusUnauthorized, a.Status, a.Body)
			require.Equal(t, "signature does not match\n", a.Body)
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
		})

		t.Run("ErrForgedByTheStandIn", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			status, err := b.ps.SendForgedWebhook("charge.success", *o.PaymentReference)
			require.NoError(t, err)
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
			require.Contains(t, b.log.String(), `msg="refused a payment callback with a bad signature" provider=paystack`)
		})

		t.Run("ErrOtherProviderName", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			body := charge(o, o.TotalAmount)
			a := b.do(t, http.MethodPost, "/payments/dev/callback", bytes.NewReader(body),
				paystack.SignatureHeader, paystacktest.Sign(paystackSecret, body))
			require.Equal(t, http.StatusNotFound, a.Status)
			require.Equal(t, "unknown payment provider\n", a.Body)
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
		})
	})
}

// TestPaystack_DatabaseDown: a callback the service cannot apply is
// answered 5xx, so Paystack retries it later.
func TestPaystack_DatabaseDown(t *testing.T) {
	t.Parallel()
	b := setupPaystack(t, storetest.MustOpen(t, "sqlite"))
	o := b.pending(t, store.EnvLive)
	require.NoError(t, b.DB.Close())
	a := b.callback(t, paystackSecret, charge(o, o.TotalAmount))
	requireMessage(t, a, http.StatusInternalServerError, "Something went wrong", "Something went wrong on our side; try again.")
	require.Contains(t, b.log.String(), `msg="hosted checkout"`)
}
