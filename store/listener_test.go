package store_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// listenerPIDs returns the backends of this test's schema that LISTEN to
// the service's channels (River's own listener, `LISTEN "schema.river_…"`,
// is not one of them).
func listenerPIDs(t *testing.T, db *store.DB) []int {
	t.Helper()
	var pids []int
	require.NoError(t, db.NewRaw(`SELECT pid FROM pg_stat_activity
		WHERE application_name = current_setting('application_name') AND query LIKE 'LISTEN boxoffice%'`).
		Scan(context.Background(), &pids))
	return pids
}

// waitUntil polls cond until it holds (testwait).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, 0, what, cond)
}

// receive returns the next value of ch, waiting until testwait's deadline.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-testwait.After(t, 0):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}

// TestListener: on PostgreSQL one LISTEN connection per process serves the
// catalog watch, the webhook event watch and live changes; when its
// backend is terminated it comes back, tells every subscriber it may have
// missed notifications, and hands out new ones again. On SQLite it opens
// nothing, and readers poll.
func TestListener(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		l := store.NewListener(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
		t.Cleanup(l.Close)
		// The live subscriber comes first and starts the listener, so it
		// hears the first connection too.
		// The database is shared with other tests, whose changes are
		// notified too: only this schema's are kept.
		live := make(chan store.Notification, 100)
		stopLive := l.Subscribe(store.LiveChannel, func(n store.Notification) {
			if n.Missed || strings.Contains(n.Payload, n.Schema) {
				live <- n
			}
		})
		defer stopLive()
		hooks := store.NewWebhookWatch(db, l)
		defer hooks.Close()
		app := streamApp(t, db, "listener")
		wake, stopWake := hooks.Subscribe(app, store.EnvTest)
		defer stopWake()
		catalog := store.NewCatalogWatch(db, l)
		venue := func(ref string) {
			t.Helper()
			now := time.Now().UTC()
			_, err := db.NewInsert().Model(&store.Venue{Reference: ref, Name: ref, Slug: ref, CreatedAt: now, UpdatedAt: now}).Exec(ctx)
			require.NoError(t, err)
		}

		if !db.Postgres() {
			v0, ok := catalog.Version(ctx)
			require.True(t, ok, "SQLite's catalog counter is read, not heard")
			require.False(t, l.Listening())
			venue("V-1")
			v1, ok := catalog.Version(ctx)
			require.True(t, ok)
			require.NotEqual(t, v0, v1)
			insertEvent(t, db, app, store.EnvTest, "webhook.test")
			select {
			case <-wake:
				t.Fatal("SQLite has no notifications: event streams poll")
			case n := <-live:
				t.Fatalf("SQLite has no notifications: live polls; got %+v", n)
			case <-time.After(100 * time.Millisecond):
			}
			return
		}

		require.True(t, receive(t, live, "the first connection").Missed)
		waitUntil(t, "the catalog watch to listen", func() bool { _, ok := catalog.Version(ctx); return ok })
		pids := listenerPIDs(t, db)
		require.Len(t, pids, 1, "one listening connection for every subscriber")

		heard := func(t *testing.T) {
			t.Helper()
			before, _ := catalog.Version(ctx)
			venue("V-" + time.Now().Format("150405.000000000"))
			waitUntil(t, "the catalog change", func() bool { v, ok := catalog.Version(ctx); return ok && v != before })
			// One goroutine hands out everything in order: the wake for
			// the connection, if any, came before the catalog change.
			select {
			case <-wake:
			default:
			}

			insertEvent(t, db, app, store.EnvTest, "webhook.test")
			receive(t, wake, "the webhook event's wake")

			// Notifications of another schema (another deployment on the
			// same database) arrive but concern no one here.
			_, err := db.ExecContext(ctx, "SELECT pg_notify(?, 'stock 41 ' || current_schema() || '_elsewhere')", store.LiveChannel)
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, "SELECT pg_notify(?, 'stock 42 ' || current_schema())", store.LiveChannel)
			require.NoError(t, err)
			_, _, ok := store.LiveChange(receive(t, live, "the other schema's change"))
			require.False(t, ok)
			kind, key, ok := store.LiveChange(receive(t, live, "the live change"))
			require.True(t, ok)
			require.Equal(t, []string{store.LiveStock, "42"}, []string{kind, key})
		}
		heard(t)
		require.Equal(t, pids, listenerPIDs(t, db), "still the one connection")

		t.Run("Reconnect", func(t *testing.T) {
			before, _ := catalog.Version(ctx)
			var n int
			require.NoError(t, db.NewRaw("SELECT count(pg_terminate_backend(?))", pids[0]).Scan(ctx, &n))
			require.Equal(t, 1, n)

			require.True(t, receive(t, live, "the news of the reconnection").Missed)
			receive(t, wake, "the webhook streams' wake on reconnection")
			after, ok := catalog.Version(ctx)
			require.True(t, ok, "listening again")
			require.Greater(t, after, before, "the catalog may have changed meanwhile")
			waitUntil(t, "one new listening connection", func() bool {
				again := listenerPIDs(t, db)
				return len(again) == 1 && again[0] != pids[0]
			})
			heard(t)
		})
	})
}
