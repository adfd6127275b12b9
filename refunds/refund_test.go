package refunds_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// bundle is one test's refund service over the demo catalog.
type bundle struct {
	db   *store.DB
	f    *checkouttest.Fixture
	svc  *refunds.Service
	keys int
	mu   sync.Mutex
	// sent are the refunds whose provider job was enqueued.
	sent []int64
}

func setup(t *testing.T, db *store.DB) *bundle {
	t.Helper()
	f := checkouttest.MustNew(t, db)
	b := &bundle{db: db, f: f}
	b.svc = &refunds.Service{DB: db, Orders: f.Service, Idempotency: f.Service.Idempotency, Webhooks: f.Service.Webhooks,
		Now: f.Service.Now, Payments: f.Service.Payments,
		EnqueueSend: func(_ context.Context, _ bun.Tx, id int64) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.sent = append(b.sent, id)
			return nil
		}}
	return b
}

func (b *bundle) caller(env string) checkout.Caller {
	return checkout.Caller{AppID: b.f.Demo.App.App.ID, Environment: env}
}

func ptr[T any](v T) *T { return &v }

// order makes a paid order of the demo app in env: qty tickets of a demo
// ticket (a paid sandbox order settled paid, a live one confirmed by its
// payment, a free one as it is).
func (b *bundle) order(t *testing.T, env, event, date, ticket string, qty int) *store.Order {
	t.Helper()
	ctx := context.Background()
	b.mu.Lock()
	b.keys++
	key := fmt.Sprintf("order-%d", b.keys)
	b.mu.Unlock()
	in := &checkout.Input{
		EventID: ptr(b.f.ID(t, event)), EventdateID: ptr(b.f.ID(t, date)),
		Items:      []*checkout.Item{{TicketID: ptr(b.f.ID(t, ticket)), Quantity: ptr(qty)}},
		Customer:   &checkout.Customer{Name: ptr("Ama Mensah"), Email: ptr("ama@example.com"), Phone: ptr("0241234567")},
		SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
	}
	sess, _, err := b.f.Service.Create(ctx, b.caller(env), checkout.Request{Key: key, Input: in})
	require.NoError(t, err)
	o, err := store.OrderByReference(ctx, b.db, sess.OrderReference)
	require.NoError(t, err)
	if o.Status == store.OrderPending && env == store.EnvTest {
		_, _, err = b.f.Service.Settle(ctx, o.Reference, store.OrderPaid)
		require.NoError(t, err)
	}
	if o.Status == store.OrderPending && env == store.EnvLive {
		_, err = b.f.Service.ConfirmPayment(ctx, &payments.Status{Reference: *o.PaymentReference, State: payments.Paid,
			Amount: o.TotalAmount, Currency: o.Currency})
		require.NoError(t, err)
	}
	o, err = store.OrderByReference(ctx, b.db, sess.OrderReference)
	require.NoError(t, err)
	return o
}

// highlife is a paid order of n Regular Highlife tickets (120.00 each).
func (b *bundle) highlife(t *testing.T, env string, n int) *store.Order {
	return b.order(t, env, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", n)
}

func (b *bundle) tickets(t *testing.T, o *store.Order) []store.IssuedTicket {
	t.Helper()
	ts, err := store.IssuedTicketsOfOrder(context.Background(), b.db, o.ID)
	require.NoError(t, err)
	return ts
}

func (b *bundle) refund(o *store.Order, key string, in *refunds.Input) (*checkout.Refund, bool, error) {
	return b.svc.Create(context.Background(), b.caller(o.Environment), refunds.Request{Reference: o.Reference, Key: key, Input: in})
}

func (b *bundle) sold(t *testing.T, ticket string) int64 {
	t.Helper()
	var sold int64
	require.NoError(t, b.db.NewSelect().Table("tickets").Column("sold").Where("id = ?", b.f.ID(t, ticket)).
		Scan(context.Background(), &sold))
	return sold
}

// events returns the types of an order's webhook events, in sequence.
func (b *bundle) events(t *testing.T, o *store.Order) []string {
	t.Helper()
	var types []string
	require.NoError(t, b.db.NewSelect().Model((*store.WebhookEvent)(nil)).Column("type").
		Where("order_id = ?", o.ID).Order("sequence").Scan(context.Background(), &types))
	return types
}

func requireCode(t *testing.T, err error, code apperr.Code, status int) {
	t.Helper()
	require.Error(t, err)
	e := apperr.From(err)
	require.Equal(t, code, e.Code, e.Message)
	require.Equal(t, status, e.Status(), e.Message)
	require.NotEmpty(t, e.Message)
}

// TestCreate is the refund rule of docs/spec/refunds.md section 2: what a
// refund does, and every refusal in its order.
func TestCreate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()

		t.Run("OK_WholeTestOrder", func(t *testing.T) {
			o := b.highlife(t, store.EnvTest, 2)
			soldBefore := b.sold(t, "DEMO-HIGHLIFE-REG")
			r, replayed, err := b.refund(o, "whole", nil)
			require.NoError(t, err)
			require.False(t, replayed)
			require.Regexp(t, `^rfd_[a-z2-7]{26}$`, r.ID)
			require.Equal(t, "240.00", r.Amount, "the unit prices of the tickets cancelled")
			require.Equal(t, store.RefundSucceeded, r.Status, "a test order's refund succeeds at once")
			require.Equal(t, store.RefundRequestedByCustomer, r.Reason)
			require.Len(t, r.Tickets, 2)
			require.Equal(t, map[string]any{}, r.Metadata)
			require.Equal(t, store.EnvTest, r.Environment)
			for _, tk := range b.tickets(t, o) {
				require.Equal(t, store.TicketVoid, tk.Status)
			}
			require.Equal(t, soldBefore, b.sold(t, "DEMO-HIGHLIFE-REG"), "sandbox orders never took stock")
			require.Equal(t, []string{"order.paid", "refund.created", "ticket.voided", "ticket.voided", "refund.succeeded"}, b.events(t, o))
			got, err := store.OrderByID(ctx, db, o.ID)
			require.NoError(t, err)
			require.Equal(t, o.TotalAmount, got.RefundedAmount)
			require.Equal(t, o.TotalAmount, got.RefundCommitted)
		})

		t.Run("OK_LiveTicketsBackOnSale", func(t *testing.T) {
			o := b.highlife(t, store.EnvLive, 3)
			ts := b.tickets(t, o)
			soldBefore := b.sold(t, "DEMO-HIGHLIFE-REG")
			r, _, err := b.refund(o, "live-one", &refunds.Input{Tickets: []*string{&ts[1].PublicID}, Reason: ptr(store.RefundDuplicate)})
			require.NoError(t, err)
			require.Equal(t, store.RefundPending, r.Status, "a live refund waits for the provider")
			require.Equal(t, "120.00", r.Amount)
			require.Equal(t, []string{ts[1].PublicID}, r.Tickets)
			require.Equal(t, soldBefore-1, b.sold(t, "DEMO-HIGHLIFE-REG"), "the cancelled seat is on sale again")
			stored, err := store.RefundByPublicID(ctx, db, r.ID)
			require.NoError(t, err)
			b.mu.Lock()
			require.Contains(t, b.sent, stored.ID, "the provider's job is written with the refund")
			b.mu.Unlock()
			after := b.tickets(t, o)
			require.Equal(t, store.TicketValid, after[0].Status)
			require.Equal(t, store.TicketVoid, after[1].Status)
			require.Equal(t, store.RefundDuplicate, *after[1].VoidReason)
		})

		t.Run("OK_MoneyOnly", func(t *testing.T) {
			o := b.highlife(t, store.EnvTest, 2)
			r, _, err := b.refund(o, "goodwill", &refunds.Input{Tickets: []*string{}, Amount: ptr("10.5"),
				Metadata: map[string]any{"ticket": "T-1"}})
			require.NoError(t, err)
			require.Equal(t, "10.50", r.Amount)
			require.Empty(t, r.Tickets)
			require.Equal(t, map[string]any{"ticket": "T-1"}, r.Metadata)
			for _, tk := range b.tickets(t, o) {
				require.Equal(t, store.TicketValid, tk.Status)
			}
		})

		t.Run("OK_FreeOrder", func(t *testing.T) {
			o := b.order(t, store.EnvLive, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2)
			require.Equal(t, store.OrderCompleted, o.Status)
			r, _, err := b.refund(o, "free", nil)
			require.NoError(t, err)
			require.Equal(t, "0.00", r.Amount)
			require.Equal(t, store.RefundSucceeded, r.Status, "nothing to pay back: succeeded at once")
		})

		t.Run("Replay", func(t *testing.T) {
			o := b.highlife(t, store.EnvTest, 2)
			in := &refunds.Input{Amount: ptr("5.00"), Tickets: []*string{}}
			first, _, err := b.refund(o, "again", in)
			require.NoError(t, err)
			second, replayed, err := b.refund(o, "again", &refunds.Input{Amount: ptr("5.00"), Tickets: []*string{}})
			require.NoError(t, err)
			require.True(t, replayed)
			require.Equal(t, first, second)
			_, _, err = b.refund(o, "again", &refunds.Input{Amount: ptr("6.00"), Tickets: []*string{}})
			requireCode(t, err, apperr.IdempotencyConflict, 409)
			rs, err := b.svc.OfOrder(ctx, b.caller(o.Environment), o.Reference)
			require.NoError(t, err)
			require.Len(t, rs, 1)
		})

		t.Run("ReplayedRefusal", func(t *testing.T) {
			o := b.highlife(t, store.EnvTest, 1)
			_, _, err := b.refund(o, "too-much", &refunds.Input{Amount: ptr("1000.00")})
			requireCode(t, err, apperr.RefundExceedsBalance, 409)
			_, replayed, err := b.refund(o, "too-much", &refunds.Input{Amount: ptr("1000.00")})
			requireCode(t, err, apperr.RefundExceedsBalance, 409)
			require.True(t, replayed)
		})

		// Each refusal, with the request breaking a later rule too where it
		// can, so the earlier rule must answer.
		refusals := []struct {
			name   string
			code   apperr.Code
			status int
			run    func(t *testing.T) error
		}{
			{"ErrEnvironmentMismatch", apperr.EnvironmentMismatch, 403, func(t *testing.T) error {
				o := b.highlife(t, store.EnvLive, 1)
				_, _, err := b.svc.Create(ctx, b.caller(store.EnvTest), refunds.Request{Reference: o.Reference, Key: ""})
				return err
			}},
			{"ErrMissingIdempotencyKey", apperr.MissingIdempotencyKey, 400, func(t *testing.T) error {
				o := b.highlife(t, store.EnvTest, 1)
				_, _, err := b.refund(o, "", &refunds.Input{Reason: ptr("whim")})
				return err
			}},
			{"ErrValidation", apperr.ValidationFailed, 422, func(t *testing.T) error {
				_, _, err := b.svc.Create(ctx, b.caller(store.EnvTest), refunds.Request{Reference: "sbx_nope", Key: "k",
					Input: &refunds.Input{Reason: ptr("whim"), Amount: ptr("-1"), Tickets: []*string{ptr("a"), ptr("a"), nil},
						Metadata: []any{}}})
				e := apperr.From(err)
				require.Equal(t, apperr.Details{
					"reason":    {"must be one of requested_by_customer, event_cancelled, duplicate, fraudulent, other"},
					"amount":    {`must be a decimal amount of at least 0 with at most 2 places, such as "25.00"`},
					"tickets.1": {"is listed twice"}, "tickets.2": {"must be a ticket id (itk_…)"},
					"metadata": {"must be a JSON object"},
				}, e.Details)
				return err
			}},
			{"ErrOrderNotFound", apperr.OrderNotFound, 404, func(t *testing.T) error {
				_, _, err := b.svc.Create(ctx, b.caller(store.EnvTest), refunds.Request{Reference: "sbx_" + "0000000000000000000000000000000000", Key: "k"})
				return err
			}},
			{"ErrMetadataPersonal", apperr.ValidationFailed, 422, func(t *testing.T) error {
				o := b.highlife(t, store.EnvTest, 1)
				_, _, err := b.refund(o, "pii", &refunds.Input{Metadata: map[string]any{"who": "Ama Mensah"}})
				return err
			}},
			{"ErrOrderNotRefundable", apperr.OrderNotRefundable, 409, func(t *testing.T) error {
				sess, _, err := b.f.Service.Create(ctx, b.caller(store.EnvTest), checkout.Request{Key: "pending-one", Input: &checkout.Input{
					EventID: ptr(b.f.ID(t, "DEMO-HIGHLIFE")), EventdateID: ptr(b.f.ID(t, "DEMO-HIGHLIFE-1")),
					Items:      []*checkout.Item{{TicketID: ptr(b.f.ID(t, "DEMO-HIGHLIFE-REG")), Quantity: ptr(1)}},
					Customer:   &checkout.Customer{Name: ptr("Kofi Boateng"), Email: ptr("kofi@example.com"), Phone: ptr("0241234568")},
					SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
				}})
				require.NoError(t, err)
				_, _, err = b.svc.Create(ctx, b.caller(store.EnvTest), refunds.Request{Reference: sess.OrderReference, Key: t.Name(),
					Input: &refunds.Input{Tickets: []*string{ptr("itk_nope")}}})
				return err
			}},
			{"ErrTicketNotFound", apperr.TicketNotFound, 404, func(t *testing.T) error {
				o := b.highlife(t, store.EnvTest, 2)
				other := b.tickets(t, b.highlife(t, store.EnvTest, 1))[0]
				_, _, err := b.refund(o, t.Name(), &refunds.Input{Tickets: []*string{&other.PublicID}, Amount: ptr("9999.00")})
				return err
			}},
			{"ErrTicketAlreadyVoid", apperr.TicketAlreadyVoid, 409, func(t *testing.T) error {
				o := b.highlife(t, store.EnvTest, 2)
				ts := b.tickets(t, o)
				_, _, err := b.refund(o, "first", &refunds.Input{Tickets: []*string{&ts[0].PublicID}})
				require.NoError(t, err)
				_, _, err = b.refund(o, "second", &refunds.Input{Tickets: []*string{&ts[1].PublicID, &ts[0].PublicID}, Amount: ptr("9999.00")})
				return err
			}},
			{"ErrTicketCheckedIn", apperr.TicketCheckedIn, 409, func(t *testing.T) error {
				o := b.highlife(t, store.EnvTest, 2)
				_, err := db.NewUpdate().Table("issued_tickets").Set("inside = TRUE").Set("status = 'checked_in'").
					Where("order_id = ? AND position = 1", o.ID).Exec(ctx)
				require.NoError(t, err)
				_, _, err = b.refund(o, t.Name(), &refunds.Input{Amount: ptr("9999.00")})
				return err
			}},
			{"ErrRefundExceedsBalance", apperr.RefundExceedsBalance, 409, func(t *testing.T) error {
				o := b.highlife(t, store.EnvTest, 2)
				_, _, err := b.refund(o, "most", &refunds.Input{Tickets: []*string{}, Amount: ptr("200.00")})
				require.NoError(t, err)
				_, _, err = b.refund(o, "rest", &refunds.Input{Tickets: []*string{}, Amount: ptr("40.01")})
				return err
			}},
			{"ErrNothingToRefund", apperr.ValidationFailed, 422, func(t *testing.T) error {
				o := b.highlife(t, store.EnvTest, 1)
				_, _, err := b.refund(o, "nothing", &refunds.Input{Tickets: []*string{}, Amount: ptr("0")})
				return err
			}},
		}
		for _, tc := range refusals {
			t.Run(tc.name, func(t *testing.T) {
				requireCode(t, tc.run(t), tc.code, tc.status)
			})
		}
	})
}

// TestCreate_Concurrent is rule 2: any number of concurrent refunds of one
// ticket cancel it once, and concurrent money refunds never pass the
// order's total.
func TestCreate_Concurrent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		const n = 8

		t.Run("OneTicket", func(t *testing.T) {
			o := b.highlife(t, store.EnvLive, 2)
			ts := b.tickets(t, o)
			soldBefore := b.sold(t, "DEMO-HIGHLIFE-REG")
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					_, _, errs[i] = b.refund(o, fmt.Sprintf("race-%d", i), &refunds.Input{Tickets: []*string{&ts[0].PublicID}})
				})
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
					continue
				}
				require.Equal(t, apperr.TicketAlreadyVoid, apperr.CodeOf(err), err)
			}
			require.Equal(t, 1, ok, "the ticket is cancelled once")
			require.Equal(t, soldBefore-1, b.sold(t, "DEMO-HIGHLIFE-REG"), "its seat goes back on sale once")
			got, err := store.OrderByID(context.Background(), db, o.ID)
			require.NoError(t, err)
			require.Equal(t, int64(12000), got.RefundCommitted)
		})

		t.Run("Money", func(t *testing.T) {
			o := b.highlife(t, store.EnvTest, 1) // 120.00
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					_, _, errs[i] = b.refund(o, fmt.Sprintf("money-%d", i), &refunds.Input{Tickets: []*string{}, Amount: ptr("50.00")})
				})
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
					continue
				}
				require.Equal(t, apperr.RefundExceedsBalance, apperr.CodeOf(err), err)
			}
			require.Equal(t, 2, ok, "two of 50.00 fit in 120.00, a third does not")
			got, err := store.OrderByID(context.Background(), db, o.ID)
			require.NoError(t, err)
			require.Equal(t, int64(10000), got.RefundedAmount)
		})
	})
}

// TestRefundJSON pins the Refund object's keys (section 1).
func TestRefundJSON(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		o := b.highlife(t, store.EnvTest, 1)
		r, _, err := b.refund(o, "json", nil)
		require.NoError(t, err)
		raw, err := json.Marshal(r)
		require.NoError(t, err)
		var keys map[string]any
		require.NoError(t, json.Unmarshal(raw, &keys))
		require.ElementsMatch(t, []string{"id", "order_reference", "amount", "currency", "tickets", "reason", "status",
			"failure_reason", "metadata", "environment", "created_at", "updated_at"}, mapKeys(keys))
		got, err := b.svc.Get(context.Background(), b.caller(store.EnvTest), r.ID)
		require.NoError(t, err)
		require.Equal(t, r, got)
		_, err = b.svc.Get(context.Background(), b.caller(store.EnvLive), r.ID)
		requireCode(t, err, apperr.EnvironmentMismatch, 403)
		for _, id := range []string{"rfd_nope", "rfd_\x00", "rfd_" + strings.Repeat("a", 25) + "\x00", "rfd_" + strings.Repeat("A", 26),
			strings.Repeat("rfd_", 1000), "rfd_abcdefghijklmnopqrstuvwxyz", ""} {
			// The shape is checked before any query; a string the
			// database cannot take (a NUL) never reaches it.
			_, err = b.svc.Get(context.Background(), b.caller(store.EnvTest), id)
			requireCode(t, err, apperr.RefundNotFound, 404)
		}
	})
}

func mapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
