package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// holdRace has workers take qty of one ticket at once, each in a
// transaction of its own as a checkout does, selling instead of holding
// when sell says so. It returns how many holds and sales succeeded.
func holdRace(t *testing.T, db *store.DB, ticketID, qty int64, workers int, sell func(i int) bool) (held, sold int64) {
	t.Helper()
	ctx := context.Background()
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make(chan error, workers)
	)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				ok, err := store.HoldStock(ctx, tx, ticketID, qty, sell(i), time.Now())
				if err != nil || !ok {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				if sell(i) {
					sold++
				} else {
					held++
				}
				return nil
			})
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return held, sold
}

// TestHoldStockConcurrent: however many checkouts race for one ticket,
// exactly what its quantity leaves is taken, never more.
func TestHoldStockConcurrent(t *testing.T) {
	never := func(int) bool { return false }
	odd := func(i int) bool { return i%2 == 1 }
	tests := []struct {
		name       string
		quantity   *int64 // nil: unlimited
		sold, held int64  // before the race
		qty        int64
		sell       func(i int) bool
		wins       int64 // how many takes succeed
	}{
		{"OKHolds", ptr[int64](5), 0, 0, 1, never, 5},
		{"OKHoldsAndSells", ptr[int64](7), 0, 0, 1, odd, 7},
		{"OKAfterEarlierSalesAndHolds", ptr[int64](10), 3, 2, 1, odd, 5},
		{"OKTakesOfTwo", ptr[int64](9), 0, 1, 2, odd, 4},
		{"OKUnlimited", nil, 0, 0, 3, odd, 24},
		{"ErrSoldOut", ptr[int64](4), 3, 1, 1, odd, 0},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := storetest.MustCatalog(t, db, func(c *storetest.Catalog) {
					c.Ticket.Quantity, c.Ticket.Sold, c.Ticket.Held = tt.quantity, tt.sold, tt.held
				})
				held, sold := holdRace(t, db, c.Ticket.ID, tt.qty, 24, tt.sell)
				require.Equal(t, tt.wins, held+sold, "takes that succeeded")

				ts, err := store.TicketsByIDs(context.Background(), db, []int64{c.Ticket.ID})
				require.NoError(t, err)
				require.Len(t, ts, 1)
				require.Equal(t, tt.sold+sold*tt.qty, ts[0].Sold, "sold")
				require.Equal(t, tt.held+held*tt.qty, ts[0].Held, "held")
				if tt.quantity != nil {
					require.LessOrEqual(t, ts[0].Sold+ts[0].Held, *tt.quantity, "never oversold")
					require.Less(t, *tt.quantity-ts[0].Sold-ts[0].Held, tt.qty, "no take that fitted was refused")
				}
			})
		}
	})
}

func ptr[T any](v T) *T { return &v }
