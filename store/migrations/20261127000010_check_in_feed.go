package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// The door's live feed (GraphQL's checkIns subscription): the scans of a
// date in the order their transactions became final, so a follower that
// moves past the last scan it sent never skips one.
//
// A scan's row id is taken when the row is written, not when it commits:
// two doors scanning at once may commit 11 before 10, and a follower that
// had read 11 would never see 10. On PostgreSQL each row therefore also
// records the id of the transaction that wrote it (feed_tx), and the feed
// reads by (feed_tx, id) only the rows of transactions older than every
// transaction still running, as the webhook stream and the order changes
// do (20261122000020_webhook_stream.go, 20261126000030_order_sync.go).
// SQLite has one writer at a time, so commit order is id order, and the
// existing check_ins_date_idx serves the feed.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != dialect.PG {
			return nil
		}
		return execAll(ctx, db,
			`ALTER TABLE check_ins ADD COLUMN feed_tx xid8 NOT NULL DEFAULT pg_current_xact_id()`,
			`CREATE INDEX check_ins_feed_idx ON check_ins (event_date_id, environment, feed_tx, id)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != dialect.PG {
			return nil
		}
		return execAll(ctx, db,
			`DROP INDEX check_ins_feed_idx`,
			`ALTER TABLE check_ins DROP COLUMN feed_tx`,
		)
	})
}
