package catalog_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func waitVersion(t *testing.T, w *store.Watch, what string, cond func(v uint64) bool) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, ok := w.Version(context.Background())
		if ok && cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCatalogWatch: catalog writes move the version, whoever makes them;
// stock does not; and a lost PostgreSQL listener comes back with a new
// version, so nothing changed meanwhile is missed.
func TestCatalogWatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		l := store.NewListener(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
		defer l.Close()
		w := store.NewCatalogWatch(db, l)
		any := func(uint64) bool { return true }
		v0 := waitVersion(t, w, "the watch to start", any)

		res, err := catalog.Import(ctx, db, mustParse(t, sampleFile), time.Now())
		require.NoError(t, err)
		v1 := waitVersion(t, w, "the import to be seen", func(v uint64) bool { return v != v0 })

		// Stock moves with every checkout and is not the catalog.
		_, err = db.NewUpdate().Model((*store.Ticket)(nil)).Set("held = held + 1").Set("sold = sold + 1").
			Set("updated_at = ?", time.Now().UTC()).Where("id = ?", res.Tickets["TKT-1001-REG"]).Exec(ctx)
		require.NoError(t, err)
		time.Sleep(200 * time.Millisecond)
		v2, ok := w.Version(ctx)
		require.True(t, ok)
		require.Equal(t, v1, v2, "a stock update is not a catalog change")

		for _, change := range []string{
			"UPDATE tickets SET price = price + 1",
			"UPDATE event_dates SET active = FALSE",
			"UPDATE events SET name = 'Renamed'",
			"UPDATE venues SET city = 'Kumasi'",
		} {
			before, _ := w.Version(ctx)
			_, err := db.ExecContext(ctx, change)
			require.NoError(t, err)
			waitVersion(t, w, "change "+change, func(v uint64) bool { return v != before })
		}

		if db.Postgres() {
			before, _ := w.Version(ctx)
			var n int
			require.NoError(t, db.NewRaw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE query = 'LISTEN `+store.CatalogChannel+`' AND pid <> pg_backend_pid()
				AND application_name = current_setting('application_name')`).Scan(ctx, &n))
			require.GreaterOrEqual(t, n, 1, "the listener's connection")
			after := waitVersion(t, w, "the listener to come back", func(v uint64) bool { return v != before })
			require.Greater(t, after, before)
		}
	})
}
