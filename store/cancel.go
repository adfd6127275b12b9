package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// EventDateByID returns the date with this id. Errors: ErrNotFound.
func EventDateByID(ctx context.Context, db bun.IDB, id int64) (*EventDate, error) {
	d := new(EventDate)
	if err := db.NewSelect().Model(d).Where("d.id = ?", id).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	d.CancelledAt = utc(d.CancelledAt)
	return d, nil
}

// CancelEventDate cancels a date, once: the first cancellation's instant
// and reason stay; refund, once asked for, stays asked for. It returns the
// date as it now stands. Errors: ErrNotFound.
func CancelEventDate(ctx context.Context, db bun.IDB, id int64, reason string, refund bool, now time.Time) (*EventDate, error) {
	res, err := db.NewUpdate().Model((*EventDate)(nil)).
		Set("cancelled_at = COALESCE(cancelled_at, ?)", now).
		Set("cancel_reason = COALESCE(cancel_reason, ?)", reason).
		Set("cancel_refund = cancel_refund OR ?", refund).
		Set("updated_at = ?", now).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return nil, translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, ErrNotFound
	}
	// The flag on each ticket type: the stock write of a checkout that
	// commits after this refuses it (HoldStock).
	if _, err := db.NewUpdate().Model((*Ticket)(nil)).Set("date_cancelled = ?", true).Set("updated_at = ?", now).
		Where("event_date_id = ? AND NOT date_cancelled", id).Exec(ctx); err != nil {
		return nil, translate(err)
	}
	return EventDateByID(ctx, db, id)
}

// CancelledDates returns every cancelled date.
func CancelledDates(ctx context.Context, db bun.IDB) ([]EventDate, error) {
	var ds []EventDate
	err := db.NewSelect().Model(&ds).Where("d.cancelled_at IS NOT NULL").Order("d.id").Scan(ctx)
	return ds, translate(err)
}

// PendingOrdersOfDate returns up to limit pending orders of a date, oldest
// first, from orders_date_sale_idx.
func PendingOrdersOfDate(ctx context.Context, db bun.IDB, dateID int64, limit int) ([]Order, error) {
	var os []Order
	err := db.NewSelect().Model(&os).Where("o.event_date_id = ? AND o.status = ?", dateID, OrderPending).
		Order("o.id").Limit(int64(limit)).Scan(ctx)
	return os, translate(err)
}

// refundable keeps the orders a cancellation refunds: something is left
// to return (money, or a ticket that is not void), or it was refunded for
// the cancellation already. An order refunded whole before the date was
// cancelled has nothing left and is not counted.
func refundable(q *bun.SelectQuery) *bun.SelectQuery {
	return q.Where(`(o.refund_committed < o.total_amount
		OR EXISTS (SELECT 1 FROM issued_tickets it WHERE it.order_id = o.id AND it.status <> ?)
		OR EXISTS (SELECT 1 FROM refunds rf WHERE rf.order_id = o.id AND rf.reason = ?))`, TicketVoid, RefundEventCancelled)
}

// OrdersToRefundOfDate returns up to limit paid and completed orders of a
// date with id above after, something left to refund and no
// event_cancelled refund, in id order: the next batch a cancellation's
// refunds walk.
func OrdersToRefundOfDate(ctx context.Context, db bun.IDB, dateID, after int64, limit int) ([]Order, error) {
	var os []Order
	err := refundable(db.NewSelect().Model(&os).
		Where("o.event_date_id = ? AND o.status IN (?, ?) AND o.id > ?", dateID, OrderPaid, OrderCompleted, after)).
		Where("NOT EXISTS (SELECT 1 FROM refunds rf WHERE rf.order_id = o.id AND rf.reason = ?)", RefundEventCancelled).
		Order("o.id").Limit(int64(limit)).Scan(ctx)
	for i := range os {
		os[i].CreatedAt, os[i].UpdatedAt = os[i].CreatedAt.UTC(), os[i].UpdatedAt.UTC()
	}
	return os, translate(err)
}

// CancellationCounts are a cancelled date's orders as its refunds stand.
type CancellationCounts struct {
	// Orders are the date's paid and completed orders with something to
	// refund, or refunded for the cancellation already.
	Orders int
	// Refunded are those with an event_cancelled refund; Pending and
	// Failed count those refunds by money status.
	Refunded, Pending, Failed int
}

// CountCancellation reads a date's CancellationCounts in two statements.
func CountCancellation(ctx context.Context, db bun.IDB, dateID int64) (CancellationCounts, error) {
	var c CancellationCounts
	n, err := refundable(db.NewSelect().Model((*Order)(nil)).
		Where("o.event_date_id = ? AND o.status IN (?, ?)", dateID, OrderPaid, OrderCompleted)).Count(ctx)
	if err != nil {
		return c, translate(err)
	}
	c.Orders = int(n)
	var rows []struct {
		Status string `bun:"status"`
		N      int    `bun:"n"`
	}
	err = db.NewRaw(`SELECT rf.status, count(DISTINCT rf.order_id) AS n FROM refunds rf JOIN orders o ON o.id = rf.order_id
		WHERE o.event_date_id = ? AND o.status IN (?, ?) AND rf.reason = ? GROUP BY rf.status`,
		dateID, OrderPaid, OrderCompleted, RefundEventCancelled).Scan(ctx, &rows)
	for _, r := range rows {
		c.Refunded += r.N
		switch r.Status {
		case RefundPending:
			c.Pending = r.N
		case RefundFailed:
			c.Failed = r.N
		}
	}
	return c, translate(err)
}
