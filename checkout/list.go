package checkout

import (
	"context"
	"slices"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// Paging limits of the order list and the changes feed
// (spec/fulfilment.md section 5).
const (
	DefaultOrdersLimit  = 20
	DefaultChangesLimit = 100
	MaxOrdersLimit      = 100
)

// listedStatuses are the statuses an order list may be filtered by: every
// status an order is stored with.
var listedStatuses = []string{store.OrderPending, store.OrderPaid, store.OrderCompleted, store.OrderFailed, store.OrderExpired}

// OrdersRequest is a page of the order list as a client asked for it, on
// either API. Empty strings and nil pointers were not given.
type OrdersRequest struct {
	Status      string
	EventID     *int
	EventdateID *int
	Limit       *int
	// Cursor is a cursor an earlier page handed out: the page starts
	// after its order.
	Cursor string
}

// OrdersPage is one page of the order list.
type OrdersPage struct {
	Orders []*OrderView
	// Cursors[i] is the cursor of Orders[i]: a page asked for after it
	// starts with the order that follows.
	Cursors []string
	// Limit is the page size used.
	Limit int
	// HasMore reports that older orders follow the page.
	HasMore bool
}

// NextCursor is the cursor of the page's last order when more follow, and
// nil on the last page.
func (p *OrdersPage) NextCursor() *string {
	if !p.HasMore || len(p.Cursors) == 0 {
		return nil
	}
	return &p.Cursors[len(p.Cursors)-1]
}

// Orders returns a page of the calling app's orders in its key's
// environment, newest first (created_at, then reference, descending).
// Pages are cut by keyset cursors, so orders created while a client pages
// never shift the pages after its cursor, and a page costs the same at any
// depth; every order is read now, never from a cache. status is one of
// pending, paid, completed, failed, expired; event_id and eventdate_id are
// positive integers; limit is 1 to 100 (default 20); cursor is one an
// earlier page of this list handed out.
// Errors: validation_failed, details keyed status, event_id, eventdate_id,
// limit and cursor.
func (s *Service) Orders(ctx context.Context, c Caller, r OrdersRequest) (*OrdersPage, error) {
	d := apperr.Details{}
	f := store.OrderFilter{AppID: c.AppID, Environment: c.Environment, Status: r.Status}
	if r.Status != "" && !slices.Contains(listedStatuses, r.Status) {
		d.Add("status", "must be one of pending, paid, completed, failed, expired")
	}
	f.EventID = optionalID(d, "event_id", r.EventID)
	f.EventDateID = optionalID(d, "eventdate_id", r.EventdateID)
	limit := pageLimit(d, "limit", r.Limit, DefaultOrdersLimit)
	if r.Cursor != "" {
		k, ok := decodeOrderCursor(r.Cursor)
		if !ok {
			d.Add("cursor", "is not a cursor of this list")
		}
		f.After = &k
	}
	if err := apperr.Validation(d); err != nil {
		return nil, err
	}
	f.Limit = limit + 1 // one more tells whether more follow
	orders, err := store.ListOrders(ctx, s.DB, f)
	if err != nil {
		return nil, err
	}
	p := &OrdersPage{Limit: limit}
	if len(orders) > limit {
		orders, p.HasMore = orders[:limit], true
	}
	if p.Orders, err = s.Views(ctx, s.DB, orders); err != nil {
		return nil, err
	}
	p.Cursors = make([]string, len(orders))
	for i, o := range orders {
		p.Cursors[i] = encodeOrderCursor(o.Key())
	}
	return p, nil
}

// optionalID reads an optional id filter: nil is 0 (any); anything below
// 1 is a problem of field name.
func optionalID(d apperr.Details, name string, v *int) int64 {
	if v == nil {
		return 0
	}
	if *v < 1 {
		d.Add(name, "must be a positive integer")
	}
	return int64(*v)
}

// pageLimit reads a page size: nil is def; it must be 1 to MaxOrdersLimit.
func pageLimit(d apperr.Details, name string, v *int, def int) int {
	if v == nil {
		return def
	}
	if *v < 1 || *v > MaxOrdersLimit {
		d.Add(name, "must be between 1 and 100")
		return def
	}
	return *v
}
