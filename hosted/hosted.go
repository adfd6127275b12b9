// Package hosted serves the live hosted checkout on the service's own site:
// the order page whose pay button hands the buyer to the payment provider,
// the return page the provider sends the buyer back to (it shows the
// outcome only once the provider confirms it, never on the strength of the
// redirect), and the endpoint that receives the provider's signed callbacks.
package hosted

import (
	_ "embed"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
)

//go:embed page.html
var pageHTML string

var page = webpage.NewPage("hosted", pageHTML, "img-src data:")

// Handler serves the live hosted checkout.
type Handler struct {
	Checkout *checkout.Service
	Payments payments.Provider // nil: no provider configured
	Now      func() time.Time
	Log      *slog.Logger
	// Refunds settles refunds the provider's callbacks report; nil
	// ignores those callbacks.
	Refunds *refunds.Service
}

// Routes registers the pages and the provider's callback endpoint. The pay
// form refuses posts from other sites; the callback is the provider's
// server calling, authenticated by its signature instead.
func (h *Handler) Routes(r chi.Router) {
	r.Get("/checkout/{reference}", h.show)
	r.With(webpage.RefuseCrossSite).Post("/checkout/{reference}/pay", h.pay)
	r.Get("/checkout/{reference}/return", h.back)
	r.Post("/payments/{provider}/callback", h.callback)
}

type view struct {
	*checkout.Summary
	Currency string
	When     string
	Expires  string
	Mode     string // "pay", "waiting", "paid", "failed", "expired", "review"
	CanPay   bool
	// Back is the partner's page for the outcome (success_url or
	// cancel_url with the order reference), once there is one.
	Back string
	// TicketsURL is the buyer's ticket page once tickets exist; Emailed
	// says they are being emailed too.
	TicketsURL string
	Emailed    bool
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, sum *checkout.Summary, mode string) {
	o := sum.Order
	v := view{Summary: sum, Currency: catalog.CurrencySymbol(o.Currency), Mode: mode}
	v.When = catalog.DisplayInZone(sum.Date.StartAt, sum.Event.Timezone)
	v.Expires = catalog.DisplayInZone(o.ExpiresAt, sum.Event.Timezone)
	v.CanPay = mode == "pay" && h.Payments != nil && o.PaymentURL != nil
	switch mode {
	case "paid", "failed", "expired", "review":
		v.Back = checkout.PartnerReturnURL(o, checkout.StatusAt(o, h.Now()))
	}
	if o.TicketsToken != nil {
		v.TicketsURL = tickets.URL(h.Checkout.Config.PublicBaseURL, *o.TicketsToken)
		v.Emailed = o.TicketsEmailStatus != store.TicketsEmailNotSent
	}
	// The pay form is answered with a redirect to the provider's page.
	var to string
	if o.PaymentURL != nil {
		to = *o.PaymentURL
	}
	if err := page.Render(w, http.StatusOK, v, webpage.FormAction(to)); err != nil {
		h.Log.ErrorContext(r.Context(), "hosted checkout", "error", err)
	}
}

// modeOf says what the page shows for an order's state: an order past its
// expiry shows as expired before the sweep records it.
func (h *Handler) modeOf(o *store.Order) string {
	if o.RefundReview {
		return "review"
	}
	if status := checkout.StatusAt(o, h.Now()); status != store.OrderPending {
		return status
	}
	return "pay"
}

func (h *Handler) load(w http.ResponseWriter, r *http.Request) (*checkout.Summary, bool) {
	ref := chi.URLParam(r, "reference")
	if checkout.ReferenceEnvironment(ref) != store.EnvLive {
		notFound(w)
		return nil, false
	}
	sum, err := h.Checkout.Summarize(r.Context(), ref)
	if apperr.CodeOf(err) == apperr.OrderNotFound {
		notFound(w)
		return nil, false
	}
	if err != nil {
		h.fail(w, r, err)
		return nil, false
	}
	return sum, true
}

func (h *Handler) show(w http.ResponseWriter, r *http.Request) {
	if sum, ok := h.load(w, r); ok {
		h.render(w, r, sum, h.modeOf(sum.Order))
	}
}

// pay hands the buyer to the provider's payment page.
func (h *Handler) pay(w http.ResponseWriter, r *http.Request) {
	sum, ok := h.load(w, r)
	if !ok {
		return
	}
	o := sum.Order
	if h.modeOf(o) != "pay" || o.PaymentURL == nil {
		http.Redirect(w, r, "/checkout/"+o.Reference, http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, *o.PaymentURL, http.StatusSeeOther)
}

// back is the return page: it asks the provider where the payment stands
// and applies a confirmed outcome before showing it.
func (h *Handler) back(w http.ResponseWriter, r *http.Request) {
	sum, ok := h.load(w, r)
	if !ok {
		return
	}
	o := sum.Order
	if o.Status == store.OrderPending && h.Payments != nil && o.PaymentReference != nil {
		st, err := h.Payments.Verify(r.Context(), *o.PaymentReference)
		if err != nil {
			h.Log.WarnContext(r.Context(), "payment verification failed", "order", o.Reference, "error", err)
		} else if _, err := h.Checkout.ConfirmPayment(r.Context(), st); err != nil {
			h.fail(w, r, err)
			return
		}
		if sum, ok = h.load(w, r); !ok {
			return
		}
	}
	mode := h.modeOf(sum.Order)
	if mode == "pay" {
		mode = "waiting"
	}
	h.render(w, r, sum, mode)
}

// callback receives the provider's signed notification of a payment.
func (h *Handler) callback(w http.ResponseWriter, r *http.Request) {
	if h.Payments == nil || chi.URLParam(r, "provider") != h.Payments.Name() {
		http.Error(w, "unknown payment provider", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	st, err := h.Payments.ParseCallback(r.Header, body)
	if errors.Is(err, payments.ErrForged) {
		h.Log.WarnContext(r.Context(), "refused a payment callback with a bad signature", "provider", h.Payments.Name())
		http.Error(w, "signature does not match", http.StatusUnauthorized)
		return
	}
	if err != nil {
		http.Error(w, "malformed callback", http.StatusBadRequest)
		return
	}
	if st != nil {
		if _, err := h.Checkout.ConfirmPayment(r.Context(), st); err != nil && apperr.CodeOf(err) != apperr.OrderNotFound {
			h.fail(w, r, err) // 5xx: the provider retries
			return
		}
	}
	if rc, ok := h.Payments.(payments.RefundCallbacks); ok && st == nil && h.Refunds != nil {
		// A refund's news: the provider's list of the payment's refunds
		// settles them (the callback itself is only the prompt).
		n, err := rc.ParseRefundCallback(r.Header, body)
		if err != nil {
			http.Error(w, "malformed callback", http.StatusBadRequest)
			return
		}
		if n != nil {
			if err := h.Refunds.Reconcile(r.Context(), *n); err != nil {
				h.fail(w, r, err) // 5xx: the provider retries
				return
			}
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	webpage.Fail(w, r, h.Log, "hosted checkout", err)
}

func notFound(w http.ResponseWriter) {
	webpage.NotFound(w, "This checkout does not exist. Start again from the seller's site.")
}
