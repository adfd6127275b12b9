// Package rest serves the /api/v1 contract of spec/ticketing-api.md as thin
// adapters: each handler decodes the request, calls the resolver method
// GraphQL calls, and renders the spec's JSON. No business rule lives here.
package rest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/resolvers"
	"github.com/go-chi/chi/v5"
)

// Handler serves the REST API.
type Handler struct {
	Resolver *resolvers.Resolver
	Log      *slog.Logger
}

// Routes registers the /api/v1 routes on r (already mounted at /api/v1 and
// behind authentication), with spec-shaped 404 and 405 answers.
func (h *Handler) Routes(r chi.Router) {
	r.Get("/events", h.listEvents)
	r.Get("/events/{id}", h.getEvent)
	r.Get("/events/{id}/dates", h.listEventDates)
	r.Get("/event-dates/{id}/tickets", h.listTickets)
	r.Post("/checkout-sessions", h.createCheckoutSession)
	r.Post("/checkout-sessions/{reference}/expire", h.expireCheckoutSession)
	r.Get("/orders", h.listOrders)
	r.Get("/orders/{reference}", h.getOrder)
	r.Post("/orders/{reference}/refunds", h.createRefund)
	r.Get("/orders/{reference}/refunds", h.listOrderRefunds)
	r.Get("/refunds/{id}", h.getRefund)
	r.Get("/order-changes", h.orderChanges)
	r.Post("/check-ins", h.checkIn)
	r.Get("/check-ins/stats", h.checkInStats)
	r.Post("/webhook-endpoints", h.createWebhookEndpoint)
	r.Get("/webhook-endpoints", h.listWebhookEndpoints)
	r.Get("/webhook-endpoints/{id}", h.getWebhookEndpoint)
	r.Patch("/webhook-endpoints/{id}", h.updateWebhookEndpoint)
	r.Delete("/webhook-endpoints/{id}", h.deleteWebhookEndpoint)
	r.Post("/webhook-endpoints/{id}/rotate-secret", h.rotateWebhookEndpointSecret)
	r.Post("/webhook-endpoints/{id}/recover", h.recoverWebhookEndpoint)
	r.Get("/webhook-events", h.listWebhookEvents)
	r.Get("/webhook-events/{id}", h.getWebhookEvent)
	r.Post("/webhook-events/{id}/redeliver", h.redeliverWebhookEvent)
	r.Get("/check-ins/manifest", h.checkInManifest)
	r.Post("/check-ins/batch", h.checkInBatch)
	r.NotFound(h.notFound)
	r.MethodNotAllowed(h.methodNotAllowed)
}

// errorBody is the spec's error object, with the meta checkout adds.
type errorBody struct {
	Error errorJSON `json:"error"`
	Meta  any       `json:"meta,omitempty"`
}

type errorJSON struct {
	Code    apperr.Code    `json:"code"`
	Message string         `json:"message"`
	Details apperr.Details `json:"details,omitempty"`
}

// WriteError renders err as {error: {code, message, details?}} with its
// status. Errors that are not *apperr.Error are logged and read as
// internal_error, revealing nothing.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var meta any
	if isCheckoutCreate(r) {
		// Every checkout answer carries meta.status_code, also when it is
		// refused before the handler (authentication, limits, body size).
		meta = statusMeta{apperr.From(err).Status()}
	}
	writeError(w, r, log, err, meta)
}

func isCheckoutCreate(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	// A refund is created like a checkout session, and answers like one.
	return p == "/api/v1/checkout-sessions" || (strings.HasPrefix(p, "/api/v1/orders/") && strings.HasSuffix(p, "/refunds"))
}

// writeError renders err with an optional meta object; a RetryAfter on the
// error becomes the Retry-After header.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error, meta any) {
	ae := apperr.From(err)
	if ae.Status() >= 500 && log != nil {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	writeJSON(w, ae.Status(), errorBody{Error: errorJSON{Code: ae.Code, Message: ae.Message, Details: ae.Details}, Meta: meta})
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, h.Log, err)
}

// NotFound answers an unknown route with 404 not_found.
func NotFound(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, nil, apperr.New(apperr.NotFound, "No route matches %s %s.", r.Method, r.URL.Path))
}

// MethodNotAllowed answers a known route with a wrong method with 405
// method_not_allowed and an Allow header listing the methods it takes.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.Routes != nil {
		var allowed []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if rctx.Routes.Match(chi.NewRouteContext(), m, r.URL.Path) {
				allowed = append(allowed, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
	}
	WriteError(w, r, nil, apperr.New(apperr.MethodNotAllowed, "Method %s is not allowed on %s.", r.Method, r.URL.Path))
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request)         { NotFound(w, r) }
func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request) { MethodNotAllowed(w, r) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := encodeJSON(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal_error","message":"Internal error."}}`+"\n")
	}
	writeBody(w, status, b)
}

// encodeJSON is the JSON of every answer: HTML characters as they are, a
// newline at the end.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeBody answers with b, JSON made by encodeJSON; b may be shared with
// other answers (it is only read).
func writeBody(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// query reads typed query parameters, collecting problems as validation
// details. The query string is parsed once, when the query is made.
type query struct {
	v       url.Values
	details apperr.Details
}

func newQuery(r *http.Request) *query { return &query{v: r.URL.Query()} }

// get is a parameter's first value; "" when absent.
func (q *query) get(name string) string { return q.v.Get(name) }

// problem records that parameter name is invalid.
func (q *query) problem(name, msg string) {
	if q.details == nil {
		q.details = apperr.Details{}
	}
	q.details.Add(name, msg)
}

// int reads an integer parameter; nil when absent. Its range is the
// rule's business (catalog), not the adapter's.
func (q *query) int(name string) *int {
	s := q.get(name)
	if s == "" {
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		q.problem(name, "must be a positive integer")
		return nil
	}
	return &v
}

func (q *query) bool(name string) bool {
	s := q.get(name)
	if s == "" {
		return false
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		q.problem(name, "must be true or false")
	}
	return v
}

// optBool reads a boolean parameter; nil when absent.
func (q *query) optBool(name string) *bool {
	if q.get(name) == "" {
		return nil
	}
	v := q.bool(name)
	return &v
}

func (q *query) err() error { return apperr.Validation(q.details) }

// pathID reads an integer path parameter; anything else is notFound.
func pathID(r *http.Request, notFound *apperr.Error) (int, error) {
	v, err := strconv.Atoi(chi.URLParam(r, "id"))
	if err != nil || v < 1 {
		return 0, notFound
	}
	return v, nil
}
