package refunds

import (
	"context"
	"errors"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
)

// OfOrder returns the refunds of an order of the calling app, oldest
// first: GET /orders/{reference}/refunds.
// Errors: environment_mismatch, order_not_found.
func (s *Service) OfOrder(ctx context.Context, c checkout.Caller, ref string) ([]*checkout.Refund, error) {
	o, err := s.Orders.Order(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	return s.viewsOf(ctx, o)
}

// viewsOf returns an order's refunds as the API shows them, in two
// queries.
func (s *Service) viewsOf(ctx context.Context, o *store.Order) ([]*checkout.Refund, error) {
	rs, err := store.RefundsOfOrders(ctx, s.DB, []int64{o.ID})
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(rs[o.ID]))
	for i, r := range rs[o.ID] {
		ids[i] = r.ID
	}
	ts, err := store.TicketsOfRefunds(ctx, s.DB, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*checkout.Refund, len(rs[o.ID]))
	for i := range rs[o.ID] {
		r := &rs[o.ID][i]
		out[i] = checkout.NewRefund(r, o.Reference, ts[r.ID])
	}
	return out, nil
}

// Get returns a refund of the calling app: GET /refunds/{id}.
// Errors: refund_not_found (no refund of the app has the id),
// environment_mismatch (the app's refund of the other environment).
func (s *Service) Get(ctx context.Context, c checkout.Caller, id string) (*checkout.Refund, error) {
	notFound := apperr.New(apperr.RefundNotFound, "Refund %s was not found for this app.", id)
	if !plausibleID(id) {
		return nil, notFound
	}
	r, err := store.RefundByPublicID(ctx, s.DB, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.AppID != c.AppID) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if r.Environment != c.Environment {
		return nil, apperr.New(apperr.EnvironmentMismatch,
			"Refund %s belongs to the %s environment; use a %s key to read it.", id, r.Environment, r.Environment)
	}
	o, err := store.OrderByID(ctx, s.DB, r.OrderID)
	if err != nil {
		return nil, err
	}
	ts, err := store.TicketsOfRefunds(ctx, s.DB, []int64{r.ID})
	if err != nil {
		return nil, err
	}
	return checkout.NewRefund(r, o.Reference, ts[r.ID]), nil
}

// plausibleID reports whether id has the shape of a refund id (newID):
// anything else is not found without a query.
func plausibleID(id string) bool {
	rest, ok := strings.CutPrefix(id, "rfd_")
	if !ok || len(rest) != 26 {
		return false
	}
	for _, c := range rest {
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}
