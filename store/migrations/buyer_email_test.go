package migrations_test

import (
	"context"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/migrations"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/migrate"
)

// TestBuyerEmailMigration: counters of live free tickets written before
// buyers were normalised move onto their buyer's scope, each day's
// quantities added together; other counters stay as they were.
func TestBuyerEmailMigration(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, err := store.Open(ctx, storetest.FreshURL(t, kind))
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })

			before := migrate.NewMigrations()
			for _, m := range migrations.Migrations.Sorted() {
				if m.Name < "20261123000020" {
					before.Add(m)
				}
			}
			m := migrate.NewMigrator(db.DB, before)
			require.NoError(t, m.Init(ctx))
			_, err = m.Migrate(ctx)
			require.NoError(t, err)

			type row struct {
				Scope    string `bun:"scope"`
				Day      string `bun:"day"`
				Quantity int64  `bun:"quantity"`
			}
			old := []row{
				{"buyer:cap@example.com:event:5", "2026-11-23", 3},
				{"buyer:cap+1@example.com:event:5", "2026-11-23", 4},
				{"buyer:cap+2@example.com:event:5", "2026-11-23", 1},
				{"buyer:cap+1@example.com:event:5", "2026-11-22", 2},
				{"buyer:other+x@example.com:event:6", "2026-11-23", 1},
				{"buyer:+solo@example.com:event:6", "2026-11-23", 1},
				{"app:7", "2026-11-23", 9},
			}
			for _, r := range old {
				_, err := db.NewRaw("INSERT INTO free_ticket_usage (scope, day, quantity) VALUES (?, ?, ?)", r.Scope, r.Day, r.Quantity).Exec(ctx)
				require.NoError(t, err)
			}

			require.NoError(t, store.Migrate(ctx, db))
			var got []row
			require.NoError(t, db.NewSelect().TableExpr("free_ticket_usage").Column("scope", "day", "quantity").
				OrderExpr("scope, day").Scan(ctx, &got))
			require.Equal(t, []row{
				{"app:7", "2026-11-23", 9},
				{"buyer:+solo@example.com:event:6", "2026-11-23", 1},
				{"buyer:cap@example.com:event:5", "2026-11-22", 2},
				{"buyer:cap@example.com:event:5", "2026-11-23", 8},
				{"buyer:other@example.com:event:6", "2026-11-23", 1},
			}, got)
			used, err := store.FreeUsage(ctx, db, store.BuyerScope("cap@example.com", 5), "2026-11-23")
			require.NoError(t, err)
			require.EqualValues(t, 8, used)
		})
	}
}
