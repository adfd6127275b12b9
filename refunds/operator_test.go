package refunds_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// flagged makes a live order of n Highlife tickets whose payment arrived
// after it expired, for amount (the order's total when 0): an order
// waiting for a refund review. The development provider holds the payment
// as paid.
func (b *bundle) flagged(t *testing.T, n int, amount int64) *store.Order {
	t.Helper()
	ctx := context.Background()
	b.mu.Lock()
	b.keys++
	key := fmt.Sprintf("flagged-%d", b.keys)
	b.mu.Unlock()
	in := &checkout.Input{
		EventID: ptr(b.f.ID(t, "DEMO-HIGHLIFE")), EventdateID: ptr(b.f.ID(t, "DEMO-HIGHLIFE-1")),
		Items:      []*checkout.Item{{TicketID: ptr(b.f.ID(t, "DEMO-HIGHLIFE-REG")), Quantity: ptr(n)}},
		Customer:   &checkout.Customer{Name: ptr("Ama Mensah"), Email: ptr("ama@example.com"), Phone: ptr("0241234567")},
		SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
	}
	sess, _, err := b.f.Service.Create(ctx, b.caller(store.EnvLive), checkout.Request{Key: key, Input: in})
	require.NoError(t, err)
	_, _, err = b.f.Service.Settle(ctx, sess.OrderReference, store.OrderExpired)
	require.NoError(t, err)
	o, err := store.OrderByReference(ctx, b.db, sess.OrderReference)
	require.NoError(t, err)
	if amount == 0 {
		amount = o.TotalAmount
	}
	dev := b.svc.Payments.(*devpay.Provider)
	_, err = dev.Decide(ctx, *o.PaymentReference, payments.Paid)
	require.NoError(t, err)
	o, err = b.f.Service.ConfirmPayment(ctx, &payments.Status{Reference: *o.PaymentReference, State: payments.Paid,
		Amount: amount, Currency: o.Currency})
	require.NoError(t, err)
	require.True(t, o.RefundReview)
	require.Equal(t, store.OrderExpired, o.Status)
	return o
}

// TestByOperator: an operator refunds any app's order as its app would,
// and settles a refund review (a payment for an order that was never
// paid) by returning that payment through the same machinery, once.
func TestByOperator(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		b := setup(t, db)
		dev := b.svc.Payments.(*devpay.Provider)
		reload := func(t *testing.T, o *store.Order) *store.Order {
			t.Helper()
			got, err := store.OrderByID(ctx, db, o.ID)
			require.NoError(t, err)
			return got
		}

		t.Run("OK_PaidOrderAsItsApp", func(t *testing.T) {
			o := b.highlife(t, store.EnvTest, 2)
			v, err := b.svc.ByOperator(ctx, o.Reference, "op-paid", nil)
			require.NoError(t, err)
			require.Len(t, v.Tickets, 2)
			require.Equal(t, "succeeded", string(v.Status))
			again, err := b.svc.ByOperator(ctx, o.Reference, "op-paid", nil)
			require.NoError(t, err)
			require.Equal(t, v.ID, again.ID, "the same key answers the same refund")
		})

		t.Run("OK_ReviewReturnsThePayment", func(t *testing.T) {
			o := b.flagged(t, 2, 0)
			note := *o.ReviewNote
			v, err := b.svc.ByOperator(ctx, o.Reference, "op-review", nil)
			require.NoError(t, err)
			require.Empty(t, v.Tickets, "nothing was issued, nothing is cancelled")
			require.Equal(t, "240.00", v.Amount)
			require.Equal(t, "pending", string(v.Status), "live money moves at the provider")
			got := reload(t, o)
			require.False(t, got.RefundReview, "the flag is cleared")
			require.Equal(t, note, *got.ReviewNote, "the note stays in the order's history")
			require.Equal(t, store.OrderExpired, got.Status)
			require.Equal(t, []string{"order.expired", "refund.created"}, b.events(t, o)[len(b.events(t, o))-2:])

			r := b.stored(t, v.ID)
			require.NoError(t, b.svc.Send(ctx, r.ID))
			require.Equal(t, store.RefundSucceeded, b.stored(t, v.ID).Status)
			require.Equal(t, int64(24000), reload(t, o).RefundedAmount)

			_, err = b.svc.ByOperator(ctx, o.Reference, "op-review-2", nil)
			requireCode(t, err, apperr.OrderNotRefundable, 409)
		})

		t.Run("OK_WrongAmountReturnsWhatWasPaid", func(t *testing.T) {
			o := b.flagged(t, 1, 5000)
			require.Equal(t, int64(5000), *o.ReviewAmount)
			_, err := b.svc.ByOperator(ctx, o.Reference, "op-wrong-1", &refunds.Input{Amount: ptr("50.01")})
			requireCode(t, err, apperr.RefundExceedsBalance, 409)
			_, err = b.svc.ByOperator(ctx, o.Reference, "op-wrong-2", &refunds.Input{Tickets: []*string{ptr("itk_x")}})
			requireCode(t, err, apperr.ValidationFailed, 422)
			require.True(t, reload(t, o).RefundReview, "a refusal changes nothing")
			v, err := b.svc.ByOperator(ctx, o.Reference, "op-wrong-3", nil)
			require.NoError(t, err)
			require.Equal(t, "50.00", v.Amount)
		})

		t.Run("OK_FailedReturnWaitsForReviewAgain", func(t *testing.T) {
			o := b.flagged(t, 1, 0)
			require.NoError(t, dev.FailRefunds(ctx, *o.PaymentReference, true))
			v, err := b.svc.ByOperator(ctx, o.Reference, "op-fail-1", nil)
			require.NoError(t, err)
			require.NoError(t, b.svc.Send(ctx, b.stored(t, v.ID).ID))
			require.Equal(t, store.RefundFailed, b.stored(t, v.ID).Status)
			got := reload(t, o)
			require.True(t, got.RefundReview, "the payment is still to be returned")
			require.Zero(t, got.RefundCommitted)

			require.NoError(t, dev.FailRefunds(ctx, *o.PaymentReference, false))
			v, err = b.svc.ByOperator(ctx, o.Reference, "op-fail-2", nil)
			require.NoError(t, err)
			require.NoError(t, b.svc.Send(ctx, b.stored(t, v.ID).ID))
			require.Equal(t, store.RefundSucceeded, b.stored(t, v.ID).Status)
			require.False(t, reload(t, o).RefundReview)
		})

		t.Run("OK_ConcurrentOperatorsOneRefund", func(t *testing.T) {
			o := b.flagged(t, 1, 0)
			const n = 6
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					_, errs[i] = b.svc.ByOperator(ctx, o.Reference, fmt.Sprintf("op-race-%d", i), nil)
				})
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
					continue
				}
				requireCode(t, err, apperr.OrderNotRefundable, 409)
			}
			require.Equal(t, 1, ok, "one review, one refund")
			rs, err := store.RefundsOfOrders(ctx, db, []int64{o.ID})
			require.NoError(t, err)
			require.Len(t, rs[o.ID], 1)
		})

		t.Run("ErrUnknownOrder", func(t *testing.T) {
			_, err := b.svc.ByOperator(ctx, "ord_nope", "op-none", nil)
			requireCode(t, err, apperr.OrderNotFound, 404)
		})
	})
}
