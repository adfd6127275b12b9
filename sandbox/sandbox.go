// Package sandbox serves the hosted checkout page of test orders: a
// server-rendered page (no JavaScript needed) that shows the order and lets
// a developer simulate the buyer's outcome — paid, failed or expired — which
// settles the order once, emits its webhook and sends the buyer back to the
// partner's success_url or cancel_url, the order's reference added.
package sandbox

import (
	_ "embed"
	"log/slog"
	"net/http"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
)

//go:embed page.html
var pageHTML string

var page = webpage.NewPage("sandbox", pageHTML, "img-src data:")

// Handler serves /sandbox/checkout/{reference}.
type Handler struct {
	Checkout *checkout.Service
	// Now is the clock the page shows an order's status at.
	Now func() time.Time
	Log *slog.Logger
}

// Routes registers the page on r. Its forms refuse posts from other sites:
// a partner's (or anyone's) page cannot settle an order behind the
// developer's back.
func (h *Handler) Routes(r chi.Router) {
	r.Get("/sandbox/checkout/{reference}", h.show)
	r.With(webpage.RefuseCrossSite).Post("/sandbox/checkout/{reference}", h.settle)
}

// outcomes are the buttons of the page, in order.
var outcomes = []struct{ Value, Label, Hint string }{
	{store.OrderPaid, "Simulate successful payment", "Order becomes paid; order.paid is sent; back to success_url."},
	{store.OrderFailed, "Simulate failed payment", "Order becomes failed; order.failed is sent; back to cancel_url."},
	{store.OrderExpired, "Simulate expiry", "Order becomes expired; order.expired is sent; back to cancel_url."},
}

type view struct {
	*checkout.Summary
	Reference string
	Status    string // as checkout sees it now: expired once expires_at has passed
	Pending   bool
	When      string
	Expires   string
	Outcomes  any
	Currency  string
	Back      string
}

func (h *Handler) load(w http.ResponseWriter, r *http.Request) (*checkout.Summary, bool) {
	ref := chi.URLParam(r, "reference")
	if checkout.ReferenceEnvironment(ref) != store.EnvTest {
		h.notFound(w)
		return nil, false
	}
	sum, err := h.Checkout.Summarize(r.Context(), ref)
	if apperr.CodeOf(err) == apperr.OrderNotFound {
		h.notFound(w)
		return nil, false
	}
	if err != nil {
		webpage.Fail(w, r, h.Log, "sandbox page", err)
		return nil, false
	}
	return sum, true
}

func (h *Handler) show(w http.ResponseWriter, r *http.Request) {
	sum, ok := h.load(w, r)
	if !ok {
		return
	}
	o := sum.Order
	status := checkout.StatusAt(o, h.Now())
	v := view{Summary: sum, Reference: o.Reference, Status: status, Pending: status == store.OrderPending,
		Outcomes: outcomes, Currency: catalog.CurrencySymbol(o.Currency)}
	v.When = catalog.DisplayInZone(sum.Date.StartAt, sum.Event.Timezone)
	v.Expires = catalog.DisplayInZone(o.ExpiresAt, sum.Event.Timezone)
	v.Back = checkout.PartnerReturnURL(o, status)
	// The forms are answered with a redirect to the partner's page.
	if err := page.Render(w, http.StatusOK, v, webpage.FormAction(o.SuccessURL, o.CancelURL)); err != nil {
		h.Log.ErrorContext(r.Context(), "sandbox page", "error", err)
	}
}

// settle applies the submitted outcome once, as checkout's rule allows (an
// order whose expiry has passed can only expire), and redirects the buyer.
func (h *Handler) settle(w http.ResponseWriter, r *http.Request) {
	sum, ok := h.load(w, r)
	if !ok {
		return
	}
	outcome := r.PostFormValue("outcome")
	switch outcome {
	case store.OrderPaid, store.OrderFailed, store.OrderExpired:
	default:
		webpage.Message(w, http.StatusBadRequest, "Choose an outcome", "Choose one of the outcome buttons on the sandbox page.")
		return
	}
	settled, _, err := h.Checkout.Settle(r.Context(), sum.Order.Reference, outcome)
	if err != nil {
		webpage.Fail(w, r, h.Log, "sandbox settle", err)
		return
	}
	http.Redirect(w, r, checkout.PartnerReturnURL(settled, settled.Status), http.StatusSeeOther)
}

func (h *Handler) notFound(w http.ResponseWriter) {
	webpage.NotFound(w, "This sandbox checkout does not exist. Check the checkout_url your checkout session returned.")
}
