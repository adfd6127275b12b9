// Package sandbox serves the hosted checkout page of test orders: a
// server-rendered page (no JavaScript needed) that shows the order and lets
// a developer simulate the buyer's outcome — paid, failed or expired — which
// settles the order once, emits its webhook and sends the buyer back to the
// partner's success_url or cancel_url.
package sandbox

import (
	"bytes"
	_ "embed"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
	"github.com/go-chi/chi/v5"
)

//go:embed page.html
var pageHTML string

var page = template.Must(template.New("page").Parse(pageHTML))

// Handler serves /sandbox/checkout/{reference}.
type Handler struct {
	Checkout *checkout.Service
	// Now is the clock the page shows an order's status at.
	Now func() time.Time
	Log *slog.Logger
}

// Routes registers the page on r.
func (h *Handler) Routes(r chi.Router) {
	r.Get("/sandbox/checkout/{reference}", h.show)
	r.Post("/sandbox/checkout/{reference}", h.settle)
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
	if !strings.HasPrefix(ref, checkout.SandboxPrefix) || len(ref) > 64 {
		h.notFound(w)
		return nil, false
	}
	sum, err := h.Checkout.Summarize(r.Context(), ref)
	if apperr.CodeOf(err) == apperr.OrderNotFound {
		h.notFound(w)
		return nil, false
	}
	if err != nil {
		h.Log.ErrorContext(r.Context(), "sandbox page", "error", err)
		http.Error(w, "Something went wrong; try again.", http.StatusInternalServerError)
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
	loc := catalog.Zone(sum.Event.Timezone)
	if t := catalog.FormatTime(sum.Date.StartAt, loc); t != nil {
		v.When = t.Display
	}
	if !o.ExpiresAt.IsZero() {
		v.Expires = catalog.FormatTime(o.ExpiresAt, loc).Display + " (" + sum.Event.Timezone + ")"
	}
	v.Back = o.CancelURL
	if status == store.OrderPaid {
		v.Back = o.SuccessURL
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		h.Log.ErrorContext(r.Context(), "sandbox page", "error", err)
		http.Error(w, "Something went wrong; try again.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
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
		http.Error(w, "Choose one of the outcome buttons.", http.StatusBadRequest)
		return
	}
	settled, _, err := h.Checkout.Settle(r.Context(), sum.Order.Reference, outcome)
	if err != nil {
		h.Log.ErrorContext(r.Context(), "sandbox settle", "error", err)
		http.Error(w, "Something went wrong; try again.", http.StatusInternalServerError)
		return
	}
	to := settled.CancelURL
	if settled.Status == store.OrderPaid {
		to = settled.SuccessURL
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (h *Handler) notFound(w http.ResponseWriter) {
	http.Error(w, "This sandbox checkout does not exist.", http.StatusNotFound)
}
