package store_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// streamApp stores an account and an app, for the events' foreign key.
func streamApp(t *testing.T, db *store.DB, name string) int64 {
	t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	acc := &store.Account{Name: name, Email: name + "@example.com", Status: store.AccountActive, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, store.InsertAccount(ctx, db, acc))
	app := &store.App{AccountID: acc.ID, Name: name, Status: store.AppActive, WebhookSecret: "whsec_x", CreatedAt: now, UpdatedAt: now}
	require.NoError(t, store.InsertApp(ctx, db, app))
	return app.ID
}

var eventSeq atomic.Int64

// insertEvent writes an event of app in env through db (a transaction or not).
func insertEvent(t *testing.T, db bun.IDB, app int64, env, typ string) string {
	t.Helper()
	id := fmt.Sprintf("evt_stream_%d", eventSeq.Add(1))
	require.NoError(t, store.InsertWebhookEvent(context.Background(), db, &store.WebhookEvent{ID: id, AppID: app, Environment: env,
		Type: typ, Payload: `{"id":"` + id + `"}`, Status: store.WebhookPending, CreatedAt: time.Now().UTC()}))
	return id
}

func ids(events []store.StreamEvent) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, e.ID)
	}
	return out
}

func TestWebhookStream(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a, b := streamApp(t, db, "stream-a"), streamApp(t, db, "stream-b")
		before := insertEvent(t, db, a, store.EnvTest, "webhook.test")
		start, err := store.WebhookStreamStart(ctx, db)
		require.NoError(t, err)
		e1 := insertEvent(t, db, a, store.EnvTest, "webhook.test")
		insertEvent(t, db, b, store.EnvTest, "webhook.test")
		insertEvent(t, db, a, store.EnvLive, "order.paid")
		e2 := insertEvent(t, db, a, store.EnvTest, "order.paid")

		after := func(c store.StreamCursor, types []string, limit int) []store.StreamEvent {
			t.Helper()
			var events []store.StreamEvent
			// A committed event is held back only while an older
			// transaction runs, which on a shared server may be another's.
			waitForStream(t, func() bool {
				var held bool
				events, held, err = store.WebhookEventsAfter(ctx, db, a, store.EnvTest, types, c, limit)
				require.NoError(t, err)
				return !held || len(events) == limit
			})
			return events
		}
		all := after(start, nil, 100)
		if len(all) == 3 && db.Postgres() {
			// An event committed just before the start can come too, when
			// an older transaction (of anyone on the server) was running:
			// a stream may begin a moment early, never late.
			require.Equal(t, before, all[0].ID)
			all = all[1:]
		}
		require.Equal(t, []string{e1, e2}, ids(all), "from the start: the app's events of its environment, in order")
		require.Equal(t, `{"id":"`+e1+`"}`, all[0].Payload)
		require.Equal(t, "order.paid", all[1].Type)
		require.Equal(t, []string{e2}, ids(after(all[0].Cursor, nil, 100)))
		require.Equal(t, []string{e2}, ids(after(start, []string{"order.paid"}, 100)))
		require.Empty(t, after(all[1].Cursor, nil, 100))

		c, err := store.WebhookEventCursor(ctx, db, a, store.EnvTest, e1)
		require.NoError(t, err)
		require.Equal(t, all[0].Cursor, c)
		c, err = store.WebhookEventCursor(ctx, db, a, store.EnvTest, before)
		require.NoError(t, err)
		require.Equal(t, []string{e1, e2}, ids(after(c, nil, 100)), "after an event written before the start")
		require.Equal(t, []string{e1}, ids(after(c, nil, 1)), "at most limit")
		for _, bad := range []struct {
			app     int64
			env, id string
		}{{b, store.EnvTest, e1}, {a, store.EnvLive, e1}, {a, store.EnvTest, "evt_nope"}} {
			_, err := store.WebhookEventCursor(ctx, db, bad.app, bad.env, bad.id)
			require.ErrorIs(t, err, store.ErrNotFound, "%+v", bad)
		}
	})
}

// TestWebhookStreamCommitOrder checks the case a plain sequence gets wrong
// on PostgreSQL: an event written first but committed last is neither
// skipped nor sent out of its place.
func TestWebhookStreamCommitOrder(t *testing.T) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("SQLite has one writer at a time: commit order is write order")
	}
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpen(t, "postgres")
	app := streamApp(t, db, "commit-order")
	start, err := store.WebhookStreamStart(ctx, db)
	require.NoError(t, err)

	slow, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer slow.Rollback() //nolint:errcheck // committed below
	first := insertEvent(t, slow, app, store.EnvTest, "webhook.test")
	second := insertEvent(t, db, app, store.EnvTest, "webhook.test") // committed at once

	events, held, err := store.WebhookEventsAfter(ctx, db, app, store.EnvTest, nil, start, 100)
	require.NoError(t, err)
	require.Empty(t, events, "the committed event waits: an older transaction may still add one before it")
	require.True(t, held)

	require.NoError(t, slow.Commit())
	waitForStream(t, func() bool {
		events, held, err = store.WebhookEventsAfter(ctx, db, app, store.EnvTest, nil, start, 100)
		require.NoError(t, err)
		return !held
	})
	require.Equal(t, []string{first, second}, ids(events), "both, in the order they were written")
}

// waitForStream polls cond until it holds (testwait).
func waitForStream(t *testing.T, cond func() bool) {
	t.Helper()
	testwait.For(t, 0, "the stream", cond)
}
