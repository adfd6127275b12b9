package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestBoundReads covers the reads whose arguments are bound parameters
// rather than Bun's inlined text: what they return on both databases, and
// that a query hook counts each as one statement.
func TestBoundReads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		counter := storetest.Count(db)

		t.Run("KeyOwnerByHash", func(t *testing.T) {
			acc := &store.Account{Name: "A", Email: "owner@example.com", Status: store.AccountPendingApproval, CreatedAt: now, UpdatedAt: now}
			require.NoError(t, store.InsertAccount(ctx, db, acc))
			app := &store.App{AccountID: acc.ID, Name: "App", Status: store.AppSuspended, WebhookSecret: "whsec_x", CreatedAt: now, UpdatedAt: now}
			require.NoError(t, store.InsertApp(ctx, db, app))
			key := &store.APIKey{AppID: app.ID, Environment: store.EnvLive, KeyHash: "hash-live", Hint: "abcd", CreatedAt: now}
			require.NoError(t, store.InsertAPIKey(ctx, db, key))

			counter.Reset()
			o, err := store.KeyOwnerByHash(ctx, db, "hash-live")
			require.NoError(t, err)
			require.Equal(t, 1, counter.N())
			require.Equal(t, store.KeyOwner{KeyID: key.ID, Environment: store.EnvLive, AppID: app.ID, AppStatus: store.AppSuspended,
				AccountID: acc.ID, AccountStatus: store.AccountPendingApproval}, *o)

			n, err := store.RevokeAPIKeys(ctx, db, app.ID, store.EnvLive, now)
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
			o, err = store.KeyOwnerByHash(ctx, db, "hash-live")
			require.NoError(t, err)
			require.True(t, o.Revoked)

			_, err = store.KeyOwnerByHash(ctx, db, "hash-unknown")
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("StockOfDates", func(t *testing.T) {
			ev := &store.Event{Reference: "ev-stock", Name: "E", Slug: "e", Timezone: "UTC", Published: true, CreatedAt: now, UpdatedAt: now}
			_, err := db.NewInsert().Model(ev).Exec(ctx)
			require.NoError(t, err)
			var dates []int64
			for i := range 3 {
				d := &store.EventDate{Reference: fmt.Sprint("d-stock-", i), EventID: ev.ID, StartAt: now, EndAt: now.Add(time.Hour), Active: true, CreatedAt: now, UpdatedAt: now}
				_, err := db.NewInsert().Model(d).Exec(ctx)
				require.NoError(t, err)
				dates = append(dates, d.ID)
			}
			ten := int64(10)
			var want []store.Stock
			// Inserted out of order, so the order of the answer is the query's.
			for _, i := range []int{2, 0, 1, 0} {
				tk := &store.Ticket{Reference: fmt.Sprint("t-stock-", len(want)), EventDateID: dates[i], Name: "T", Currency: "GHS",
					Sold: int64(len(want)), Held: 1, CreatedAt: now, UpdatedAt: now}
				s := store.Stock{EventDateID: dates[i], Sold: tk.Sold, Held: 1}
				if i == 0 {
					tk.Quantity = &ten
					s.Quantity = sql.NullInt64{Int64: 10, Valid: true}
				}
				_, err := db.NewInsert().Model(tk).Exec(ctx)
				require.NoError(t, err)
				s.ID = tk.ID
				want = append(want, s)
			}
			// Ordered by date, then ticket id.
			want = []store.Stock{want[1], want[3], want[2], want[0]}

			counter.Reset()
			got, err := store.StockOfDates(ctx, db, []int64{dates[2], dates[0], dates[1], 424242})
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Equal(t, 1, counter.N())

			got, err = store.StockOfDates(ctx, db, []int64{dates[1]})
			require.NoError(t, err)
			require.Equal(t, want[2:3], got)

			counter.Reset()
			got, err = store.StockOfDates(ctx, db, nil)
			require.NoError(t, err)
			require.Empty(t, got)
			require.Zero(t, counter.N())
		})
	})
}

// TestInlinedStatementsUnprepared checks that on PostgreSQL a statement
// without arguments (Bun's, arguments inlined) runs unnamed, leaving no
// prepared statement on the connection, while one with bound parameters is
// prepared once and kept.
func TestInlinedStatementsUnprepared(t *testing.T) {
	if !slices.Contains(storetest.Kinds(), "postgres") {
		t.Skip("PostgreSQL only; TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	db := storetest.MustOpen(t, "postgres")
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	prepared := func(marker string) int {
		var n int
		require.NoError(t, conn.NewRaw("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE ?", "%"+marker+"%").Scan(ctx, &n))
		return n
	}
	var n int
	require.NoError(t, conn.NewRaw("SELECT 1 AS inlined_marker WHERE 1 = ?", 1).Scan(ctx, &n))
	require.Equal(t, 1, n)
	require.Zero(t, prepared("inlined_marker"))

	require.NoError(t, conn.Conn.QueryRowContext(ctx, "SELECT 2 AS bound_marker WHERE 1 = $1", 1).Scan(&n))
	require.Equal(t, 2, n)
	require.Equal(t, 1, prepared("bound_marker"))
}
