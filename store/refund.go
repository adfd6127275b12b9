package store

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Refund statuses (docs/spec/refunds.md section 1).
const (
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
)

// Refund reasons (docs/spec/refunds.md section 1).
const (
	RefundRequestedByCustomer = "requested_by_customer"
	RefundEventCancelled      = "event_cancelled"
	RefundDuplicate           = "duplicate"
	RefundFraudulent          = "fraudulent"
	RefundOther               = "other"
)

// Refund is money returned on an order, and the tickets it cancelled
// (those whose RefundID is its ID). Amount is in minor units.
type Refund struct {
	bun.BaseModel `bun:"table:refunds,alias:rf"`

	ID            int64          `bun:"id,pk,autoincrement"`
	PublicID      string         `bun:"public_id,notnull"`
	OrderID       int64          `bun:"order_id,notnull"`
	AppID         int64          `bun:"app_id,notnull"`
	Environment   string         `bun:"environment,notnull"`
	Amount        int64          `bun:"amount,notnull"`
	Currency      string         `bun:"currency,notnull"`
	Reason        string         `bun:"reason,notnull"`
	Status        string         `bun:"status,notnull"`
	FailureReason *string        `bun:"failure_reason"`
	Metadata      map[string]any `bun:"metadata,type:text,nullzero"`
	// Provider is the payment provider that returns the money (the one
	// that took the payment); nil when no money moves at a provider (a
	// test order, an amount of zero).
	Provider *string `bun:"provider"`
	// ProviderRefundID is the provider's id of the refund once it has
	// answered.
	ProviderRefundID *string `bun:"provider_refund_id"`
	// SentAt is when the last request to the provider began: recorded,
	// and committed, before the request is made, so that a request whose
	// outcome was lost is known to have been made.
	SentAt   time.Time `bun:"sent_at,nullzero"`
	Attempts int64     `bun:"attempts,notnull"`
	// EmailStatus is the buyer's refund email: nil when none is due (a
	// sandbox order, an app that sends no ticket emails), else
	// TicketsEmailQueued, TicketsEmailSent or TicketsEmailFailed.
	EmailStatus *string   `bun:"email_status"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
	UpdatedAt   time.Time `bun:"updated_at,notnull"`
}

// normalize reads r's instants in UTC (pgx reads them in time.Local).
func (r *Refund) normalize() {
	r.SentAt, r.CreatedAt, r.UpdatedAt = utc(r.SentAt), r.CreatedAt.UTC(), r.UpdatedAt.UTC()
}

// InsertRefund stores a refund and sets its id. Errors: ErrConflict when
// its public id is taken.
func InsertRefund(ctx context.Context, db bun.IDB, r *Refund) error {
	_, err := db.NewInsert().Model(r).Returning("id").Exec(ctx)
	return translate(err)
}

// RefundByPublicID returns the refund with this id (rfd_…). Errors:
// ErrNotFound.
func RefundByPublicID(ctx context.Context, db bun.IDB, publicID string) (*Refund, error) {
	r := new(Refund)
	if err := db.NewSelect().Model(r).Where("rf.public_id = ?", publicID).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	r.normalize()
	return r, nil
}

// RefundByID returns the refund with this id. Errors: ErrNotFound.
func RefundByID(ctx context.Context, db bun.IDB, id int64) (*Refund, error) {
	r := new(Refund)
	if err := db.NewSelect().Model(r).Where("rf.id = ?", id).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	r.normalize()
	return r, nil
}

// RefundsOfOrders returns the refunds of these orders, each order's oldest
// first, in one query.
func RefundsOfOrders(ctx context.Context, db bun.IDB, orderIDs []int64) (map[int64][]Refund, error) {
	out := make(map[int64][]Refund, len(orderIDs))
	if len(orderIDs) == 0 {
		return out, nil
	}
	var rs []Refund
	if err := db.NewSelect().Model(&rs).Where("rf.order_id IN (?)", bun.In(orderIDs)).
		Order("rf.order_id", "rf.id").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for _, r := range rs {
		r.normalize()
		out[r.OrderID] = append(out[r.OrderID], r)
	}
	return out, nil
}

// PendingRefundsOfOrder returns an order's refunds whose money is still on
// its way, oldest first.
func PendingRefundsOfOrder(ctx context.Context, db bun.IDB, orderID int64) ([]Refund, error) {
	var rs []Refund
	err := db.NewSelect().Model(&rs).Where("rf.order_id = ? AND rf.status = ?", orderID, RefundPending).
		Order("rf.id").Scan(ctx)
	for i := range rs {
		rs[i].normalize()
	}
	return rs, translate(err)
}

// TicketsOfRefunds returns the tickets these refunds cancelled, by refund
// and then position, in one query.
func TicketsOfRefunds(ctx context.Context, db bun.IDB, refundIDs []int64) (map[int64][]IssuedTicket, error) {
	out := make(map[int64][]IssuedTicket, len(refundIDs))
	if len(refundIDs) == 0 {
		return out, nil
	}
	var ts []IssuedTicket
	if err := db.NewSelect().Model(&ts).Where("it.refund_id IN (?)", bun.In(refundIDs)).
		Order("it.refund_id", "it.position").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for _, t := range ts {
		t.normalize()
		out[*t.RefundID] = append(out[*t.RefundID], t)
	}
	return out, nil
}

// LockTicketsOfOrder holds the rows of an order's tickets until the
// transaction ends, in id order. A door scan locks a ticket and then its
// order (TouchOrder); a refund that locked the order first and its tickets
// after would deadlock with it, so a refund takes the tickets first too.
// SQLite's transactions run one at a time and need no row locks.
func LockTicketsOfOrder(ctx context.Context, db bun.IDB, orderID int64) error {
	if db.Dialect().Name() != dialect.PG {
		return nil
	}
	var ids []int64
	err := db.NewRaw("SELECT id FROM issued_tickets WHERE order_id = ? ORDER BY id FOR UPDATE", orderID).Scan(ctx, &ids)
	return translate(err)
}

// LockOrder holds the order's row until the transaction ends, so that the
// refunds of one order are decided one transaction at a time (on
// PostgreSQL the update takes the row lock; SQLite's transactions already
// run one at a time), and returns it as it stands then. Errors:
// ErrNotFound.
func LockOrder(ctx context.Context, db bun.IDB, id int64) (*Order, error) {
	var os []Order
	err := db.NewRaw("UPDATE orders SET refund_committed = refund_committed WHERE id = ? RETURNING *", id).Scan(ctx, &os)
	if err != nil {
		return nil, translate(err)
	}
	if len(os) == 0 {
		return nil, ErrNotFound
	}
	o := &os[0]
	o.CreatedAt, o.UpdatedAt, o.ExpiresAt = o.CreatedAt.UTC(), o.UpdatedAt.UTC(), utc(o.ExpiresAt)
	o.TicketsEmailSentAt = utc(o.TicketsEmailSentAt)
	return o, nil
}

// CommitRefundAmount adds amount to what the order's refunds take, only if
// that stays within its total: the balance rule, decided by the database
// in one conditional write. It reports false, changing nothing, when the
// amount does not fit.
func CommitRefundAmount(ctx context.Context, db bun.IDB, orderID, amount int64) (bool, error) {
	res, err := db.NewUpdate().Model((*Order)(nil)).
		Set("refund_committed = refund_committed + ?", amount).
		Where("id = ? AND refund_committed + ? <= total_amount", orderID, amount).Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CommitReviewRefund records that a refund returns the payment an order's
// refund review is about: the flag is cleared (its note stays, the order's
// history) and the amount counts in refund_committed, in one conditional
// write on a flagged order that is neither paid nor completed. It reports
// false, changing nothing, when the order is not such an order any more
// (another refund settled the review first).
func CommitReviewRefund(ctx context.Context, db bun.IDB, orderID, amount int64) (bool, error) {
	res, err := db.NewUpdate().Model((*Order)(nil)).
		Set("refund_committed = refund_committed + ?", amount).Set("refund_review = ?", false).
		Where("id = ? AND refund_review = ? AND status NOT IN (?, ?)", orderID, true, OrderPaid, OrderCompleted).Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CancelTickets voids those of the tickets ids that are neither void nor
// inside, for the refund refundID with reason, and returns them by
// position. One conditional write: a ticket a door admits, or another
// refund cancels, in the meantime is left as it is, so a ticket is
// cancelled once and never both admitted and cancelled.
func CancelTickets(ctx context.Context, db bun.IDB, refundID int64, ids []int64, reason string, now time.Time) ([]IssuedTicket, error) {
	ts := []IssuedTicket{}
	if len(ids) == 0 {
		return ts, nil
	}
	_, err := db.NewUpdate().Model((*IssuedTicket)(nil)).
		Set("status = ?", TicketVoid).Set("voided_at = ?", now).Set("void_reason = ?", reason).
		Set("refund_id = ?", refundID).Set("updated_at = ?", now).
		Where("id IN (?)", bun.In(ids)).Where("status <> ?", TicketVoid).Where("NOT inside").
		Returning("*").Exec(ctx, &ts)
	if err != nil {
		return nil, translate(err)
	}
	slices.SortFunc(ts, func(a, b IssuedTicket) int { return cmp.Compare(a.Position, b.Position) })
	for i := range ts {
		ts[i].normalize()
	}
	return ts, nil
}

// ReleaseSold puts qty sold of a ticket back on sale (never below zero
// sold).
func ReleaseSold(ctx context.Context, db bun.IDB, ticketID, qty int64, now time.Time) error {
	_, err := db.NewUpdate().Model((*Ticket)(nil)).
		Set("sold = sold - ?", qty).Set("updated_at = ?", now).
		Where("id = ? AND sold >= ?", ticketID, qty).Exec(ctx)
	return translate(err)
}

// SettleRefund moves a pending refund to succeeded or failed, with why it
// failed and the provider's id when known, and moves the order's sums with
// it: a success adds the amount to refunded_amount, a failure gives it
// back to the refundable balance. It reports false, changing nothing,
// when the refund is not pending any more (settled already), so a refund
// is settled once however many callbacks and jobs report it.
func SettleRefund(ctx context.Context, db bun.IDB, r *Refund, status string, failure, providerID *string, now time.Time) (bool, error) {
	q := db.NewUpdate().Model((*Refund)(nil)).
		Set("status = ?", status).Set("failure_reason = ?", failure).Set("updated_at = ?", now).
		Where("id = ? AND status = ?", r.ID, RefundPending)
	if providerID != nil {
		q = q.Set("provider_refund_id = ?", *providerID)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	o := db.NewUpdate().Model((*Order)(nil)).Where("id = ?", r.OrderID)
	if status == RefundSucceeded {
		o = o.Set("refunded_amount = refunded_amount + ?", r.Amount)
	} else {
		// The payment of an order that was never paid came from a refund
		// review: it waits for review again.
		o = o.Set("refund_committed = refund_committed - ?", r.Amount).
			Set("refund_review = CASE WHEN status IN (?, ?) THEN refund_review ELSE ? END", OrderPaid, OrderCompleted, true)
	}
	_, err = o.Exec(ctx)
	return err == nil, translate(err)
}

// MarkRefundSent records, before a request to the provider, that one is
// being made: sent_at and one more attempt. It reports false when the
// refund is no longer pending.
func MarkRefundSent(ctx context.Context, db bun.IDB, id int64, now time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*Refund)(nil)).
		Set("sent_at = ?", now).Set("attempts = attempts + 1").Set("updated_at = ?", now).
		Where("id = ? AND status = ?", id, RefundPending).Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SetProviderRefundID records the provider's id of a pending refund.
func SetProviderRefundID(ctx context.Context, db bun.IDB, id int64, providerID string, now time.Time) error {
	_, err := db.NewUpdate().Model((*Refund)(nil)).
		Set("provider_refund_id = ?", providerID).Set("updated_at = ?", now).
		Where("id = ? AND status = ?", id, RefundPending).Exec(ctx)
	return translate(err)
}

// FailedRefundCounts returns how many refunds have failed, by environment
// (each environment present), read from refunds_failed_idx alone.
func FailedRefundCounts(ctx context.Context, db bun.IDB) (map[string]int64, error) {
	var rows []struct {
		Environment string `bun:"environment"`
		N           int64  `bun:"n"`
	}
	err := db.NewRaw("SELECT environment, count(*) AS n FROM refunds WHERE status = ? GROUP BY environment", RefundFailed).
		Scan(ctx, &rows)
	out := map[string]int64{EnvTest: 0, EnvLive: 0}
	for _, r := range rows {
		out[r.Environment] = r.N
	}
	return out, translate(err)
}

// SetRefundEmail records the outcome of a refund's email. The refund's
// updated_at stays: the email is not part of the refund partners see.
func SetRefundEmail(ctx context.Context, db bun.IDB, id int64, status string) error {
	_, err := db.NewUpdate().Model((*Refund)(nil)).Set("email_status = ?", status).Where("id = ?", id).Exec(ctx)
	return translate(err)
}
