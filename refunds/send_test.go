package refunds_test

import (
	"context"
	"testing"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/payments/paystack"
	"github.com/boxoffice/boxoffice/payments/paystacktest"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

const paystackSecret = "sk_test_refunds0123456789"

// paystackOrder makes a live order paid through the Paystack stand-in:
// the order's payment is a successful transaction there.
func (b *bundle) paystackOrder(t *testing.T, ps *paystacktest.Server, p *paystack.Provider, n int) *store.Order {
	t.Helper()
	ctx := context.Background()
	o := b.highlife(t, store.EnvLive, n)
	pay, err := p.Create(ctx, payments.Request{Reference: o.Reference, Amount: o.TotalAmount, Currency: o.Currency,
		Email: "ama@example.com", CallbackURL: "https://boxoffice.test/return"})
	require.NoError(t, err)
	ps.Approve(pay.Reference)
	_, err = b.db.NewUpdate().Model((*store.Order)(nil)).Set("payment_reference = ?", pay.Reference).
		Set("payment_provider = ?", "paystack").Where("id = ?", o.ID).Exec(ctx)
	require.NoError(t, err)
	o, err = store.OrderByID(ctx, b.db, o.ID)
	require.NoError(t, err)
	return o
}

func (b *bundle) stored(t *testing.T, id string) *store.Refund {
	t.Helper()
	r, err := store.RefundByPublicID(context.Background(), b.db, id)
	require.NoError(t, err)
	return r
}

// TestSend is rule 3 of the refund contract at the provider: the money of
// a live refund is asked for once, settled by what the provider says, and
// never asked for twice, even when an answer is lost.
func TestSend(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		ps := paystacktest.New(t, paystackSecret)
		p, err := paystack.New(paystack.Config{SecretKey: paystackSecret, BaseURL: ps.URL})
		require.NoError(t, err)
		b := setup(t, db)
		b.svc.Payments = p

		t.Run("OK", func(t *testing.T) {
			o := b.paystackOrder(t, ps, p, 2)
			v, _, err := b.refund(o, "send-ok", nil)
			require.NoError(t, err)
			r := b.stored(t, v.ID)
			require.ErrorIs(t, b.svc.Send(ctx, r.ID), refunds.ErrAtProvider, "Paystack queues refunds")
			require.Len(t, ps.Refunds(*o.PaymentReference), 1)
			require.Equal(t, int64(24000), ps.Refunds(*o.PaymentReference)[0].Amount, "the amount in subunits")
			require.NotNil(t, b.stored(t, v.ID).ProviderRefundID)

			ps.ProcessRefunds("processed")
			require.NoError(t, b.svc.Send(ctx, r.ID))
			require.Equal(t, store.RefundSucceeded, b.stored(t, v.ID).Status)
			require.Len(t, ps.Refunds(*o.PaymentReference), 1, "asked once")
			got, err := store.OrderByID(ctx, db, o.ID)
			require.NoError(t, err)
			require.Equal(t, o.TotalAmount, got.RefundedAmount)
			require.Equal(t, "refund.succeeded", b.events(t, o)[len(b.events(t, o))-1])
			require.NoError(t, b.svc.Send(ctx, r.ID), "a settled refund is left alone")
			require.Len(t, ps.Refunds(*o.PaymentReference), 1)
		})

		t.Run("OKAnswerLost", func(t *testing.T) {
			o := b.paystackOrder(t, ps, p, 1)
			v, _, err := b.refund(o, "send-lost", nil)
			require.NoError(t, err)
			r := b.stored(t, v.ID)
			ps.LoseRefundAnswers(1)
			err = b.svc.Send(ctx, r.ID)
			require.ErrorIs(t, err, payments.ErrUnavailable, "the outcome is unknown: retry")
			require.False(t, b.stored(t, v.ID).SentAt.IsZero(), "the attempt was recorded before the call")
			require.ErrorIs(t, b.svc.Send(ctx, r.ID), refunds.ErrAtProvider)
			require.Len(t, ps.Refunds(*o.PaymentReference), 1, "the retry found the refund instead of asking again")
		})

		t.Run("OKCrashAfterTheAnswer", func(t *testing.T) {
			// The provider answered and the process died before recording
			// it: the attempt is recorded, the answer is not.
			o := b.paystackOrder(t, ps, p, 1)
			v, _, err := b.refund(o, "send-crash", nil)
			require.NoError(t, err)
			r := b.stored(t, v.ID)
			ok, err := store.MarkRefundSent(ctx, db, r.ID, b.f.Now)
			require.NoError(t, err)
			require.True(t, ok)
			_, err = p.Refund(ctx, payments.RefundRequest{RefundID: v.ID, PaymentReference: *o.PaymentReference,
				Amount: r.Amount, Currency: r.Currency})
			require.NoError(t, err)
			ps.ProcessRefunds("processed")
			require.NoError(t, b.svc.Send(ctx, r.ID))
			require.Equal(t, store.RefundSucceeded, b.stored(t, v.ID).Status)
			require.Len(t, ps.Refunds(*o.PaymentReference), 1, "never two refunds at the provider for one")
		})

		t.Run("ErrFailedAtProvider", func(t *testing.T) {
			o := b.paystackOrder(t, ps, p, 1)
			v, _, err := b.refund(o, "send-failed", nil)
			require.NoError(t, err)
			r := b.stored(t, v.ID)
			require.ErrorIs(t, b.svc.Send(ctx, r.ID), refunds.ErrAtProvider)
			ps.ProcessRefunds("failed")
			require.NoError(t, b.svc.Send(ctx, r.ID))
			failed := b.stored(t, v.ID)
			require.Equal(t, store.RefundFailed, failed.Status)
			require.NotNil(t, failed.FailureReason)
			require.Contains(t, *failed.FailureReason, "Paystack could not return the money")
			got, err := store.OrderByID(ctx, db, o.ID)
			require.NoError(t, err)
			require.Zero(t, got.RefundCommitted, "a failed refund's amount is refundable again")
			for _, tk := range b.tickets(t, o) {
				require.Equal(t, store.TicketVoid, tk.Status, "the cancellation stands")
			}
		})

		t.Run("ErrRefusedByProvider", func(t *testing.T) {
			o := b.paystackOrder(t, ps, p, 1)
			// Someone refunded the payment in Paystack's dashboard already.
			_, err := p.Refund(ctx, payments.RefundRequest{RefundID: "dashboard", PaymentReference: *o.PaymentReference,
				Amount: o.TotalAmount, Currency: o.Currency})
			require.NoError(t, err)
			v, _, err := b.refund(o, "send-refused", nil)
			require.NoError(t, err)
			require.NoError(t, b.svc.Send(ctx, b.stored(t, v.ID).ID))
			failed := b.stored(t, v.ID)
			require.Equal(t, store.RefundFailed, failed.Status)
			require.Contains(t, *failed.FailureReason, "refused by Paystack")
		})

		t.Run("ErrNoProvider", func(t *testing.T) {
			o := b.paystackOrder(t, ps, p, 1)
			v, _, err := b.refund(o, "send-none", nil)
			require.NoError(t, err)
			other := &refunds.Service{DB: db, Orders: b.f.Service, Idempotency: b.svc.Idempotency, Webhooks: b.svc.Webhooks,
				Now: b.svc.Now}
			require.NoError(t, other.Send(ctx, b.stored(t, v.ID).ID))
			failed := b.stored(t, v.ID)
			require.Equal(t, store.RefundFailed, failed.Status)
			require.Contains(t, *failed.FailureReason, "(paystack) is not configured")
			require.Empty(t, ps.Refunds(*o.PaymentReference))
		})

		t.Run("OKReconcile", func(t *testing.T) {
			o := b.paystackOrder(t, ps, p, 1)
			v, _, err := b.refund(o, "send-reconcile", nil)
			require.NoError(t, err)
			require.ErrorIs(t, b.svc.Send(ctx, b.stored(t, v.ID).ID), refunds.ErrAtProvider)
			ps.ProcessRefunds("processed")
			require.NoError(t, b.svc.Reconcile(ctx, payments.RefundNotice{OrderReference: o.Reference}))
			require.Equal(t, store.RefundSucceeded, b.stored(t, v.ID).Status, "the callback's prompt settles it")
			require.NoError(t, b.svc.Reconcile(ctx, payments.RefundNotice{OrderReference: "ord_unknown"}))
		})
	})
}

// TestSendDev: the development provider returns a live refund's money at
// once, and fails it when its page's switch says so, for tests and for a
// developer trying the failure path.
func TestSendDev(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		dev := b.svc.Payments.(*devpay.Provider)
		tests := []struct {
			name       string
			fail       bool
			wantStatus string
			wantEvent  string
		}{
			{name: "OKSucceeds", wantStatus: store.RefundSucceeded, wantEvent: "refund.succeeded"},
			{name: "OKFailsWhenTold", fail: true, wantStatus: store.RefundFailed, wantEvent: "refund.failed"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				o := b.highlife(t, store.EnvLive, 2)
				// The fixture's checkout took the payment through the
				// development provider; its page's Pay makes it paid there.
				ref := *o.PaymentReference
				_, err := dev.Decide(ctx, ref, payments.Paid)
				require.NoError(t, err)
				require.NoError(t, dev.FailRefunds(ctx, ref, tt.fail))

				v, _, err := b.refund(o, "dev-"+tt.name, nil)
				require.NoError(t, err)
				require.Equal(t, "pending", string(v.Status))
				require.NoError(t, b.svc.Send(ctx, b.stored(t, v.ID).ID))
				r := b.stored(t, v.ID)
				require.Equal(t, tt.wantStatus, r.Status)
				require.Equal(t, tt.fail, r.FailureReason != nil)
				events := b.events(t, o)
				require.Equal(t, tt.wantEvent, events[len(events)-1])
				got, err := store.OrderByID(ctx, db, o.ID)
				require.NoError(t, err)
				if tt.fail {
					require.Zero(t, got.RefundedAmount)
					require.Zero(t, got.RefundCommitted, "the failed amount is refundable again")
				} else {
					require.Equal(t, o.TotalAmount, got.RefundedAmount)
				}
				list, err := dev.RefundsOf(ctx, ref)
				require.NoError(t, err)
				require.Len(t, list, 1, "asked once")
			})
		}
	})
}
