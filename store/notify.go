package store

import (
	"context"
	"log/slog"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// RunInTxNotifyAfter runs fn in a transaction, as RunInTx does, except
// that on PostgreSQL the notifications its triggers raise are sent after
// the commit, in a statement of their own, instead of by the transaction
// itself (see migration 20261129000010_notify_after_commit: a notifying
// transaction holds a database-wide lock through its commit's flush, so
// such commits cannot share flushes). It is for hot write paths whose
// commits would otherwise queue behind each other's flushes — scans at the
// door — and costs three small statements (the setting, reading what is
// pending, the notification), so it is not for paths counted in
// statements: a checkout create stays at one commit and six statements,
// and its flash-sale batches already share one notifying commit.
//
// Listeners hear of the change the moment after it is visible instead of
// at the moment it is, which no reader can tell apart. Should the
// notifying statement fail (the database gone between the two), the
// change stays committed and its notifications are lost; this is logged,
// and the next change of the same thing notifies again.
func (db *DB) RunInTxNotifyAfter(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if !db.Postgres() {
		return db.RunInTx(ctx, nil, fn)
	}
	var pending string
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT set_config('boxoffice.notify_after_commit', 'on', true)"); err != nil {
			return err
		}
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return tx.NewRaw("SELECT coalesce(current_setting('boxoffice.pending_notifies', true), '')").Scan(ctx, &pending)
	})
	if err != nil || pending == "" {
		return err
	}
	channels, payloads := parsePending(pending)
	// The commit happened: a client that leaves now does not undo it, and
	// must not keep the others from hearing of it.
	if _, nerr := db.ExecContext(context.WithoutCancel(ctx),
		"SELECT pg_notify(n.channel, n.payload) FROM unnest(?::text[], ?::text[]) AS n(channel, payload)",
		pgdialect.Array(channels), pgdialect.Array(payloads)); nerr != nil {
		slog.Default().Warn("store: notifications after commit were not sent", "count", len(channels), "err", nerr)
	}
	return nil
}

// parsePending splits boxoffice.pending_notifies ("CHANNEL\tPAYLOAD\n"
// lines) into channels and payloads.
func parsePending(pending string) (channels, payloads []string) {
	for line := range strings.SplitSeq(strings.TrimSuffix(pending, "\n"), "\n") {
		c, p, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		channels, payloads = append(channels, c), append(payloads, p)
	}
	return channels, payloads
}
