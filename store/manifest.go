package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// xid8 is a PostgreSQL transaction id (64 bits, never wraps) as a
// statement that returns a whole issued_tickets row gives it.
type xid8 uint64

// Scan reads the id in whichever form the driver hands it over.
func (x *xid8) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*x = 0
	case int64:
		*x = xid8(v)
	case uint64:
		*x = xid8(v)
	case string:
		return x.parse(v)
	case []byte:
		return x.parse(string(v))
	default:
		return fmt.Errorf("store: read a transaction id from %T", src)
	}
	return nil
}

func (x *xid8) parse(s string) error {
	n, err := strconv.ParseUint(s, 10, 64)
	*x = xid8(n)
	return err
}

// ManifestCursor is a place in the manifest of an event date: a scanner
// that has read up to it reads next the tickets whose latest change comes
// after it. Tx is the writing transaction's id on PostgreSQL (0 on
// SQLite), Seq the change's number; the order is (Tx, Seq). The zero
// cursor is before every change. The offline door migration says why.
type ManifestCursor struct {
	Tx  uint64
	Seq int64
}

// ManifestTicket is a ticket as a date's manifest lists it, with the
// place of its latest change.
type ManifestTicket struct {
	PublicID       string `bun:"public_id"`
	Code           string `bun:"code"`
	TicketName     string `bun:"ticket_name"`
	Position       int64  `bun:"position"`
	TicketsInOrder int64  `bun:"tickets_in_order"`
	Status         string `bun:"status"`
	Inside         bool   `bun:"inside"`
	ChangeTx       string `bun:"change_tx"`
	ChangeSeq      int64  `bun:"change_seq"`
	// Final reports that no change can come before this one any more:
	// every transaction that could still commit one has ended
	// (PostgreSQL; always true on SQLite).
	Final  bool `bun:"final"`
	Cursor ManifestCursor
}

// ManifestAfter returns up to limit tickets of an event date in one
// environment whose latest change comes after cursor, in the log's
// order, each as it is now, and whether more follow. It reads one range
// of issued_tickets_manifest_idx, in one statement.
//
// On PostgreSQL a change is Final once its transaction is older than the
// oldest one still running anywhere on the server: a transaction still
// running may yet commit a change that sorts before a change that is not
// final, so a reader must not move its place past a change that is not
// final for good, only page through it (checkin.Service.Manifest keeps
// both places). Non-final changes are returned at once all the same: a
// long transaction elsewhere (a catalog import) must not keep a door from
// seeing the tickets just sold.
func ManifestAfter(ctx context.Context, db bun.IDB, env string, dateID int64, after ManifestCursor, limit int) (tickets []ManifestTicket, more bool, err error) {
	rows := []ManifestTicket{}
	if err := manifestQuery(db, env, dateID, after, limit).Scan(ctx, &rows); err != nil {
		return nil, false, translate(err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	for i := range rows {
		tx, err := strconv.ParseUint(rows[i].ChangeTx, 10, 64)
		if err != nil {
			return nil, false, err
		}
		rows[i].Cursor = ManifestCursor{Tx: tx, Seq: rows[i].ChangeSeq}
	}
	return rows, more, nil
}

// manifestQuery is ManifestAfter's statement, one row more than limit.
func manifestQuery(db bun.IDB, env string, dateID int64, after ManifestCursor, limit int) *bun.SelectQuery {
	q := db.NewSelect().Table("issued_tickets").
		Column("public_id", "code", "ticket_name", "position", "tickets_in_order", "status", "inside", "change_seq").
		Where("event_date_id = ?", dateID).Where("environment = ?", env)
	if db.Dialect().Name() == dialect.PG {
		q = q.ColumnExpr("change_tx::text AS change_tx").
			ColumnExpr("change_tx < pg_snapshot_xmin(pg_current_snapshot()) AS final").
			Where("(change_tx, change_seq) > (?::xid8, ?)", strconv.FormatUint(after.Tx, 10), after.Seq).
			OrderExpr("change_tx, change_seq")
	} else {
		q = q.ColumnExpr("'0' AS change_tx").ColumnExpr("TRUE AS final").Where("change_seq > ?", after.Seq).OrderExpr("change_seq")
	}
	return q.Limit(int64(limit) + 1)
}
