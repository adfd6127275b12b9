package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// orderListIndexes serve GET /api/v1/orders (store.ListOrders): an app's
// orders of one environment, newest first by (created_at, reference), with
// any of the filters status, event_id and event_date_id. Each supported
// combination has an index whose columns after the equalities are the
// sort key, so a page is a range scan of limit+1 entries whatever the
// filters and however deep the cursor. event_id together with
// event_date_id uses the date's index (a date belongs to one event).
// orders_list_idx also serves the portal's recent orders, as the index it
// replaces did.
var orderListIndexes = []string{
	`CREATE INDEX orders_list_idx ON orders (app_id, environment, created_at, reference)`,
	`CREATE INDEX orders_list_status_idx ON orders (app_id, environment, status, created_at, reference)`,
	`CREATE INDEX orders_list_event_idx ON orders (app_id, environment, event_id, created_at, reference)`,
	`CREATE INDEX orders_list_event_status_idx ON orders (app_id, environment, event_id, status, created_at, reference)`,
	`CREATE INDEX orders_list_date_idx ON orders (app_id, environment, event_date_id, created_at, reference)`,
	`CREATE INDEX orders_list_date_status_idx ON orders (app_id, environment, event_date_id, status, created_at, reference)`,
}

// Order sync (spec/fulfilment.md section 5): the order list's indexes, and
// the change log behind GET /api/v1/order-changes.
//
// order_changes holds one row per order, written by triggers on every
// INSERT of an order and every UPDATE that changes its row, in the
// writing transaction, whoever writes: checkout, settlement, the expiry
// sweep, the ticket email's state, the door's check-ins and voids (which
// touch the order's updated_at). Tickets are issued in the transaction
// that moves their order to paid, so that move covers them. A reader
// follows the log by position and reads each order's state as it is now.
//
// On PostgreSQL a row's position is (tx, seq): the id of the writing
// transaction (pg_current_xact_id(), 64 bits, never wraps) and a number
// from a sequence. Numbers and transaction ids are taken when rows are
// written, not when they commit, so a reader that simply moved past the
// largest position it saw would skip a row of a transaction that was
// still open and commits later with a smaller position. Readers therefore
// only read rows whose transaction is older than the oldest transaction
// still running (pg_snapshot_xmin of the reading statement's snapshot):
// every such transaction has ended, its rows are visible, and every row
// written from now on belongs to a transaction at or above that horizon,
// so sorts after everything read. A row rewritten by a later transaction
// moves to that transaction's position. Within one transaction the first
// write places the row; later writes of the same order leave it (the
// reader sees them together at commit).
//
// SQLite has one writer at a time and commit order is write order: a row's
// position is one above the largest so far.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		stmts := append([]string{`DROP INDEX orders_app_env_idx`}, orderListIndexes...)
		if db.Dialect().Name() == dialect.PG {
			return execAll(ctx, db, append(stmts,
				`CREATE TABLE order_changes (
					order_id BIGINT PRIMARY KEY REFERENCES orders (id),
					app_id BIGINT NOT NULL,
					environment TEXT NOT NULL,
					tx xid8 NOT NULL,
					seq BIGINT NOT NULL
				)`,
				`CREATE SEQUENCE order_changes_seq`,
				`INSERT INTO order_changes (order_id, app_id, environment, tx, seq)
					SELECT id, app_id, environment, pg_current_xact_id(), nextval('order_changes_seq') FROM orders`,
				`CREATE INDEX order_changes_feed_idx ON order_changes (app_id, environment, tx, seq)`,
				`CREATE FUNCTION boxoffice_order_changed_log() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN
						INSERT INTO order_changes AS c (order_id, app_id, environment, tx, seq)
						VALUES (NEW.id, NEW.app_id, NEW.environment, pg_current_xact_id(), nextval('order_changes_seq'))
						ON CONFLICT (order_id) DO UPDATE
							SET tx = excluded.tx, seq = excluded.seq, app_id = excluded.app_id, environment = excluded.environment
							WHERE c.tx <> excluded.tx OR c.app_id <> excluded.app_id OR c.environment <> excluded.environment;
						RETURN NULL;
					END $$`,
				`CREATE TRIGGER orders_change_log_insert AFTER INSERT ON orders FOR EACH ROW
					EXECUTE FUNCTION boxoffice_order_changed_log()`,
				`CREATE TRIGGER orders_change_log_update AFTER UPDATE ON orders FOR EACH ROW
					WHEN (OLD.* IS DISTINCT FROM NEW.*)
					EXECUTE FUNCTION boxoffice_order_changed_log()`,
			)...)
		}
		logged := `BEGIN
				INSERT INTO order_changes (order_id, app_id, environment, seq)
				VALUES (NEW.id, NEW.app_id, NEW.environment, (SELECT COALESCE(MAX(seq), 0) + 1 FROM order_changes))
				ON CONFLICT (order_id) DO UPDATE
					SET seq = excluded.seq, app_id = excluded.app_id, environment = excluded.environment;
			END`
		return execAll(ctx, db, append(stmts,
			`CREATE TABLE order_changes (
				order_id INTEGER PRIMARY KEY REFERENCES orders (id),
				app_id BIGINT NOT NULL,
				environment TEXT NOT NULL,
				seq INTEGER NOT NULL
			)`,
			`INSERT INTO order_changes (order_id, app_id, environment, seq) SELECT id, app_id, environment, id FROM orders`,
			`CREATE UNIQUE INDEX order_changes_seq_key ON order_changes (seq)`,
			`CREATE INDEX order_changes_feed_idx ON order_changes (app_id, environment, seq)`,
			`CREATE TRIGGER orders_change_log_insert AFTER INSERT ON orders `+logged,
			`CREATE TRIGGER orders_change_log_update AFTER UPDATE ON orders `+logged,
		)...)
	}, func(ctx context.Context, db *bun.DB) error {
		stmts := []string{}
		if db.Dialect().Name() == dialect.PG {
			stmts = append(stmts,
				`DROP TRIGGER orders_change_log_update ON orders`, `DROP TRIGGER orders_change_log_insert ON orders`,
				`DROP FUNCTION boxoffice_order_changed_log()`, `DROP TABLE order_changes`, `DROP SEQUENCE order_changes_seq`)
		} else {
			stmts = append(stmts,
				`DROP TRIGGER orders_change_log_update`, `DROP TRIGGER orders_change_log_insert`, `DROP TABLE order_changes`)
		}
		for _, idx := range []string{"orders_list_idx", "orders_list_status_idx", "orders_list_event_idx",
			"orders_list_event_status_idx", "orders_list_date_idx", "orders_list_date_status_idx"} {
			stmts = append(stmts, `DROP INDEX `+idx)
		}
		return execAll(ctx, db, append(stmts, `CREATE INDEX orders_app_env_idx ON orders (app_id, environment, created_at)`)...)
	})
}
