package checkout_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// testClock is the services' clock. A hook set with beforeNextReading runs
// once, the next time the clock is read: that is where a test puts work
// that must happen between a service's read of an order and its write.
type testClock struct {
	mu     sync.Mutex
	now    time.Time
	onRead func()
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	now, hook := c.now, c.onRead
	c.onRead = nil
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	return now
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *testClock) beforeNextReading(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onRead = fn
}

// lifecycleBundle is a checkout service over a database holding the demo
// catalog and app; webhooks are recorded but not delivered.
type lifecycleBundle struct {
	db    *store.DB
	svc   *checkout.Service
	clock *testClock
	start time.Time
	demo  *seed.Result
	keys  int
}

func setupLifecycle(t *testing.T, db *store.DB) *lifecycleBundle {
	t.Helper()
	start := time.Now().UTC().Truncate(time.Second)
	clock := &testClock{now: start}
	demo, err := seed.Demo(context.Background(), db, &provision.Service{DB: db, Now: clock.Now, Password: checkouttest.CheapPasswords}, start)
	require.NoError(t, err)
	hooks := &webhook.Service{DB: db, Now: clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Enqueue: func(context.Context, bun.Tx, []webhook.Delivery) error { return nil }}
	svc := &checkout.Service{DB: db, Idempotency: &idempotency.Service{DB: db, Now: clock.Now}, Webhooks: hooks,
		Tickets:  checkouttest.NewTickets(db, clock.Now),
		Payments: devpay.New("http://boxoffice.test", db, clock.Now), Now: clock.Now, Config: checkout.DefaultConfig()}
	return &lifecycleBundle{db: db, svc: svc, clock: clock, start: start, demo: demo}
}

// order creates an order at the bundle's start time: a live or sandbox
// order of qty tickets of a demo ticket.
func (b *lifecycleBundle) order(t *testing.T, env, event, date, ticket string, qty int) *store.Order {
	t.Helper()
	b.clock.set(b.start)
	b.keys++
	in := b.cart(event, date, ticket, qty)
	in.Customer.Email = ptr(fmt.Sprintf("ama%d@example.com", b.keys))
	sess, _, err := b.create(env, checkout.Request{Key: fmt.Sprintf("lifecycle-%d", b.keys), Input: in})
	require.NoError(t, err)
	return b.reload(t, sess.OrderReference)
}

// paidOrder is a pending live order of two Regular Highlife tickets.
func (b *lifecycleBundle) paidOrder(t *testing.T) *store.Order {
	t.Helper()
	return b.order(t, store.EnvLive, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 2)
}

func (b *lifecycleBundle) reload(t *testing.T, ref string) *store.Order {
	t.Helper()
	o, err := store.OrderByReference(context.Background(), b.db, ref)
	require.NoError(t, err)
	return o
}

func (b *lifecycleBundle) stock(t *testing.T, ticket string) (held, sold int64) {
	t.Helper()
	ts, err := store.TicketsByIDs(context.Background(), b.db, []int64{b.demo.Catalog.Tickets[ticket]})
	require.NoError(t, err)
	require.Len(t, ts, 1)
	return ts[0].Held, ts[0].Sold
}

// webhooks returns the types of the webhook events of an order, in order.
func (b *lifecycleBundle) webhooks(t *testing.T, o *store.Order) []string {
	t.Helper()
	var types []string
	require.NoError(t, b.db.NewSelect().Model((*store.WebhookEvent)(nil)).Column("type").
		Where("order_id = ?", o.ID).Order("sequence").Scan(context.Background(), &types))
	return types
}

// pastExpiry moves the clock past an order's expires_at.
func (b *lifecycleBundle) pastExpiry(o *store.Order) { b.clock.set(o.ExpiresAt.Add(time.Second)) }

// paid is the provider's confirmation of the full payment of o.
func paid(o *store.Order) *payments.Status {
	return &payments.Status{Reference: o.Reference, State: payments.Paid, Amount: o.TotalAmount, Currency: o.Currency}
}

func TestConfirmPayment_LosesRaceWithExpirySweep(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setupLifecycle(t, db)
		ctx := context.Background()
		heldBefore, soldBefore := b.stock(t, "DEMO-HIGHLIFE-REG")
		o := b.paidOrder(t)
		b.clock.set(o.ExpiresAt.Add(-time.Minute)) // the payment arrives in time

		// The sweep, whose clock is past expires_at, runs between
		// ConfirmPayment's read of the order (still pending) and its write:
		// ConfirmPayment reads the clock after the order, to judge it, and
		// before it writes, so a hook on that reading lands in the window.
		sweeper := &checkout.Service{DB: b.svc.DB, Webhooks: b.svc.Webhooks, Tickets: b.svc.Tickets,
			Payments: b.svc.Payments, Config: b.svc.Config,
			Now: func() time.Time { return o.ExpiresAt.Add(time.Second) }}
		swept := 0
		b.clock.beforeNextReading(func() {
			n, err := sweeper.ExpireDue(ctx)
			require.NoError(t, err)
			swept = n
		})

		got, err := b.svc.ConfirmPayment(ctx, paid(o))
		require.NoError(t, err)
		require.Equal(t, 1, swept, "the sweep won the race")
		require.Equal(t, store.OrderExpired, got.Status)
		require.True(t, got.RefundReview, "a payment for an order that expired under it is flagged, not dropped")
		require.Equal(t, fmt.Sprintf("payment %s confirmed while the order was expired", o.Reference), *got.ReviewNote)

		stored := b.reload(t, o.Reference)
		require.Equal(t, store.OrderExpired, stored.Status)
		require.True(t, stored.RefundReview)
		require.Equal(t, []string{webhook.OrderExpired}, b.webhooks(t, o))
		held, sold := b.stock(t, "DEMO-HIGHLIFE-REG")
		require.Equal(t, heldBefore, held, "the hold is released once")
		require.Equal(t, soldBefore, sold, "nothing is sold")
	})
}

// TestTransitions is the rule of an order's lifecycle, through both ways in:
// ConfirmPayment (a provider's confirmation, real money) and Settle (the
// sandbox page and the expiry sweep).
func TestTransitions(t *testing.T) {
	t.Parallel()
	type want struct {
		status   string
		review   string // the refund-review note; "" when not flagged
		webhooks []string
		held     int64 // the order's tickets still held, after
		sold     int64 // the order's tickets sold, after
	}
	confirm := func(state payments.State) func(*lifecycleBundle, *store.Order) (*store.Order, error) {
		return func(b *lifecycleBundle, o *store.Order) (*store.Order, error) {
			st := paid(o)
			st.State = state
			return b.svc.ConfirmPayment(context.Background(), st)
		}
	}
	settle := func(status string) func(*lifecycleBundle, *store.Order) (*store.Order, error) {
		return func(b *lifecycleBundle, o *store.Order) (*store.Order, error) {
			got, _, err := b.svc.Settle(context.Background(), o.Reference, status)
			return got, err
		}
	}
	// before brings a new pending live order to a status before the test acts.
	before := func(status string) func(*testing.T, *lifecycleBundle) *store.Order {
		return func(t *testing.T, b *lifecycleBundle) *store.Order {
			o := b.paidOrder(t)
			if status != store.OrderPending {
				_, changed, err := b.svc.Settle(context.Background(), o.Reference, status)
				require.NoError(t, err)
				require.True(t, changed)
			}
			return o
		}
	}
	late := func(t *testing.T, b *lifecycleBundle) *store.Order {
		o := b.paidOrder(t)
		b.pastExpiry(o)
		return o
	}
	sandbox := func(t *testing.T, b *lifecycleBundle) *store.Order {
		return b.order(t, store.EnvTest, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 2)
	}
	lateSandbox := func(t *testing.T, b *lifecycleBundle) *store.Order {
		o := sandbox(t, b)
		b.pastExpiry(o)
		return o
	}
	liveFree := func(t *testing.T, b *lifecycleBundle) *store.Order {
		return b.order(t, store.EnvLive, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2)
	}
	confirmedWhile := func(status string) string { return "payment %s confirmed while the order was " + status }
	paidHooks, failedHooks, expiredHooks := []string{webhook.OrderPaid}, []string{webhook.OrderFailed}, []string{webhook.OrderExpired}

	tests := []struct {
		name   string
		ticket string
		order  func(*testing.T, *lifecycleBundle) *store.Order
		act    func(*lifecycleBundle, *store.Order) (*store.Order, error)
		want   want
	}{
		{"OKPendingPaid", "DEMO-HIGHLIFE-REG", before(store.OrderPending), confirm(payments.Paid),
			want{status: store.OrderPaid, webhooks: paidHooks, sold: 2}},
		{"OKPendingDeclined", "DEMO-HIGHLIFE-REG", before(store.OrderPending), confirm(payments.Declined),
			want{status: store.OrderFailed, webhooks: failedHooks}},
		{"PendingStillPending", "DEMO-HIGHLIFE-REG", before(store.OrderPending), confirm(payments.Pending),
			want{status: store.OrderPending, held: 2}},
		{"PastExpiryPaidExpiresAndFlags", "DEMO-HIGHLIFE-REG", late, confirm(payments.Paid),
			want{status: store.OrderExpired, review: confirmedWhile("expired"), webhooks: expiredHooks}},
		{"PastExpiryDeclinedExpires", "DEMO-HIGHLIFE-REG", late, confirm(payments.Declined),
			want{status: store.OrderExpired, webhooks: expiredHooks}},
		{"FailedPaidFlags", "DEMO-HIGHLIFE-REG", before(store.OrderFailed), confirm(payments.Paid),
			want{status: store.OrderFailed, review: confirmedWhile("failed"), webhooks: failedHooks}},
		{"ExpiredPaidFlags", "DEMO-HIGHLIFE-REG", before(store.OrderExpired), confirm(payments.Paid),
			want{status: store.OrderExpired, review: confirmedWhile("expired"), webhooks: expiredHooks}},
		{"CompletedPaidFlags", "DEMO-CHALEWOTE-1-GA", liveFree, confirm(payments.Paid),
			want{status: store.OrderCompleted, review: confirmedWhile("completed"), webhooks: []string{webhook.OrderCompleted}, sold: 2}},
		{"PaidPaidIsNoOp", "DEMO-HIGHLIFE-REG", before(store.OrderPaid), confirm(payments.Paid),
			want{status: store.OrderPaid, webhooks: paidHooks, sold: 2}},
		{"PaidDeclinedIsNoOp", "DEMO-HIGHLIFE-REG", before(store.OrderPaid), confirm(payments.Declined),
			want{status: store.OrderPaid, webhooks: paidHooks, sold: 2}},
		{"FailedDeclinedIsNoOp", "DEMO-HIGHLIFE-REG", before(store.OrderFailed), confirm(payments.Declined),
			want{status: store.OrderFailed, webhooks: failedHooks}},
		{"WrongAmountFlagsAndWaits", "DEMO-HIGHLIFE-REG", before(store.OrderPending),
			func(b *lifecycleBundle, o *store.Order) (*store.Order, error) {
				return b.svc.ConfirmPayment(context.Background(), &payments.Status{Reference: o.Reference, State: payments.Paid, Amount: 100, Currency: "GHS"})
			},
			want{status: store.OrderPending, review: "payment %s confirmed for GHS 1.00, the order is GHS 240.00", held: 2}},
		{"SettlePaid", "DEMO-HIGHLIFE-REG", before(store.OrderPending), settle(store.OrderPaid),
			want{status: store.OrderPaid, webhooks: paidHooks, sold: 2}},
		{"SettlePastExpiryCanOnlyExpire", "DEMO-HIGHLIFE-REG", late, settle(store.OrderPaid),
			want{status: store.OrderExpired, webhooks: expiredHooks}},
		{"SettlePaidIsOnce", "DEMO-HIGHLIFE-REG", before(store.OrderPaid), settle(store.OrderExpired),
			want{status: store.OrderPaid, webhooks: paidHooks, sold: 2}},
		{"SandboxPaid", "DEMO-HIGHLIFE-REG", sandbox, settle(store.OrderPaid),
			want{status: store.OrderPaid, webhooks: paidHooks}},
		{"SandboxExpiredEarly", "DEMO-HIGHLIFE-REG", sandbox, settle(store.OrderExpired),
			want{status: store.OrderExpired, webhooks: expiredHooks}},
		{"SandboxPastExpiryPaidExpires", "DEMO-HIGHLIFE-REG", lateSandbox, settle(store.OrderPaid),
			want{status: store.OrderExpired, webhooks: expiredHooks}},
		{"SandboxPastExpiryFailedExpires", "DEMO-HIGHLIFE-REG", lateSandbox, settle(store.OrderFailed),
			want{status: store.OrderExpired, webhooks: expiredHooks}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				b := setupLifecycle(t, db)
				heldBefore, soldBefore := b.stock(t, tt.ticket)
				o := tt.order(t, b)
				got, err := tt.act(b, o)
				require.NoError(t, err)

				stored := b.reload(t, o.Reference)
				for _, o := range []*store.Order{got, stored} {
					require.Equal(t, tt.want.status, o.Status)
					require.Equal(t, tt.want.review != "", o.RefundReview, "refund review")
					if tt.want.review != "" {
						require.Equal(t, fmt.Sprintf(tt.want.review, stored.Reference), *o.ReviewNote)
					}
				}
				require.Equal(t, tt.want.webhooks, b.webhooks(t, o))
				held, sold := b.stock(t, tt.ticket)
				if o.HoldsStock {
					require.Equal(t, tt.want.held, held-heldBefore, "held")
				}
				require.Equal(t, tt.want.sold, sold-soldBefore, "sold")
			})
		})
	}

	t.Run("ErrOrderNotFound", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupLifecycle(t, db)
			_, err := b.svc.ConfirmPayment(context.Background(), &payments.Status{Reference: "ord_nope", State: payments.Paid, Amount: 1, Currency: "GHS"})
			require.Equal(t, apperr.OrderNotFound, apperr.CodeOf(err))
			require.Equal(t, "Order ord_nope was not found.", apperr.From(err).Message)
			_, _, err = b.svc.Settle(context.Background(), "sbx_nope", store.OrderPaid)
			require.Equal(t, apperr.OrderNotFound, apperr.CodeOf(err))
			require.Equal(t, "Order sbx_nope was not found.", apperr.From(err).Message)
		})
	})
	t.Run("ErrNotAnOutcome", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupLifecycle(t, db)
			o := b.paidOrder(t)
			for _, status := range []string{store.OrderCompleted, store.OrderPending, "refunded"} {
				_, _, err := b.svc.Settle(context.Background(), o.Reference, status)
				require.Equal(t, apperr.Internal, apperr.CodeOf(err), "a programming error, never shown to a client")
				require.EqualError(t, err, fmt.Sprintf("checkout: cannot settle an order as %q", status))
			}
			require.Equal(t, store.OrderPending, b.reload(t, o.Reference).Status)
		})
	})
}
