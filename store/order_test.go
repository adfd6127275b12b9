package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// mustPendingOrder stores a live pending order of app for qty of c's
// ticket, holding that stock as a live paid checkout does.
func mustPendingOrder(t *testing.T, db *store.DB, app *store.App, c *storetest.Catalog, ref string, qty int64) *store.Order {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	o := &store.Order{
		Reference: ref, AppID: app.ID, Environment: store.EnvLive, Status: store.OrderPending,
		EventID: c.Event.ID, EventDateID: c.Date.ID, Currency: c.Ticket.Currency, TotalAmount: qty * *c.Ticket.Price,
		RequiresPayment: true, HoldsStock: true, CustomerName: "Ama Mensah", CustomerEmail: "ama@example.com",
		CustomerPhone: "+233241234567", SuccessURL: "https://shop.example/ok", CancelURL: "https://shop.example/cancel",
		ExpiresAt: now.Add(15 * time.Minute), CreatedAt: now, UpdatedAt: now,
	}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ok, err := store.HoldStock(ctx, tx, c.Ticket.ID, qty, false, now)
		if err != nil {
			return err
		}
		require.True(t, ok, "the order's stock is available")
		return store.InsertOrder(ctx, tx, o, []store.OrderItem{{TicketID: c.Ticket.ID, Quantity: qty, UnitPrice: *c.Ticket.Price}})
	})
	require.NoError(t, err)
	return o
}

// TestTransitionOrderConcurrent: settlements racing on one pending order
// (a payment callback, a duplicate of it, the expiry sweep) have exactly
// one winner, and the order's held stock moves once, as the winner says:
// into sold when paid, back to available otherwise.
func TestTransitionOrderConcurrent(t *testing.T) {
	tests := []struct {
		name string
		to   []string // one racer each
	}{
		{"OKPaidRacesExpired", []string{store.OrderPaid, store.OrderExpired, store.OrderPaid, store.OrderExpired, store.OrderPaid, store.OrderExpired}},
		{"OKDuplicatePaid", []string{store.OrderPaid, store.OrderPaid, store.OrderPaid, store.OrderPaid, store.OrderPaid, store.OrderPaid}},
		{"OKPaidRacesFailed", []string{store.OrderFailed, store.OrderPaid, store.OrderFailed, store.OrderPaid}},
		{"OKDuplicateExpired", []string{store.OrderExpired, store.OrderExpired, store.OrderExpired}},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				// Other checkouts hold 6 of the ticket: a settlement
				// moves this order's 3, never theirs.
				const qty, others = 3, 6
				c := storetest.MustCatalog(t, db, func(c *storetest.Catalog) {
					c.Ticket.Quantity, c.Ticket.Held = ptr[int64](20), others
				})
				ref := "ord_" + strings.ToLower(tt.name) + "_" + c.Event.Slug
				mustPendingOrder(t, db, storetest.MustApp(t, db), c, ref, qty)

				// Each racer settles as checkout does: move the order, and
				// only if it moved it, its held stock.
				var (
					wg      sync.WaitGroup
					start   = make(chan struct{})
					moved   = make([]bool, len(tt.to))
					results = make([]store.Order, len(tt.to))
					errs    = make([]error, len(tt.to))
				)
				for i, to := range tt.to {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						errs[i] = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
							now := time.Now()
							ok, err := store.TransitionOrder(ctx, tx, ref, to, now, &results[i])
							if err != nil || !ok {
								return err
							}
							moved[i] = true
							items, err := store.OrderItems(ctx, tx, results[i].ID)
							if err != nil {
								return err
							}
							for _, it := range items {
								if err := store.SettleStock(ctx, tx, it.TicketID, it.Quantity, to == store.OrderPaid, now); err != nil {
									return err
								}
							}
							return nil
						})
					}()
				}
				close(start)
				wg.Wait()

				winner := -1
				for i := range tt.to {
					require.NoError(t, errs[i], "racer %d", i)
					if moved[i] {
						require.Equal(t, -1, winner, "racers %d and %d both moved the order", winner, i)
						winner = i
					}
				}
				require.NotEqual(t, -1, winner, "one racer moved the order")
				won := tt.to[winner]
				require.Equal(t, won, results[winner].Status, "the winner receives the updated row")
				require.Equal(t, ref, results[winner].Reference)

				o, err := store.OrderByReference(ctx, db, ref)
				require.NoError(t, err)
				require.Equal(t, won, o.Status)
				ts, err := store.TicketsByIDs(ctx, db, []int64{c.Ticket.ID})
				require.NoError(t, err)
				require.Len(t, ts, 1)
				wantSold := int64(0)
				if won == store.OrderPaid {
					wantSold = qty
				}
				require.Equal(t, [2]int64{wantSold, others}, [2]int64{ts[0].Sold, ts[0].Held}, "sold, held")

				again, err := store.TransitionOrder(ctx, db, ref, store.OrderPaid, time.Now(), new(store.Order))
				require.NoError(t, err)
				require.False(t, again, "a settled order moves no more")
			})
		}
	})
}

// TestPlausibleReference: what may be an order reference. The rule is Go's
// alone (nothing in SQL bounds a reference); what it admits, both databases
// store and find as itself, byte for byte.
func TestPlausibleReference(t *testing.T) {
	tests := []struct {
		name string
		ref  string
		want bool
	}{
		{"OK", "ord_abcdefghijklmnopqrstuvwx", true},
		{"OKSandbox", "sbx_abcdefghijklmnopqrstuvwx", true},
		{"OKOneCharacter", "a", true},
		{"OKMaxLength", "ord_" + strings.Repeat("x", store.MaxReferenceLength-4), true},
		{"OKUpperCaseAndDash", "ORD_Ab-9", true},
		{"ErrEmpty", "", false},
		{"ErrOneTooLong", "ord_" + strings.Repeat("x", store.MaxReferenceLength-3), false},
		{"ErrNULByte", "ord_a\x00b", false},
		{"ErrSpace", "ord_a b", false},
		{"ErrPath", "ord_a/../b", false},
		{"ErrLikeWildcard", "ord_%", false},
		{"ErrNonASCIILetter", "ord_é", false},
		{"ErrInvalidUTF8", "ord_\xff", false},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				require.Equal(t, tt.want, store.PlausibleReference(tt.ref))
				if !tt.want {
					return
				}
				c := storetest.MustCatalog(t, db, func(c *storetest.Catalog) { c.Ticket.Quantity = ptr[int64](1) })
				mustPendingOrder(t, db, storetest.MustApp(t, db), c, tt.ref, 1)
				o, err := store.OrderByReference(ctx, db, tt.ref)
				require.NoError(t, err)
				require.Equal(t, tt.ref, o.Reference)
				if other := strings.ToUpper(tt.ref); other != tt.ref {
					_, err = store.OrderByReference(ctx, db, other)
					require.ErrorIs(t, err, store.ErrNotFound, "references are case-sensitive")
				}
			})
		}
	})
}

// paidOrder is a paid test order of n of c's tickets, not yet stored.
func paidOrder(c *storetest.Catalog, app *store.App, ref string, n int64) *store.Order {
	now := time.Now().UTC().Truncate(time.Second)
	return &store.Order{Reference: ref, AppID: app.ID, Environment: store.EnvTest,
		Status: store.OrderPaid, EventID: c.Event.ID, EventDateID: c.Date.ID, Currency: c.Ticket.Currency,
		TotalAmount: n * *c.Ticket.Price, CustomerName: "Ama Mensah", CustomerEmail: "ama@example.com",
		SuccessURL: "https://shop.example/ok", CancelURL: "https://shop.example/cancel", CreatedAt: now, UpdatedAt: now}
}

// TestInsertOrderItems: an order and its items are stored together (one
// statement on PostgreSQL), and every item gets its own id, in the
// items' order, and the order's id.
func TestInsertOrderItems(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c := storetest.MustCatalog(t, db, nil)
		app := storetest.MustApp(t, db)
		o := paidOrder(c, app, "ord_items_"+c.Event.Slug, 6)
		items := []store.OrderItem{
			{TicketID: c.Ticket.ID, Name: "first", Quantity: 1, UnitPrice: *c.Ticket.Price},
			{TicketID: c.Ticket.ID, Name: "second", Quantity: 2, UnitPrice: *c.Ticket.Price},
			{TicketID: c.Ticket.ID, Name: "third", Quantity: 3, UnitPrice: *c.Ticket.Price},
		}
		require.NoError(t, store.InsertOrder(ctx, db, o, items))
		require.NotZero(t, o.ID)
		stored, err := store.OrderItems(ctx, db, o.ID)
		require.NoError(t, err)
		require.Len(t, stored, 3)
		byID := map[int64]store.OrderItem{}
		for _, it := range stored {
			byID[it.ID] = it
		}
		for _, it := range items {
			require.Equal(t, o.ID, it.OrderID, "%s", it.Name)
			require.Equal(t, it, byID[it.ID], "item %s has the id of its own row", it.Name)
		}
		require.Less(t, items[0].ID, items[1].ID)
		require.Less(t, items[1].ID, items[2].ID)
	})
}

// TestInsertOrders: several orders and their items in one call, each
// order and each item with the id of its own row (on PostgreSQL two
// statements for them all).
func TestInsertOrders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c := storetest.MustCatalog(t, db, nil)
		app := storetest.MustApp(t, db)
		var orders []*store.Order
		var items [][]store.OrderItem
		for i := range 4 {
			orders = append(orders, paidOrder(c, app, fmt.Sprintf("ord_many_%d_%s", i, c.Event.Slug), int64(i+1)))
			var its []store.OrderItem
			for n := range i + 1 { // 1, 2, 3 and 4 items
				its = append(its, store.OrderItem{TicketID: c.Ticket.ID, Name: fmt.Sprintf("order %d item %d", i, n),
					Quantity: 1, UnitPrice: *c.Ticket.Price})
			}
			items = append(items, its)
		}
		q := storetest.Count(db)
		require.NoError(t, store.InsertOrders(ctx, db, orders, items))
		if db.Postgres() {
			require.Equal(t, 2, q.N(), "one statement for the orders, one for every item")
		}
		for i, o := range orders {
			stored, err := store.OrderByReference(ctx, db, o.Reference)
			require.NoError(t, err)
			require.Equal(t, stored.ID, o.ID, "order %d has the id of its own row", i)
			rows, err := store.OrderItems(ctx, db, o.ID)
			require.NoError(t, err)
			require.Len(t, rows, len(items[i]))
			for n, it := range items[i] {
				require.Equal(t, o.ID, it.OrderID)
				require.Equal(t, rows[n], it, "item %q has the id of its own row", it.Name)
			}
		}
	})
}
