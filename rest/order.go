package rest

import (
	"net/http"

	"github.com/boxoffice/boxoffice/checkout"
)

type ordersMeta struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// listOrders is GET /api/v1/orders (spec/fulfilment.md section 5).
func (h *Handler) listOrders(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	v := q.v
	req := checkout.OrdersRequest{
		Status: v.Get("status"), EventID: q.int("event_id"), EventdateID: q.int("eventdate_id"),
		Limit: q.int("limit"), Cursor: v.Get("cursor"),
	}
	if err := q.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	conn, err := h.Resolver.Orders(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	orders := make([]*checkout.OrderView, len(conn.Edges))
	for i, e := range conn.Edges {
		orders[i] = e.Node
	}
	meta := ordersMeta{Limit: conn.Limit, HasMore: conn.PageInfo.HasNextPage}
	if meta.HasMore {
		meta.NextCursor = conn.PageInfo.EndCursor
	}
	writeJSON(w, http.StatusOK, struct {
		Data []*checkout.OrderView `json:"data"`
		Meta ordersMeta            `json:"meta"`
	}{orders, meta})
}

// orderChanges is GET /api/v1/order-changes (spec/fulfilment.md section 5).
func (h *Handler) orderChanges(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	req := checkout.ChangesRequest{Since: q.get("since"), Limit: q.int("limit")}
	if err := q.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.Resolver.OrderChanges(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data []*checkout.OrderView `json:"data"`
		Meta any                   `json:"meta"`
	}{p.Nodes, struct {
		NextSince string `json:"next_since"`
		HasMore   bool   `json:"has_more"`
	}{p.NextSince, p.HasMore}})
}
