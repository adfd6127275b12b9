package store_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// TestNotifyAfterCommit: a transaction run by RunInTxNotifyAfter sends
// the notifications its triggers raise after it commits — the same ones,
// in the same order, identical ones folded, as a transaction that
// notifies itself — and a transaction that rolls back sends none. On
// SQLite it is RunInTx.
func TestNotifyAfterCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a := storetest.MustCatalog(t, db, nil)
		b := storetest.MustCatalog(t, db, nil)
		hold := func(ctx context.Context, tx bun.Tx) error {
			for _, id := range []int64{a.Ticket.ID, a.Ticket.ID, b.Ticket.ID} {
				if _, err := tx.ExecContext(ctx, "UPDATE tickets SET held = held + 1 WHERE id = ?", id); err != nil {
					return err
				}
			}
			return nil
		}
		heldNow := func() int64 {
			var n int64
			require.NoError(t, db.NewRaw("SELECT held FROM tickets WHERE id = ?", a.Ticket.ID).Scan(ctx, &n))
			return n
		}
		refused := errors.New("refused")
		if !db.Postgres() {
			require.NoError(t, db.RunInTxNotifyAfter(ctx, hold))
			require.ErrorIs(t, db.RunInTxNotifyAfter(ctx, func(ctx context.Context, tx bun.Tx) error {
				require.NoError(t, hold(ctx, tx))
				return refused
			}), refused)
			require.Equal(t, int64(2), heldNow(), "the first committed, the second rolled back")
			return
		}

		l := store.NewListener(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
		t.Cleanup(l.Close)
		live := make(chan store.Notification, 100)
		stop := l.Subscribe(store.LiveChannel, func(n store.Notification) { live <- n })
		defer stop()
		require.True(t, receive(t, live, "the first connection").Missed)
		// heard returns the live changes of this schema heard until a
		// marker sent after them arrives.
		heard := func() []string {
			t.Helper()
			_, err := db.ExecContext(ctx, "SELECT pg_notify(?, 'marker 0 ' || current_schema())", store.LiveChannel)
			require.NoError(t, err)
			var got []string
			for {
				kind, key, ok := store.LiveChange(receive(t, live, "the marker"))
				if kind == "marker" {
					return got
				}
				if ok {
					got = append(got, kind+" "+key)
				}
			}
		}
		heard() // the catalog's own inserts
		want := []string{"stock " + strconv.FormatInt(a.Date.ID, 10), "stock " + strconv.FormatInt(b.Date.ID, 10)}

		require.NoError(t, db.RunInTx(ctx, nil, hold))
		require.Equal(t, want, heard(), "notified by the transaction itself")
		require.NoError(t, db.RunInTxNotifyAfter(ctx, func(ctx context.Context, tx bun.Tx) error {
			require.NoError(t, hold(ctx, tx))
			// Kept for after the commit, not notified by the transaction.
			var pending string
			require.NoError(t, tx.NewRaw("SELECT current_setting('boxoffice.pending_notifies', true)").Scan(ctx, &pending))
			require.Equal(t, "boxoffice_live\t"+want[0]+" "+schemaOf(t, tx)+"\nboxoffice_live\t"+want[1]+" "+schemaOf(t, tx)+"\n", pending)
			return nil
		}))
		require.Equal(t, want, heard(), "notified after the commit")
		require.ErrorIs(t, db.RunInTxNotifyAfter(ctx, func(ctx context.Context, tx bun.Tx) error {
			require.NoError(t, hold(ctx, tx))
			return refused
		}), refused)
		require.Empty(t, heard(), "a transaction rolled back notifies nothing")
		require.Equal(t, int64(4), heldNow())

		// The setting ends with its transaction: the connection's next
		// transaction notifies itself again.
		conn, err := db.Conn(ctx)
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, "SELECT set_config('boxoffice.notify_after_commit', 'on', true)")
			return err
		}))
		require.NoError(t, conn.RunInTx(ctx, nil, hold))
		require.Equal(t, want, heard(), "a later transaction on the same connection")
	})
}

func schemaOf(t *testing.T, tx bun.Tx) string {
	t.Helper()
	var s string
	require.NoError(t, tx.NewRaw("SELECT current_schema()").Scan(context.Background(), &s))
	return s
}
