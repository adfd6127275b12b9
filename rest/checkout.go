package rest

import (
	"net/http"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/go-chi/chi/v5"
)

// maxCheckoutBody bounds a checkout request body; the largest valid one
// (20 items, 4 KB of metadata, long URLs) is far smaller.
const maxCheckoutBody = 64 << 10

type statusMeta struct {
	StatusCode int `json:"status_code"`
}

// createCheckoutSession is POST /api/v1/checkout-sessions (spec 4.5): the
// Idempotency-Key header and the JSON body go to the resolver the GraphQL
// mutation calls, which decides the order the two are checked in.
func (h *Handler) createCheckoutSession(w http.ResponseWriter, r *http.Request) {
	ctx, report := idempotency.WithReport(r.Context())
	r = r.WithContext(ctx)
	src := checkout.DecodeJSON(http.MaxBytesReader(w, r.Body, maxCheckoutBody))
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		src = func() (*checkout.Input, apperr.Details) {
			return nil, apperr.Details{"body": {"Content-Type must be application/json"}}
		}
	}
	sess, err := h.Resolver.CreateCheckoutSession(ctx, r.Header.Get("Idempotency-Key"), src)
	if report.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if err != nil {
		WriteError(w, r, h.Log, err)
		return
	}
	writeJSON(w, http.StatusCreated, struct {
		Data *checkout.Session `json:"data"`
		Meta statusMeta        `json:"meta"`
	}{sess, statusMeta{http.StatusCreated}})
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
