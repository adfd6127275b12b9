package cancellation_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/cancellation"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

func ptr[T any](v T) *T { return &v }

type bundle struct {
	db      *store.DB
	f       *checkouttest.Fixture
	refunds *refunds.Service
	svc     *cancellation.Service
	keys    atomic.Int64
	jobs    atomic.Int64
}

func setup(t *testing.T, db *store.DB) *bundle {
	t.Helper()
	f := checkouttest.MustNew(t, db)
	b := &bundle{db: db, f: f}
	b.refunds = &refunds.Service{DB: db, Orders: f.Service, Idempotency: f.Service.Idempotency, Webhooks: f.Service.Webhooks,
		Now: f.Service.Now, Payments: f.Service.Payments,
		EnqueueSend: func(context.Context, bun.Tx, int64) error { return nil }}
	b.svc = &cancellation.Service{DB: db, Orders: f.Service, Refunds: b.refunds, Now: f.Service.Now,
		Enqueue: func(context.Context, bun.Tx, int64) error { b.jobs.Add(1); return nil }}
	return b
}

// order makes an order of qty tickets of a demo ticket in env, paid unless
// pending is set.
func (b *bundle) order(t *testing.T, env, date, ticket string, qty int, pending bool) *store.Order {
	return b.orderOf(t, env, "DEMO-HIGHLIFE", date, ticket, qty, pending)
}

func (b *bundle) orderOf(t *testing.T, env, event, date, ticket string, qty int, pending bool) *store.Order {
	t.Helper()
	ctx := context.Background()
	in := &checkout.Input{
		EventID: ptr(b.f.ID(t, event)), EventdateID: ptr(b.f.ID(t, date)),
		Items:      []*checkout.Item{{TicketID: ptr(b.f.ID(t, ticket)), Quantity: ptr(qty)}},
		Customer:   &checkout.Customer{Name: ptr("Ama Mensah"), Email: ptr("ama@example.com"), Phone: ptr("0241234567")},
		SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
	}
	c := checkout.Caller{AppID: b.f.Demo.App.App.ID, Environment: env}
	sess, _, err := b.f.Service.Create(ctx, c, checkout.Request{Key: fmt.Sprintf("o-%d", b.keys.Add(1)), Input: in})
	require.NoError(t, err)
	o, err := store.OrderByReference(ctx, b.db, sess.OrderReference)
	require.NoError(t, err)
	if !pending && env == store.EnvTest {
		_, _, err = b.f.Service.Settle(ctx, o.Reference, store.OrderPaid)
		require.NoError(t, err)
	}
	if !pending && env == store.EnvLive {
		_, err = b.f.Service.ConfirmPayment(ctx, &payments.Status{Reference: *o.PaymentReference, State: payments.Paid,
			Amount: o.TotalAmount, Currency: o.Currency})
		require.NoError(t, err)
	}
	o, err = store.OrderByReference(ctx, b.db, sess.OrderReference)
	require.NoError(t, err)
	return o
}

// cancelledRefunds returns each order's event_cancelled refunds.
func (b *bundle) cancelledRefunds(t *testing.T, os ...*store.Order) map[string][]store.Refund {
	t.Helper()
	out := map[string][]store.Refund{}
	for _, o := range os {
		rs, err := store.RefundsOfOrders(context.Background(), b.db, []int64{o.ID})
		require.NoError(t, err)
		for _, r := range rs[o.ID] {
			if r.Reason == store.RefundEventCancelled {
				out[o.Reference] = append(out[o.Reference], r)
			}
		}
	}
	return out
}

// events counts an order's webhook events of type typ.
func (b *bundle) events(t *testing.T, o *store.Order, typ string) int {
	t.Helper()
	n, err := b.db.NewSelect().Model((*store.WebhookEvent)(nil)).Where("order_id = ? AND type = ?", o.ID, typ).
		Count(context.Background())
	require.NoError(t, err)
	return int(n)
}

// TestCancel: a cancelled date's pending checkouts expire and each of its
// paid orders, of both environments, gets exactly one full refund with
// reason event_cancelled, however the work is split, repeated or raced;
// another date's orders are untouched.
func TestCancel(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		b := setup(t, db)
		date := int64(b.f.ID(t, "DEMO-HIGHLIFE-1"))
		var paid []*store.Order
		for i := range 4 {
			paid = append(paid, b.order(t, store.EnvTest, "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", i+1, false))
		}
		live := b.order(t, store.EnvLive, "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 2, false)
		paid = append(paid, live)
		// A partner refunded 50.00 of this one already: 190.00 is left.
		partly := paid[1]
		_, _, err := b.refunds.Create(ctx, checkout.Caller{AppID: partly.AppID, Environment: partly.Environment},
			refunds.Request{Reference: partly.Reference, Key: "goodwill", Input: &refunds.Input{Tickets: []*string{}, Amount: ptr("50.00")}})
		require.NoError(t, err)
		// Refunded whole before: nothing is left, so it is not counted.
		whole := b.order(t, store.EnvTest, "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 1, false)
		_, _, err = b.refunds.Create(ctx, checkout.Caller{AppID: whole.AppID, Environment: whole.Environment},
			refunds.Request{Reference: whole.Reference, Key: "whole"})
		require.NoError(t, err)
		pending := b.order(t, store.EnvLive, "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 1, true)
		other := b.orderOf(t, store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1, false)

		_, err = b.svc.Cancel(ctx, date, "  ", true)
		require.Equal(t, apperr.ValidationFailed, apperr.CodeOf(err))
		_, err = b.svc.Cancel(ctx, 999999, "Storm", true)
		require.Equal(t, apperr.EventDateNotFound, apperr.CodeOf(err))

		st, err := b.svc.Cancel(ctx, date, "Storm warning", true)
		require.NoError(t, err)
		require.Equal(t, &cancellation.Status{EventdateID: date, Cancelled: true, Reason: "Storm warning", Orders: 5}, st)
		again, err := b.svc.Cancel(ctx, date, "Another reason", true)
		require.NoError(t, err)
		require.Equal(t, st, again, "cancelling again answers the same")

		// Two instances at the work at once, a few orders each call.
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for more := true; more; {
					var err error
					more, err = b.svc.Work(ctx, date, 2)
					require.NoError(t, err)
				}
			})
		}
		wg.Wait()

		got := b.cancelledRefunds(t, append(paid, whole, other)...)
		require.Len(t, got, 5, "every paid order with something left, and no other")
		for _, o := range paid {
			require.Len(t, got[o.Reference], 1, o.Reference)
			require.Equal(t, 1, b.events(t, o, "refund.created")-map[bool]int{true: 1}[o == partly], o.Reference)
			fresh, err := store.OrderByID(ctx, db, o.ID)
			require.NoError(t, err)
			require.Equal(t, fresh.TotalAmount, fresh.RefundCommitted, "refunded in full: %s", o.Reference)
			for _, tk := range mustTickets(t, db, o) {
				require.Equal(t, store.TicketVoid, tk.Status)
			}
		}
		require.Equal(t, int64(19000), got[partly.Reference][0].Amount, "what was left")
		require.Equal(t, store.RefundPending, got[live.Reference][0].Status, "live money moves at the provider")
		expired, err := store.OrderByID(ctx, db, pending.ID)
		require.NoError(t, err)
		require.Equal(t, store.OrderExpired, expired.Status)
		require.Equal(t, 1, b.events(t, pending, "order.expired"))

		st, err = b.svc.Status(ctx, date)
		require.NoError(t, err)
		require.Equal(t, &cancellation.Status{EventdateID: date, Cancelled: true, Reason: "Storm warning", Orders: 5, Refunded: 5,
			Pending: 1, Done: true}, st)
		more, err := b.svc.Work(ctx, date, 10)
		require.NoError(t, err)
		require.False(t, more)
		require.Len(t, b.cancelledRefunds(t, paid...), 5, "work done again does nothing")

		other, err = store.OrderByID(ctx, db, other.ID)
		require.NoError(t, err)
		require.Empty(t, b.cancelledRefunds(t, other), "another date's order is untouched")
	})
}

func mustTickets(t *testing.T, db *store.DB, o *store.Order) []store.IssuedTicket {
	t.Helper()
	ts, err := store.IssuedTicketsOfOrder(context.Background(), db, o.ID)
	require.NoError(t, err)
	return ts
}
