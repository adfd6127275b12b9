package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// OrderKey is an order's place in an order listing, newest first:
// CreatedAt, then Reference, both descending. It is what a cursor holds.
type OrderKey struct {
	CreatedAt time.Time
	Reference string
}

// Key returns the order's place in an order listing.
func (o *Order) Key() OrderKey { return OrderKey{CreatedAt: o.CreatedAt, Reference: o.Reference} }

// OrderFilter selects a page of an app's orders in one environment.
type OrderFilter struct {
	AppID       int64
	Environment string
	// Status, EventID and EventDateID keep only matching orders; the zero
	// value keeps all.
	Status      string
	EventID     int64
	EventDateID int64
	// After, when set, starts the page after the order at this place.
	After *OrderKey
	Limit int
}

// ListOrders returns up to f.Limit orders f keeps, newest first
// (created_at, then reference, descending), in one statement. Every
// combination of filters has an index whose order is the listing's (see
// the order sync migration), so a page costs the same at any depth.
func ListOrders(ctx context.Context, db bun.IDB, f OrderFilter) ([]*Order, error) {
	orders := []*Order{}
	q := db.NewSelect().Model(&orders).
		Where("o.app_id = ?", f.AppID).Where("o.environment = ?", f.Environment)
	if f.Status != "" {
		q = q.Where("o.status = ?", f.Status)
	}
	if f.EventID != 0 {
		q = q.Where("o.event_id = ?", f.EventID)
	}
	if f.EventDateID != 0 {
		q = q.Where("o.event_date_id = ?", f.EventDateID)
	}
	if f.After != nil {
		q = q.Where("(o.created_at, o.reference) < (?, ?)", f.After.CreatedAt.UTC(), f.After.Reference)
	}
	err := q.Order("o.created_at DESC", "o.reference DESC").Limit(int64(f.Limit)).Scan(ctx)
	if err != nil {
		return nil, translate(err)
	}
	for _, o := range orders {
		o.CreatedAt = o.CreatedAt.UTC()
	}
	return orders, nil
}

// OrderSearch selects orders across apps, for operators and support.
type OrderSearch struct {
	// AppID keeps one app's orders; 0 keeps every app's.
	AppID int64
	// Environment keeps one environment's orders; "" keeps both.
	Environment string
	// Status keeps the orders of one status; "" keeps all.
	Status string
	// RefundReview keeps only orders flagged for refund review.
	RefundReview bool
	// RefundFailed keeps only orders with a failed refund.
	RefundFailed bool
	// ReferenceContains keeps orders whose reference contains it; "" keeps
	// all. It sifts the ranges the other filters read.
	ReferenceContains string
	// CustomerEmail keeps orders whose buyer gave this email address, in
	// any case; "" keeps all. It needs AppID: one app's orders are read
	// from orders_buyer_email_idx, one range per environment.
	CustomerEmail string
	// Limit is how many orders, at most, to return.
	Limit int
}

// errEmailNeedsApp refuses a search by buyer's email across apps, which no
// index serves.
var errEmailNeedsApp = errors.New("store: a search by buyer's email needs an app")

// buyerEmailIs is the condition orders_buyer_email_idx serves, written as
// the index's expression so both databases match it.
const buyerEmailIs = "lower(o.customer_email) = lower(?)"

// orderStatuses are the statuses an order is stored with.
var orderStatuses = []string{OrderPending, OrderPaid, OrderCompleted, OrderFailed, OrderExpired}

// SearchOrders returns up to s.Limit orders s keeps, newest first
// (created_at, then reference, descending). Every way of asking reads
// index ranges already in listing order, each at most s.Limit entries
// long: flagged orders come from the partial index of refund reviews (the
// other filters sift that short list); one app's orders from the order
// list's indexes, one range per environment; every app's from
// orders_search_idx, one range per environment and status. The ranges are
// merged here; a buyer's orders come from orders_buyer_email_idx, one
// range per environment, the status sifted. So a search costs at most ten
// short index ranges, whatever the number of orders.
func SearchOrders(ctx context.Context, db bun.IDB, s OrderSearch) ([]*Order, error) {
	if s.CustomerEmail != "" && s.AppID == 0 {
		return nil, errEmailNeedsApp
	}
	query := func(env, status string) *bun.SelectQuery {
		q := db.NewSelect()
		if s.AppID != 0 {
			q = q.Where("o.app_id = ?", s.AppID)
		}
		if env != "" {
			q = q.Where("o.environment = ?", env)
		}
		switch {
		case status != "" && s.CustomerEmail != "":
			// Sifted from the buyer's few orders: written so that no
			// planner reads every order of the status instead.
			q = q.Where("o.status || '' = ?", status)
		case status != "":
			q = q.Where("o.status = ?", status)
		}
		if s.CustomerEmail != "" {
			q = q.Where(buyerEmailIs, s.CustomerEmail)
		}
		return q.Order("o.created_at DESC", "o.reference DESC").Limit(int64(s.Limit))
	}
	contains := func(q *bun.SelectQuery) *bun.SelectQuery {
		if s.ReferenceContains != "" {
			q = q.Where(`o.reference LIKE ? ESCAPE '\'`, "%"+likeEscaper.Replace(s.ReferenceContains)+"%")
		}
		return q
	}
	// sift adds the email to a search that reads another index's short
	// list, written so that no planner reads the buyer's orders instead.
	sift := func(q *bun.SelectQuery) *bun.SelectQuery {
		if s.CustomerEmail != "" {
			q = q.Where("lower(o.customer_email) || '' = lower(?)", s.CustomerEmail)
		}
		return contains(q)
	}
	var queries []*bun.SelectQuery
	envs, statuses := []string{s.Environment}, []string{s.Status}
	if s.Environment == "" {
		envs = []string{EnvTest, EnvLive}
	}
	if s.Status == "" && s.AppID == 0 {
		statuses = orderStatuses
	}
	switch {
	case s.RefundReview:
		// The partial index's own predicate, written as it is, so both
		// databases see the index applies; the other filters are written
		// as expressions no index can serve, so no planner reads the far
		// longer ranges of another index (every paid order of an app) to
		// find the few flagged ones.
		q := db.NewSelect().Where("refund_review")
		if s.AppID != 0 {
			q = q.Where("o.app_id + 0 = ?", s.AppID)
		}
		if s.Environment != "" {
			q = q.Where("o.environment || '' = ?", s.Environment)
		}
		if s.Status != "" {
			q = q.Where("o.status || '' = ?", s.Status)
		}
		queries = append(queries, sift(q).Order("o.created_at DESC", "o.reference DESC").Limit(int64(s.Limit)))
	case s.RefundFailed:
		// Failed refunds are exceptions, read from their partial index
		// (refunds_failed_idx); the orders they name are sifted as above.
		failed := db.NewSelect().Table("refunds").Column("order_id").Where("status = ?", RefundFailed)
		if s.Environment != "" {
			failed = failed.Where("environment = ?", s.Environment)
		}
		q := db.NewSelect().Where("o.id IN (?)", failed)
		if s.AppID != 0 {
			q = q.Where("o.app_id + 0 = ?", s.AppID)
		}
		if s.Status != "" {
			q = q.Where("o.status || '' = ?", s.Status)
		}
		queries = append(queries, sift(q).Order("o.created_at DESC", "o.reference DESC").Limit(int64(s.Limit)))
	default:
		for _, env := range envs {
			for _, status := range statuses {
				queries = append(queries, contains(query(env, status)))
			}
		}
	}
	var out []*Order
	for _, q := range queries {
		var page []*Order
		if err := q.Model(&page).Scan(ctx); err != nil {
			return nil, translate(err)
		}
		out = append(out, page...)
	}
	for _, o := range out {
		o.CreatedAt = o.CreatedAt.UTC()
	}
	slices.SortFunc(out, func(a, b *Order) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.Reference, a.Reference)
	})
	return out[:min(len(out), s.Limit)], nil
}

// RefundReviewCounts returns how many orders are flagged for refund review
// in each environment (an environment with none is absent), from the
// partial index of refund reviews.
func RefundReviewCounts(ctx context.Context, db bun.IDB) (map[string]int, error) {
	var rows []struct {
		Environment string `bun:"environment"`
		N           int    `bun:"n"`
	}
	err := db.NewSelect().Model((*Order)(nil)).ColumnExpr("o.environment, count(*) AS n").
		Where("refund_review").Group("o.environment").Scan(ctx, &rows)
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Environment] = r.N
	}
	return out, nil
}
