package store

import (
	"context"
	"strconv"

	"github.com/uptrace/bun"
)

// StreamCursor is a place in the stream of webhook events: a reader that
// has read up to it reads next exactly the events written after it. Tx is
// the writing transaction's id on PostgreSQL (0 on SQLite), Seq the row's
// stream number; the order is (Tx, Seq). See the stream migration for why
// a number alone is not enough on PostgreSQL.
type StreamCursor struct {
	Tx  uint64
	Seq int64
}

// StreamEvent is one event as a stream reader gets it.
type StreamEvent struct {
	ID      string
	Type    string
	Payload string
	Cursor  StreamCursor
}

// WebhookStreamStart returns the cursor of "now": a reader starting there
// reads the events committed from now on, and those still being written.
// On PostgreSQL it may also read a few committed a moment before (those of
// transactions younger than one still running): a stream may begin a
// little early, never late.
func WebhookStreamStart(ctx context.Context, db *DB) (StreamCursor, error) {
	if db.Postgres() {
		horizon, err := streamHorizon(ctx, db)
		// Every row of a transaction below the horizon is final, so is
		// already behind; rows of the horizon's transaction (Seq ≥ 1) and
		// later ones are ahead.
		return StreamCursor{Tx: horizon}, err
	}
	var seq int64
	err := db.NewRaw("SELECT COALESCE(MAX(stream_seq), 0) FROM webhook_events").Scan(ctx, &seq)
	return StreamCursor{Seq: seq}, translate(err)
}

// streamHorizon returns the id of the oldest transaction still running
// (or the next one, when none is): every transaction below it has ended,
// so the visible rows of transactions up to it are final. It is read in a
// statement of its own, before the rows: a snapshot taken later sees every
// commit of a transaction below it.
func streamHorizon(ctx context.Context, db bun.IDB) (uint64, error) {
	var s string
	if err := db.NewRaw("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").Scan(ctx, &s); err != nil {
		return 0, translate(err)
	}
	return strconv.ParseUint(s, 10, 64)
}

// WebhookEventCursor returns the cursor of an event of an app in an
// environment; ErrNotFound when it is not one of theirs.
func WebhookEventCursor(ctx context.Context, db *DB, appID int64, env, eventID string) (StreamCursor, error) {
	var row struct {
		Tx  string `bun:"tx"`
		Seq int64  `bun:"seq"`
	}
	tx := "0"
	if db.Postgres() {
		tx = "stream_tx::text"
	}
	err := db.NewSelect().TableExpr("webhook_events").ColumnExpr(tx+" AS tx, stream_seq AS seq").
		Where("id = ?", eventID).Where("app_id = ?", appID).Where("environment = ?", env).
		Limit(1).Scan(ctx, &row)
	if err != nil {
		return StreamCursor{}, translate(err)
	}
	n, err := strconv.ParseUint(row.Tx, 10, 64)
	return StreamCursor{Tx: n, Seq: row.Seq}, err
}

// WebhookEventsAfter returns up to limit events of an app in an
// environment that come after cursor, in stream order, of the given types
// (all types when none). held reports that events after the last one
// returned are committed but not readable yet, because a transaction older
// than theirs is still running (PostgreSQL): the reader should look again
// soon.
func WebhookEventsAfter(ctx context.Context, db *DB, appID int64, env string, types []string, after StreamCursor, limit int) (events []StreamEvent, held bool, err error) {
	var horizon uint64
	q := db.NewSelect().TableExpr("webhook_events").
		Where("app_id = ?", appID).Where("environment = ?", env)
	if db.Postgres() {
		if horizon, err = streamHorizon(ctx, db); err != nil {
			return nil, false, err
		}
		q = q.ColumnExpr("stream_tx::text AS tx").
			Where("(stream_tx, stream_seq) > (?::xid8, ?)", strconv.FormatUint(after.Tx, 10), after.Seq).
			OrderExpr("stream_tx, stream_seq")
	} else {
		q = q.ColumnExpr("'0' AS tx").Where("stream_seq > ?", after.Seq).OrderExpr("stream_seq")
	}
	if len(types) > 0 {
		q = q.Where("type IN (?)", bun.List(types))
	}
	var rows []struct {
		Tx      string `bun:"tx"`
		Seq     int64  `bun:"seq"`
		ID      string `bun:"id"`
		Type    string `bun:"type"`
		Payload string `bun:"payload"`
	}
	err = q.ColumnExpr("stream_seq AS seq, id, type, payload").Limit(int64(limit)).Scan(ctx, &rows)
	if err != nil {
		return nil, false, translate(err)
	}
	for _, r := range rows {
		tx, err := strconv.ParseUint(r.Tx, 10, 64)
		if err != nil {
			return nil, false, err
		}
		if db.Postgres() && tx > horizon {
			// A transaction above the horizon may have an older one still
			// running, whose rows would sort before its own. Rows sort by
			// transaction, so this holds for every row from here on.
			return events, true, nil
		}
		events = append(events, StreamEvent{ID: r.ID, Type: r.Type, Payload: r.Payload, Cursor: StreamCursor{Tx: tx, Seq: r.Seq}})
	}
	return events, false, nil
}
