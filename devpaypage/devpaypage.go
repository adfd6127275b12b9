// Package devpaypage serves the development payment provider's page
// (payments/devpay) on the service's own site: the payment's amount with
// Pay and Decline, and where the buyer goes back to once it is decided;
// once paid, its refunds and the switch that makes them fail.
// The rules (one decision per payment, its confirmation) are the
// provider's; this package only answers the browser.
package devpaypage

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
)

// Handler serves the development payment provider's page.
type Handler struct {
	Provider *devpay.Provider
	Log      *slog.Logger
}

// Routes serves the provider's page at /dev-pay/{reference}, where its
// payments send the buyer. Its forms refuse posts from other sites:
// otherwise any page a developer visits could mark their live orders paid.
func (h *Handler) Routes(r chi.Router) {
	r.Get("/dev-pay/{reference}", h.page)
	r.With(webpage.RefuseCrossSite).Post("/dev-pay/{reference}", h.decide)
}

var page = webpage.NewPage("devpay", `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Development payment</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;background:#f1f3f8;color:#1d2330;margin:0}
main{max-width:26rem;margin:3rem auto;background:#fff;border-radius:14px;padding:1.5rem;border:1px solid #e3e6ee}
.note{background:#fff4d6;color:#8a5a00;padding:.5rem .75rem;border-radius:8px;font-size:.9rem}
button{width:100%;padding:.8rem;font:inherit;font-weight:600;border-radius:10px;border:1px solid #d0d5df;margin-top:.75rem;cursor:pointer;background:#fff}
button.pay{background:#137a4b;color:#fff;border-color:#137a4b}</style></head>
<body><main><p class="note">Development payment provider — no money moves. Never used in production.</p>
<h1>Pay {{.Currency}} {{.Amount}}</h1><p>Order {{.Reference}}</p>
{{if .Pending}}
<form method="post"><button class="pay" name="outcome" value="pay">Pay</button></form>
<form method="post"><button name="outcome" value="decline">Decline</button></form>
{{else}}
<p>This payment is {{.State}}. <a href="{{.Back}}">Back to the checkout</a>.</p>
{{end}}
{{if .Paid}}
<h2>Refunds</h2>
{{range .Refunds}}<p class="refund">{{.ID}}: {{$.Currency}} {{.Amount}} {{.State}}</p>{{else}}<p>No refunds yet.</p>{{end}}
<p>Refunds of this payment {{if .FailRefunds}}<strong>fail</strong>{{else}}succeed{{end}}.</p>
{{if .FailRefunds}}<form method="post"><button name="outcome" value="refunds_succeed">Make refunds succeed</button></form>
{{else}}<form method="post"><button name="outcome" value="refunds_fail">Make refunds fail</button></form>{{end}}
{{end}}
</main></body></html>`, "img-src data:")

// load returns the payment of the request's reference, or answers 404.
func (h *Handler) load(w http.ResponseWriter, r *http.Request) (*store.DevPayment, bool) {
	ref := chi.URLParam(r, "reference")
	// A payment's reference is its order's: anything else is a 404 without
	// a query.
	if !store.PlausibleReference(ref) {
		webpage.NotFound(w, "There is no development payment with this reference.")
		return nil, false
	}
	dp, err := h.Provider.Payment(r.Context(), ref)
	if errors.Is(err, store.ErrNotFound) {
		webpage.NotFound(w, "There is no development payment with this reference.")
		return nil, false
	}
	if err != nil {
		webpage.Fail(w, r, h.Log, "development payment", err)
		return nil, false
	}
	return dp, true
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	dp, ok := h.load(w, r)
	if !ok {
		return
	}
	type refund struct{ ID, Amount, State string }
	var refunds []refund
	if dp.State == store.DevPaymentPaid {
		rs, err := h.Provider.RefundsOf(r.Context(), dp.Reference)
		if err != nil {
			webpage.Fail(w, r, h.Log, "development payment", err)
			return
		}
		for _, x := range rs {
			refunds = append(refunds, refund{ID: x.RefundID, Amount: catalog.FormatAmount(x.Amount), State: string(x.State)})
		}
	}
	err := page.Render(w, http.StatusOK, map[string]any{
		"Reference": dp.Reference, "Currency": dp.Currency, "Amount": catalog.FormatAmount(dp.Amount),
		"Pending": dp.State == string(payments.Pending), "State": dp.State, "Back": dp.CallbackURL,
		"Paid": dp.State == store.DevPaymentPaid, "Refunds": refunds, "FailRefunds": dp.RefundOutcome == store.DevRefundsFail,
	}, webpage.FormAction(dp.CallbackURL))
	if err != nil {
		h.Log.ErrorContext(r.Context(), "development payment page", "error", err)
	}
}

// decide hands Pay or Decline to the provider, which applies it once and
// confirms it with checkout, and returns the buyer to the service.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request) {
	dp, ok := h.load(w, r)
	if !ok {
		return
	}
	var to payments.State
	switch r.PostFormValue("outcome") {
	case "pay":
		to = payments.Paid
	case "decline":
		to = payments.Declined
	case "refunds_fail", "refunds_succeed":
		// The switch that lets a developer try a refund that fails.
		if err := h.Provider.FailRefunds(r.Context(), dp.Reference, r.PostFormValue("outcome") == "refunds_fail"); err != nil {
			webpage.Fail(w, r, h.Log, "development payment", err)
			return
		}
		http.Redirect(w, r, "/dev-pay/"+dp.Reference, http.StatusSeeOther)
		return
	default:
		webpage.Message(w, http.StatusBadRequest, "Choose Pay or Decline", "Choose one of the buttons on the development payment page.")
		return
	}
	dp, err := h.Provider.Decide(r.Context(), dp.Reference, to)
	if err != nil {
		webpage.Fail(w, r, h.Log, "development payment", err)
		return
	}
	http.Redirect(w, r, dp.CallbackURL, http.StatusSeeOther)
}
