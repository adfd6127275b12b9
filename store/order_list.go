package store

import (
	"context"
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
