package rest

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/go-chi/chi/v5"
)

// maxRefundBody bounds a refund request body: 200 ticket ids and 4 KB of
// metadata fit many times over.
const maxRefundBody = 64 << 10

// createRefund is POST /api/v1/orders/{reference}/refunds: the
// Idempotency-Key header and the decoded JSON body go to the resolver the
// GraphQL mutation calls. An empty body is a refund of every ticket that
// is not void.
func (h *Handler) createRefund(w http.ResponseWriter, r *http.Request) {
	in, problems := decodeJSON(w, r, maxRefundBody, decodeRefund)
	v, replayed, err := h.Resolver.CreateRefund(r.Context(), chi.URLParam(r, "reference"), r.Header.Get("Idempotency-Key"), in, problems)
	markReplayed(w, replayed)
	if err != nil {
		WriteError(w, r, h.Log, err)
		return
	}
	writeJSON(w, http.StatusCreated, struct {
		Data *checkout.Refund `json:"data"`
		Meta statusMeta       `json:"meta"`
	}{v, statusMeta{http.StatusCreated}})
}

// listOrderRefunds is GET /api/v1/orders/{reference}/refunds.
func (h *Handler) listOrderRefunds(w http.ResponseWriter, r *http.Request) {
	vs, err := h.Resolver.OrderRefunds(r.Context(), chi.URLParam(r, "reference"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data []*checkout.Refund `json:"data"`
	}{vs})
}

// getRefund is GET /api/v1/refunds/{id}.
func (h *Handler) getRefund(w http.ResponseWriter, r *http.Request) {
	v, err := h.Resolver.Refund(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data *checkout.Refund `json:"data"`
	}{v})
}

// decodeRefund reads a refund's JSON body, with the problems found keyed
// by field path, as decodeCheckout does; an empty body is an empty
// request (every field is optional).
func decodeRefund(body io.Reader) (*refunds.Input, apperr.Details) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, apperr.Details{"body": {bodyProblem(err)}}
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return &refunds.Input{}, nil
	}
	obj, d := decodeObject(strings.NewReader(string(raw)))
	if obj == nil {
		return nil, d
	}
	in := &refunds.Input{
		Amount:   jsonString(d, obj, "amount", "amount"),
		Reason:   jsonString(d, obj, "reason", "reason"),
		Metadata: obj["metadata"],
	}
	if raw, ok := obj["tickets"]; ok && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			d.Add("tickets", "must be an array of ticket ids")
		} else {
			in.Tickets = make([]*string, len(list))
			for i, x := range list {
				switch s := x.(type) {
				case string:
					in.Tickets[i] = &s
				default:
					d.Add("tickets."+strconv.Itoa(i), "must be a ticket id (itk_…)")
				}
			}
		}
	}
	return in, d
}
