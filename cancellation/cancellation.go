// Package cancellation cancels an event date (docs/spec/refunds.md section
// 5): the date stops selling at once, and a durable job, run by the
// servers, expires its pending checkouts and, when asked, refunds each of
// its paid and completed orders in full, through the refund rule a
// partner's refund follows. The job is resumable: which orders still need
// a refund is read from the database each time, and each order's refund
// is made under an idempotency key of its own, so a crash of any instance
// at any moment loses nothing and doubles nothing.
package cancellation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// MaxReason bounds the operator's reason.
const MaxReason = 500

// Service cancels dates and works their cancellations.
type Service struct {
	DB      *store.DB
	Orders  *checkout.Service
	Refunds *refunds.Service
	Now     func() time.Time
	// Enqueue inserts, in the cancellation's transaction, the job that runs
	// Work on a server (the outbox); nil leaves the work to a later call.
	Enqueue func(ctx context.Context, tx bun.Tx, dateID int64) error
}

// Status is where a cancellation stands: the JSON of `boxoffice dates
// cancel` and `dates cancel-status`.
type Status struct {
	EventdateID int64  `json:"eventdate_id"`
	Cancelled   bool   `json:"cancelled"`
	Reason      string `json:"reason"`
	// Orders counts the date's paid and completed orders to refund,
	// Refunded those whose refund exists, Pending and Failed their
	// refunds' money status.
	Orders   int `json:"orders"`
	Refunded int `json:"refunded"`
	Pending  int `json:"pending"`
	Failed   int `json:"failed"`
	// Done is set once every order has its refund (without refunds: once
	// no checkout of the date is pending).
	Done bool `json:"done"`
}

// Cancel cancels a date with the operator's reason and, with refund, has
// every paid and completed order of it refunded: the flag and the job in
// one transaction. Cancelling again changes nothing but may add refund,
// and answers the same. Errors: validation_failed (the reason),
// event_date_not_found.
func (s *Service) Cancel(ctx context.Context, dateID int64, reason string, refund bool) (*Status, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return nil, apperr.Invalid("reason", "is required: say why the date is cancelled")
	case len([]rune(reason)) > MaxReason:
		return nil, apperr.Invalid("reason", "is longer than %d characters", MaxReason)
	case strings.ContainsFunc(reason, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }):
		return nil, apperr.Invalid("reason", "must not contain control or format characters")
	}
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := store.CancelEventDate(ctx, tx, dateID, reason, refund, s.Now().UTC()); err != nil {
			return err
		}
		if s.Enqueue != nil {
			return s.Enqueue(ctx, tx, dateID)
		}
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.EventDateNotFound, "There is no event date %d.", dateID)
	}
	if err != nil {
		return nil, err
	}
	return s.Status(ctx, dateID)
}

// Status reads where a date's cancellation stands. Errors:
// event_date_not_found.
func (s *Service) Status(ctx context.Context, dateID int64) (*Status, error) {
	d, err := store.EventDateByID(ctx, s.DB, dateID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.EventDateNotFound, "There is no event date %d.", dateID)
	}
	if err != nil {
		return nil, err
	}
	st := &Status{EventdateID: dateID, Cancelled: !d.CancelledAt.IsZero()}
	if d.CancelReason != nil {
		st.Reason = *d.CancelReason
	}
	c, err := store.CountCancellation(ctx, s.DB, dateID)
	if err != nil {
		return nil, err
	}
	st.Orders, st.Refunded, st.Pending, st.Failed = c.Orders, c.Refunded, c.Pending, c.Failed
	if st.Cancelled {
		pending, err := store.PendingOrdersOfDate(ctx, s.DB, dateID, 1)
		if err != nil {
			return nil, err
		}
		st.Done = len(pending) == 0 && (!d.CancelRefund || st.Refunded >= st.Orders)
	}
	return st, nil
}

// Unfinished returns the cancelled dates whose work is not done: a
// pending checkout left, or with refunds asked for, an order still
// without its refund.
func (s *Service) Unfinished(ctx context.Context) ([]int64, error) {
	ds, err := store.CancelledDates(ctx, s.DB)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, d := range ds {
		pending, err := store.PendingOrdersOfDate(ctx, s.DB, d.ID, 1)
		if err != nil {
			return nil, err
		}
		left := len(pending) > 0
		if !left && d.CancelRefund {
			os, err := store.OrdersToRefundOfDate(ctx, s.DB, d.ID, 0, 1)
			if err != nil {
				return nil, err
			}
			left = len(os) > 0
		}
		if left {
			out = append(out, d.ID)
		}
	}
	return out, nil
}

// batch is how many orders Work reads at once.
const batch = 100

// Work does a cancelled date's work: its pending checkouts expire (each
// with its usual order.expired), then, when refunds were asked for, each
// paid and completed order still without its event_cancelled refund is
// refunded in full, at most budget orders per call. more reports that
// orders are left for the next call. Orders are read anew each call,
// so the work resumes wherever a crash stopped it.
func (s *Service) Work(ctx context.Context, dateID int64, budget int) (more bool, err error) {
	d, err := store.EventDateByID(ctx, s.DB, dateID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && d.CancelledAt.IsZero()) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for {
		pending, err := store.PendingOrdersOfDate(ctx, s.DB, dateID, batch)
		if err != nil {
			return false, err
		}
		for _, o := range pending {
			if _, err := s.Orders.ExpireOrder(ctx, o.Reference); err != nil && apperr.CodeOf(err) != apperr.OrderNotPending {
				return false, err
			}
		}
		if len(pending) < batch {
			break
		}
	}
	if !d.CancelRefund {
		return false, nil
	}
	var after int64
	for done := 0; done < budget; {
		os, err := store.OrdersToRefundOfDate(ctx, s.DB, dateID, after, min(batch, budget-done))
		if err != nil || len(os) == 0 {
			return false, err
		}
		for i := range os {
			if err := s.refund(ctx, &os[i]); err != nil {
				return false, err
			}
			after = os[i].ID
			done++
		}
	}
	os, err := store.OrdersToRefundOfDate(ctx, s.DB, dateID, after, 1)
	return len(os) > 0, err
}

// refund refunds one order of a cancelled date in full: its tickets that
// are not void and what is left of its total, with reason
// event_cancelled, as the order's app would ask. The key names the order
// and what its refunds took when it was read: a retry after a crash asks
// again under the same key (one refund, whichever instance asks), and a
// refund the partner made in the meantime gives a new key, so a refusal
// saved under the old one is not the last word.
func (s *Service) refund(ctx context.Context, o *store.Order) error {
	reason := store.RefundEventCancelled
	amount := catalog.FormatAmount(o.TotalAmount - o.RefundCommitted)
	in := &refunds.Input{Reason: &reason, Amount: &amount}
	c := checkout.Caller{AppID: o.AppID, Environment: o.Environment}
	key := fmt.Sprintf("event-cancelled-%d-%d", o.ID, o.RefundCommitted)
	_, _, err := s.Refunds.Create(ctx, c, refunds.Request{Reference: o.Reference, Key: key, Input: in})
	if err == nil {
		return nil
	}
	switch apperr.CodeOf(err) {
	case apperr.TicketCheckedIn:
		// A ticket inside the venue cannot be cancelled: the money is
		// returned all the same.
		in.Tickets = []*string{}
		_, _, err = s.Refunds.Create(ctx, c, refunds.Request{Reference: o.Reference, Key: key + "-money", Input: in})
		if err != nil && (apperr.CodeOf(err).Transient() || apperr.CodeOf(err) == apperr.Internal) {
			return err
		}
		return nil
	case apperr.IdempotencyInProgress, apperr.RefundExceedsBalance, apperr.TicketAlreadyVoid:
		// Another instance is refunding it, or a partner's refund changed
		// it since it was read: the next pass reads it again.
		return nil
	default:
		if apperr.CodeOf(err).Transient() || apperr.CodeOf(err) == apperr.Internal {
			return err
		}
		return nil
	}
}
