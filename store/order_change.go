package store

import (
	"context"
	"strconv"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// ChangeCursor is a place in an app's log of order changes (order_changes,
// one row per order, moved by triggers on every write of the order): a
// reader that has read up to it reads next the orders whose latest change
// comes after it. Tx is the id of the transaction that wrote the change on
// PostgreSQL (0 on SQLite), Seq its number; the order is (Tx, Seq). The
// zero cursor is before every change.
type ChangeCursor struct {
	Tx  uint64
	Seq int64
}

// OrderChange is an order as the change log gives it: its state now, and
// the place of its latest change.
type OrderChange struct {
	Order  *Order
	Cursor ChangeCursor
}

type changedOrder struct {
	Order     `bun:",extend"`
	ChangeTx  string `bun:"change_tx"`
	ChangeSeq int64  `bun:"change_seq"`
}

// OrderChangesAfter returns up to limit orders of an app in one environment
// whose latest change comes after cursor, in the log's order, each with its
// state now; in one statement, so the rows and the horizon below come from
// one snapshot.
//
// On PostgreSQL only changes of transactions older than the oldest one
// still running are returned (the migration says why): a change committed
// by a younger transaction waits until every older one has ended, and a
// transaction held open for long holds every reader back for that long. A
// reader may therefore see fewer rows than limit while more are committed;
// it reads again later from the last cursor it got and misses nothing.
func OrderChangesAfter(ctx context.Context, db bun.IDB, appID int64, env string, after ChangeCursor, limit int) ([]OrderChange, error) {
	rows := []changedOrder{}
	q := db.NewSelect().Model(&rows).ColumnExpr("o.*").
		Join("JOIN order_changes AS c ON c.order_id = o.id").
		Where("c.app_id = ?", appID).Where("c.environment = ?", env)
	if db.Dialect().Name() == dialect.PG {
		q = q.ColumnExpr("c.tx::text AS change_tx, c.seq AS change_seq").
			Where("(c.tx, c.seq) > (?::xid8, ?)", strconv.FormatUint(after.Tx, 10), after.Seq).
			Where("c.tx < pg_snapshot_xmin(pg_current_snapshot())").
			OrderExpr("c.tx, c.seq")
	} else {
		q = q.ColumnExpr("'0' AS change_tx, c.seq AS change_seq").
			Where("c.seq > ?", after.Seq).
			OrderExpr("c.seq")
	}
	if err := q.Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	out := make([]OrderChange, len(rows))
	for i := range rows {
		tx, err := strconv.ParseUint(rows[i].ChangeTx, 10, 64)
		if err != nil {
			return nil, err
		}
		o := rows[i].Order
		o.CreatedAt = o.CreatedAt.UTC()
		out[i] = OrderChange{Order: &o, Cursor: ChangeCursor{Tx: tx, Seq: rows[i].ChangeSeq}}
	}
	return out, nil
}
