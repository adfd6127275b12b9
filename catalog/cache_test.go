package catalog_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func waitVersion(t *testing.T, w *store.CatalogWatch, what string, cond func(v uint64) bool) uint64 {
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

type fakeVersions struct {
	v  atomic.Uint64
	ok atomic.Bool
}

func (f *fakeVersions) Version(context.Context) (uint64, bool) { return f.v.Load(), f.ok.Load() }

// TestCache: values are kept until the version moves or the next date ends,
// never across either, and within the budget.
func TestCache(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		_, err := catalog.Import(ctx, db, mustParse(t, sampleFile), time.Now())
		require.NoError(t, err)
		end := time.Date(2026, 12, 25, 2, 0, 0, 0, time.UTC) // DATE-1001-1 ends
		var clock atomic.Int64
		clock.Store(end.Add(-time.Hour).UnixNano())
		now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
		vs := &fakeVersions{}
		vs.ok.Store(true)
		c := catalog.NewCache(db, vs, now, 10)
		get := func(key string) (any, bool) { return c.Snapshot().Get(ctx, key) }

		_, hit := get("a")
		require.False(t, hit)
		s := c.Snapshot()
		s.Put(ctx, "a", 1, 1)
		v, hit := get("a")
		require.True(t, hit)
		require.Equal(t, 1, v)

		t.Run("VersionMoves", func(t *testing.T) {
			stale := c.Snapshot()
			_, _ = stale.Get(ctx, "x") // looks before the change
			vs.v.Add(1)
			_, hit := get("a")
			require.False(t, hit, "kept across a catalog change")
			stale.Put(ctx, "b", 2, 1)
			_, hit = get("b")
			require.False(t, hit, "a value read before the change was kept after it")
		})
		t.Run("DateEnds", func(t *testing.T) {
			c.Snapshot().Put(ctx, "a", 1, 1)
			clock.Store(end.Add(-time.Nanosecond).UnixNano())
			_, hit := get("a")
			require.True(t, hit, "still before the date ends")
			clock.Store(end.UnixNano())
			_, hit = get("a")
			require.False(t, hit, "kept after a date ended")
			c.Snapshot().Put(ctx, "a", 1, 1)
			clock.Store(end.Add(24 * time.Hour).UnixNano())
			_, hit = get("a")
			require.True(t, hit, "no date ends any more")
		})
		t.Run("Budget", func(t *testing.T) {
			s := c.Snapshot()
			s.Put(ctx, "big1", 1, 6)
			s.Put(ctx, "big2", 2, 6)
			_, hit := get("big1")
			require.False(t, hit, "over budget: starts over")
			_, hit = get("big2")
			require.True(t, hit)
		})
		t.Run("Unknown", func(t *testing.T) {
			vs.ok.Store(false)
			defer vs.ok.Store(true)
			_, hit := get("big2")
			require.False(t, hit, "nothing is served while changes cannot be told")
			c.Snapshot().Put(ctx, "c", 3, 1)
			vs.ok.Store(true)
			_, hit = get("c")
			require.False(t, hit, "nothing is kept while changes cannot be told")
		})
		t.Run("Nil", func(t *testing.T) {
			var none *catalog.Cache
			s := none.Snapshot()
			s.Put(ctx, "a", 1, 1)
			_, hit := s.Get(ctx, "a")
			require.False(t, hit)
			loads := 0
			for range 2 {
				v, err := catalog.Cached(ctx, s, "a", func(int) int { return 1 }, func() (int, error) { loads++; return 7, nil })
				require.NoError(t, err)
				require.Equal(t, 7, v)
			}
			require.Equal(t, 2, loads)
		})
	})
}
