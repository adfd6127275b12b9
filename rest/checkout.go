package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// createCheckoutSession is POST /api/v1/checkout-sessions (spec 4.5): it
// decodes the body into the mutation's input and calls the mutation's
// resolver; the Idempotency-Key header is its idempotencyKey.
func (h *Handler) createCheckoutSession(w http.ResponseWriter, r *http.Request) {
	ctx, report := idempotency.WithReport(r.Context())
	r = r.WithContext(ctx)
	key := r.Header.Get("Idempotency-Key")
	fail := func(err error) {
		if report.Replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		WriteError(w, r, h.Log, err)
	}
	// The header is checked before the body, in DESIGN.md's order.
	if err := idempotency.CheckKey(key); err != nil {
		fail(err)
		return
	}
	var in checkout.Input
	if err := decodeJSON(w, r, maxCheckoutBody, &in); err != nil {
		fail(err)
		return
	}
	sess, err := h.Resolver.Mutation().CreateCheckoutSession(ctx, in, &key)
	if err != nil {
		fail(err)
		return
	}
	if report.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusCreated, struct {
		Data *checkout.Session `json:"data"`
		Meta statusMeta        `json:"meta"`
	}{sess, statusMeta{http.StatusCreated}})
}

// getOrder is GET /api/v1/orders/{reference} (spec 4.6).
func (h *Handler) getOrder(w http.ResponseWriter, r *http.Request) {
	o, err := h.Resolver.Query().Order(r.Context(), chi.URLParam(r, "reference"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data *checkout.OrderView `json:"data"`
	}{o})
}

// decodeJSON reads one JSON object of at most limit bytes into v. Any
// failure is validation_failed naming the field at fault.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return apperr.Validation(apperr.Details{"body": {"Content-Type must be application/json"}})
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data")
	}
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return apperr.Validation(apperr.Details{typeErr.Field: {"must be " + jsonKind(typeErr.Type.String())}})
	case errors.As(err, &typeErr):
		return apperr.Validation(apperr.Details{"body": {"must be a JSON object"}})
	case errors.As(err, &maxErr):
		return apperr.Validation(apperr.Details{"body": {"must be at most " + strconv.FormatInt(limit, 10) + " bytes"}})
	case errors.Is(err, io.EOF):
		return apperr.Validation(apperr.Details{"body": {"is required"}})
	default:
		return apperr.Validation(apperr.Details{"body": {fmt.Sprintf("is not valid JSON (%s)", strings.TrimPrefix(err.Error(), "json: "))}})
	}
}

// jsonKind names the JSON type a Go type expects, for messages.
func jsonKind(goType string) string {
	goType = strings.TrimLeft(goType, "*[]")
	switch {
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "map"), strings.Contains(goType, "."):
		return "an object"
	}
	return "of the right type"
}
