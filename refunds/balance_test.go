package refunds_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"pgregory.net/rapid"
)

// TestBalance is the balance rule as a property: for any sequence of
// refunds of a live order (any tickets, any amounts) and of their
// settlements at the provider, the pending and succeeded refunds never
// take more than the order's total, the order's sums are exactly its
// refunds', and every void ticket belongs to exactly one refund.
func TestBalance(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		cases := 0
		rapid.Check(t, func(rt *rapid.T) {
			cases++
			o := b.highlife(t, store.EnvLive, rapid.IntRange(1, 4).Draw(rt, "tickets"))
			ts := b.tickets(t, o)
			steps := rapid.IntRange(1, 8).Draw(rt, "steps")
			for step := range steps {
				if rapid.Bool().Draw(rt, "settle") {
					settleOne(rt, b, o)
				} else {
					in := &refunds.Input{}
					if rapid.Bool().Draw(rt, "choose") {
						in.Tickets = []*string{}
						for i := range ts {
							if rapid.Bool().Draw(rt, fmt.Sprintf("ticket%d", i)) {
								in.Tickets = append(in.Tickets, &ts[i].PublicID)
							}
						}
					}
					if rapid.Bool().Draw(rt, "amount") {
						in.Amount = ptr(catalog.FormatAmount(rapid.Int64Range(0, o.TotalAmount+100).Draw(rt, "minor")))
					}
					_, _, err := b.refund(o, fmt.Sprintf("balance-%d-%d", cases, step), in)
					if err != nil {
						switch apperr.CodeOf(err) {
						case apperr.TicketAlreadyVoid, apperr.RefundExceedsBalance, apperr.ValidationFailed:
						default:
							rt.Fatalf("unexpected refusal: %v", err)
						}
					}
				}
				checkBalance(rt, b, ctx, o)
			}
		})
	})
}

// settleOne settles one of the order's pending refunds, if any, as the
// provider would: succeeded or failed.
func settleOne(rt *rapid.T, b *bundle, o *store.Order) {
	pending, err := store.PendingRefundsOfOrder(context.Background(), b.db, o.ID)
	if err != nil {
		rt.Fatal(err)
	}
	if len(pending) == 0 {
		return
	}
	r := pending[rapid.IntRange(0, len(pending)-1).Draw(rt, "which")]
	state := payments.RefundSucceeded
	if rapid.Bool().Draw(rt, "fails") {
		state = payments.RefundFailed
	}
	settled, err := b.svc.Settle(context.Background(), r.ID, payments.RefundResult{State: state, FailureReason: "declined"})
	if err != nil || !settled {
		rt.Fatalf("settle %s: %v, settled %v", r.PublicID, err, settled)
	}
	again, err := b.svc.Settle(context.Background(), r.ID, payments.RefundResult{State: payments.RefundSucceeded})
	if err != nil || again {
		rt.Fatalf("a settled refund was settled again: %v, %v", err, again)
	}
}

func checkBalance(rt *rapid.T, b *bundle, ctx context.Context, o *store.Order) {
	got, err := store.OrderByID(ctx, b.db, o.ID)
	if err != nil {
		rt.Fatal(err)
	}
	rs, err := store.RefundsOfOrders(ctx, b.db, []int64{o.ID})
	if err != nil {
		rt.Fatal(err)
	}
	var committed, succeeded int64
	refundOf := map[int64]bool{}
	for _, r := range rs[o.ID] {
		refundOf[r.ID] = true
		switch r.Status {
		case store.RefundPending:
			committed += r.Amount
		case store.RefundSucceeded:
			committed += r.Amount
			succeeded += r.Amount
		}
	}
	if committed > got.TotalAmount {
		rt.Fatalf("refunds take %d of a total of %d", committed, got.TotalAmount)
	}
	if committed != got.RefundCommitted || succeeded != got.RefundedAmount {
		rt.Fatalf("order sums %d/%d, refunds %d/%d", got.RefundCommitted, got.RefundedAmount, committed, succeeded)
	}
	ts, err := store.IssuedTicketsOfOrder(ctx, b.db, o.ID)
	if err != nil {
		rt.Fatal(err)
	}
	for _, tk := range ts {
		switch {
		case tk.Status == store.TicketVoid && (tk.RefundID == nil || !refundOf[*tk.RefundID]):
			rt.Fatalf("void ticket %s belongs to no refund of its order", tk.PublicID)
		case tk.Status != store.TicketVoid && tk.RefundID != nil:
			rt.Fatalf("ticket %s names a refund but is %s", tk.PublicID, tk.Status)
		}
	}
}

// TestCreate_RacesTheDoor is rule 2's last sentence: a refund and a door
// scan of the same ticket racing end one way, never both.
func TestCreate_RacesTheDoor(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		for round := range 10 {
			o := b.highlife(t, store.EnvLive, 1)
			tk := b.tickets(t, o)[0]
			var (
				refundErr error
				moved     *store.MovedTicket
				doorErr   error
				start     = make(chan struct{})
				done      = make(chan struct{})
			)
			go func() {
				defer close(done)
				<-start
				doorErr = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					var err error
					moved, err = store.MoveAtDoor(ctx, tx, store.DoorMove{Code: tk.Code, Environment: tk.Environment,
						EventID: tk.EventID, EventDateID: tk.EventDateID, Entry: true, ScannedAt: b.f.Now, Now: b.f.Now})
					return err
				})
			}()
			close(start)
			_, _, refundErr = b.refund(o, fmt.Sprintf("door-%d", round), nil)
			<-done
			require.NoError(t, doorErr)
			after, err := store.IssuedTicketsOfOrder(ctx, db, o.ID)
			require.NoError(t, err)
			if refundErr == nil {
				require.Nil(t, moved, "round %d: the refund voided the ticket, so the door did not admit it", round)
				require.Equal(t, store.TicketVoid, after[0].Status)
				require.False(t, after[0].Inside)
			} else {
				require.Equal(t, apperr.TicketCheckedIn, apperr.CodeOf(refundErr), refundErr)
				require.NotNil(t, moved, "round %d: the door admitted the ticket", round)
				require.True(t, after[0].Inside)
				require.NotEqual(t, store.TicketVoid, after[0].Status)
			}
		}
	})
}
