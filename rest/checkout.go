package rest

import (
	"io"
	"net/http"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/go-chi/chi/v5"
)

// maxCheckoutBody bounds a checkout request body; the largest valid one
// (20 items, 4 KB of metadata, long URLs) is far smaller.
const maxCheckoutBody = 64 << 10

type statusMeta struct {
	StatusCode int `json:"status_code"`
}

// createCheckoutSession is POST /api/v1/checkout-sessions (spec 4.5): the
// Idempotency-Key header and the decoded JSON body go to the resolver the
// GraphQL mutation calls, which checks the header before it reports what
// decoding found.
func (h *Handler) createCheckoutSession(w http.ResponseWriter, r *http.Request) {
	in, problems := decodeJSON(w, r, maxCheckoutBody, decodeCheckout)
	sess, replayed, err := h.Resolver.CreateCheckoutSession(r.Context(), r.Header.Get("Idempotency-Key"), in, problems)
	markReplayed(w, replayed)
	if err != nil {
		WriteError(w, r, h.Log, err)
		return
	}
	writeJSON(w, http.StatusCreated, struct {
		Data *checkout.Session `json:"data"`
		Meta statusMeta        `json:"meta"`
	}{sess, statusMeta{http.StatusCreated}})
}

// expireCheckoutSession is POST
// /api/v1/checkout-sessions/{order_reference}/expire (spec/fulfilment.md
// section 5). It takes no body.
func (h *Handler) expireCheckoutSession(w http.ResponseWriter, r *http.Request) {
	o, err := h.Resolver.ExpireCheckoutSession(r.Context(), chi.URLParam(r, "reference"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data *checkout.OrderView `json:"data"`
		Meta statusMeta          `json:"meta"`
	}{o, statusMeta{http.StatusOK}})
}

// getOrder is GET /api/v1/orders/{reference} (spec 4.6).
func (h *Handler) getOrder(w http.ResponseWriter, r *http.Request) {
	o, err := h.Resolver.Order(r.Context(), chi.URLParam(r, "reference"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data *checkout.OrderView `json:"data"`
	}{o})
}

// decodeJSON reads a create request's JSON body with decode, bounded to
// max bytes; a body declared as anything but JSON is a problem of its own.
// Either way the problems are the resolver's to report, after the
// Idempotency-Key header.
func decodeJSON[T any](w http.ResponseWriter, r *http.Request, max int64, decode func(io.Reader) (*T, apperr.Details)) (*T, apperr.Details) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return nil, apperr.Details{"body": {"Content-Type must be application/json"}}
	}
	return decode(http.MaxBytesReader(w, r.Body, max))
}

// markReplayed sets Idempotent-Replayed on an answer saved for the key.
func markReplayed(w http.ResponseWriter, replayed bool) {
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
}
