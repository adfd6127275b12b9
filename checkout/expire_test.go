package checkout_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/stretchr/testify/require"
)

// caller is the demo app with a key of env.
func (b *lifecycleBundle) caller(env string) checkout.Caller {
	return checkout.Caller{AppID: b.demo.App.App.ID, Environment: env}
}

// TestExpire: ending an abandoned checkout, through the lifecycle's rule.
func TestExpire(t *testing.T) {
	t.Parallel()
	sandbox := func(t *testing.T, b *lifecycleBundle) *store.Order {
		return b.order(t, store.EnvTest, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 2)
	}
	pending := func(t *testing.T, b *lifecycleBundle) *store.Order { return b.paidOrder(t) }
	settled := func(status string) func(*testing.T, *lifecycleBundle) *store.Order {
		return func(t *testing.T, b *lifecycleBundle) *store.Order {
			o := b.paidOrder(t)
			_, changed, err := b.svc.Settle(context.Background(), o.Reference, status)
			require.NoError(t, err)
			require.True(t, changed)
			return o
		}
	}
	tests := []struct {
		name  string
		order func(*testing.T, *lifecycleBundle) *store.Order
		// twice expires the order a first time before the call tested.
		twice    bool
		late     bool // the clock is past the order's expires_at, the sweep has not run
		env      string
		code     apperr.Code
		message  string // %s is the reference
		webhooks []string
	}{
		{name: "OKPendingLive", order: pending, webhooks: []string{webhook.OrderExpired}},
		{name: "OKPendingSandbox", order: sandbox, env: store.EnvTest, webhooks: []string{webhook.OrderExpired}},
		{name: "OKAlreadyExpired", order: pending, twice: true, webhooks: []string{webhook.OrderExpired}},
		{name: "OKPastExpiry", order: pending, late: true, webhooks: []string{webhook.OrderExpired}},
		{name: "ErrPaid", order: settled(store.OrderPaid), code: apperr.OrderNotPending,
			message: "Order %s is paid; only a pending order can be expired.", webhooks: []string{webhook.OrderPaid}},
		{name: "ErrFailed", order: settled(store.OrderFailed), code: apperr.OrderNotPending,
			message: "Order %s is failed; only a pending order can be expired.", webhooks: []string{webhook.OrderFailed}},
		{name: "ErrCompleted", order: func(t *testing.T, b *lifecycleBundle) *store.Order {
			return b.order(t, store.EnvLive, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2)
		}, code: apperr.OrderNotPending, message: "Order %s is completed; only a pending order can be expired.",
			webhooks: []string{webhook.OrderCompleted}},
		{name: "ErrEnvironmentMismatch", order: pending, env: store.EnvTest, code: apperr.EnvironmentMismatch,
			message: "Order %s belongs to the live environment; use a live key to read it."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				b := setupLifecycle(t, db)
				ctx := context.Background()
				o := tt.order(t, b)
				ticket := "DEMO-HIGHLIFE-REG"
				if o.EventID == b.id("DEMO-CHALEWOTE") {
					ticket = "DEMO-CHALEWOTE-1-GA"
				}
				heldBefore, soldBefore := b.stock(t, ticket)
				env := tt.env
				if env == "" {
					env = store.EnvLive
				}
				if tt.late {
					b.pastExpiry(o)
				}
				if tt.twice {
					_, err := b.svc.Expire(ctx, b.caller(env), o.Reference)
					require.NoError(t, err)
				}
				got, err := b.svc.Expire(ctx, b.caller(env), o.Reference)
				if tt.code != "" {
					require.Equal(t, tt.code, apperr.CodeOf(err), "%v", err)
					require.Equal(t, fmt.Sprintf(tt.message, o.Reference), apperr.From(err).Message)
					require.Nil(t, got)
				} else {
					require.NoError(t, err)
					require.Equal(t, store.OrderExpired, got.Status)
					require.Equal(t, 5, got.StatusCode)
					require.Nil(t, got.CheckoutURL, "no longer payable")
					require.Nil(t, got.ExpiresAt)
					require.Equal(t, store.OrderExpired, b.reload(t, o.Reference).Status)
				}
				require.Equal(t, tt.webhooks, b.webhooks(t, o), "order.expired once, and nothing for a refusal")
				held, sold := b.stock(t, ticket)
				if o.HoldsStock && tt.code == "" {
					require.Equal(t, heldBefore-2, held, "the hold is released at once")
				} else {
					require.Equal(t, heldBefore, held)
				}
				require.Equal(t, soldBefore, sold)
			})
		})
	}

	t.Run("ErrOrderNotFound", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupLifecycle(t, db)
			o := b.paidOrder(t)
			other := checkout.Caller{AppID: b.demo.App.App.ID + 1000, Environment: store.EnvLive}
			for _, tc := range []struct {
				c   checkout.Caller
				ref string
			}{{other, o.Reference}, {b.caller(store.EnvLive), "ord_doesnotexist"}, {b.caller(store.EnvLive), "not a reference"}} {
				_, err := b.svc.Expire(context.Background(), tc.c, tc.ref)
				require.Equal(t, apperr.OrderNotFound, apperr.CodeOf(err), "%s", tc.ref)
				require.Equal(t, fmt.Sprintf("Order %s was not found for this app.", tc.ref), apperr.From(err).Message)
			}
			require.Equal(t, store.OrderPending, b.reload(t, o.Reference).Status)
			require.Empty(t, b.webhooks(t, o))
		})
	})
}

// TestExpire_RacesConfirmPayment: an expiry and a payment confirmation of
// one pending order settle it once between them. Whichever moves it first
// wins; the other decides again on what the order became: Expire answers
// order_not_pending after a payment, and a payment after an expiry is
// flagged for refund review, never dropped. Exactly one webhook either way,
// and the held stock moves once.
func TestExpire_RacesConfirmPayment(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, b *lifecycleBundle, o *store.Order, heldBefore, soldBefore int64, expired bool, expireErr error) {
		t.Helper()
		stored := b.reload(t, o.Reference)
		held, sold := b.stock(t, "DEMO-HIGHLIFE-REG")
		require.Equal(t, heldBefore, held, "the hold moves once")
		if expired {
			require.NoError(t, expireErr)
			require.Equal(t, store.OrderExpired, stored.Status)
			require.True(t, stored.RefundReview, "the payment is flagged, not dropped")
			require.Equal(t, []string{webhook.OrderExpired}, b.webhooks(t, o))
			require.Equal(t, soldBefore, sold)
			return
		}
		require.Equal(t, apperr.OrderNotPending, apperr.CodeOf(expireErr), "%v", expireErr)
		require.Equal(t, store.OrderPaid, stored.Status)
		require.False(t, stored.RefundReview)
		require.Equal(t, []string{webhook.OrderPaid}, b.webhooks(t, o))
		require.Equal(t, soldBefore+2, sold)
	}

	t.Run("PaymentBetweenExpiresReadAndWrite", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupLifecycle(t, db)
			ctx := context.Background()
			heldBefore, soldBefore := b.stock(t, "DEMO-HIGHLIFE-REG")
			o := b.paidOrder(t)
			// Expire reads the clock after the order, to judge it, and
			// before it writes: the payment lands in that window.
			b.clock.beforeNextReading(func() {
				_, err := b.svc.ConfirmPayment(ctx, paid(o))
				require.NoError(t, err)
			})
			_, err := b.svc.Expire(ctx, b.caller(store.EnvLive), o.Reference)
			check(t, b, o, heldBefore, soldBefore, false, err)
		})
	})
	t.Run("ExpiryBetweenPaymentsReadAndWrite", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupLifecycle(t, db)
			ctx := context.Background()
			heldBefore, soldBefore := b.stock(t, "DEMO-HIGHLIFE-REG")
			o := b.paidOrder(t)
			var expireErr error
			b.clock.beforeNextReading(func() {
				_, expireErr = b.svc.Expire(ctx, b.caller(store.EnvLive), o.Reference)
			})
			got, err := b.svc.ConfirmPayment(ctx, paid(o))
			require.NoError(t, err)
			require.Equal(t, store.OrderExpired, got.Status)
			check(t, b, o, heldBefore, soldBefore, true, expireErr)
		})
	})
	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupLifecycle(t, db)
			ctx := context.Background()
			for range 10 {
				heldBefore, soldBefore := b.stock(t, "DEMO-HIGHLIFE-REG")
				o := b.paidOrder(t)
				var (
					wg         sync.WaitGroup
					start      = make(chan struct{})
					expireErr  error
					confirmErr error
				)
				wg.Add(2)
				go func() {
					defer wg.Done()
					<-start
					_, expireErr = b.svc.Expire(ctx, b.caller(store.EnvLive), o.Reference)
				}()
				go func() {
					defer wg.Done()
					<-start
					_, confirmErr = b.svc.ConfirmPayment(ctx, paid(o))
				}()
				close(start)
				wg.Wait()
				require.NoError(t, confirmErr)
				check(t, b, o, heldBefore, soldBefore, expireErr == nil, expireErr)
			}
		})
	})
}
