package main

import (
	"context"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestChangeNotifications: one server follows the catalog (its cache), live
// stock (a subscription) and webhook events (an event stream) at once. On
// PostgreSQL all three are heard on the process's one LISTEN connection
// (event streams never poll here, so each event arrives by notification),
// and after that connection's backend is terminated a new one serves all
// three again. On SQLite each is polled, as before.
func TestChangeNotifications(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := liveSetup(t, db, func(c *Config) {
			if db.Postgres() {
				c.WebhookStreams.Poll = time.Hour
			}
		})
		ctx := context.Background()
		ids := tb.demo.Catalog
		date, reg := ids.EventDates["DEMO-HIGHLIFE-1"], ids.Tickets["DEMO-HIGHLIFE-REG"]
		stream := tb.openStream(t, tb.testKey, "")
		require.Equal(t, "ready", stream.next(t).event)
		c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
		require.NoError(t, err)
		c.subscribe("stock", availabilitySub, map[string]any{"d": date})
		available := availability(t, c.next("stock"))[reg]
		tb.catalogWatched(t)

		city := 0
		heard := func(t *testing.T) {
			t.Helper()
			city++
			tb.changeCatalog(t, func() {
				_, err := db.NewUpdate().Model((*store.Venue)(nil)).Set("city = ?", "City "+string(rune('A'+city))).Where("1 = 1").Exec(ctx)
				require.NoError(t, err)
			})
			_, err := db.NewUpdate().Model((*store.Ticket)(nil)).Set("held = held + 1").Where("id = ?", reg).Exec(ctx)
			require.NoError(t, err)
			available--
			require.Equal(t, available, availability(t, c.next("stock"))[reg])
			id := tb.emitTest(t, store.EnvTest)
			require.Equal(t, id, stream.next(t).id)
			if db.Postgres() {
				require.Equal(t, 1, listeners(t, db), "one LISTEN connection for the catalog, live and event streams")
			}
		}
		heard(t)
		if !db.Postgres() {
			return
		}

		t.Run("Reconnect", func(t *testing.T) {
			var n int
			require.NoError(t, db.NewRaw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE application_name = current_setting('application_name') AND query LIKE 'LISTEN boxoffice%'`).Scan(ctx, &n))
			require.Equal(t, 1, n)
			heard(t)
		})
	})
}
