package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Live changes: triggers say when an order's status (or anything else its
// Order view shows) changes and when the stock of a date's tickets moves,
// in the transaction that changes them, whoever writes (checkout,
// settlement, the expiry sweep, a catalog import, another instance), so
// every instance's subscribers hear of it (store.Listener, live.Hub).
// PostgreSQL notifies the channel boxoffice_live with "KIND KEY SCHEMA"
// (order REFERENCE, or stock EVENT_DATE_ID) when the transaction commits,
// identical notifications folded; SQLite counts changes per kind in
// live_version, which its instances poll.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			return execAll(ctx, db,
				`CREATE FUNCTION boxoffice_order_changed() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN
						PERFORM pg_notify('boxoffice_live', 'order ' || NEW.reference || ' ' || TG_TABLE_SCHEMA);
						RETURN NULL;
					END $$`,
				`CREATE TRIGGER orders_live AFTER UPDATE ON orders FOR EACH ROW
					WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.updated_at IS DISTINCT FROM NEW.updated_at
						OR OLD.payment_reference IS DISTINCT FROM NEW.payment_reference)
					EXECUTE FUNCTION boxoffice_order_changed()`,
				`CREATE FUNCTION boxoffice_stock_changed() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN
						IF TG_OP <> 'INSERT' THEN
							PERFORM pg_notify('boxoffice_live', 'stock ' || OLD.event_date_id || ' ' || TG_TABLE_SCHEMA);
						END IF;
						IF TG_OP <> 'DELETE' THEN
							PERFORM pg_notify('boxoffice_live', 'stock ' || NEW.event_date_id || ' ' || TG_TABLE_SCHEMA);
						END IF;
						RETURN NULL;
					END $$`,
				`CREATE TRIGGER tickets_live_rows AFTER INSERT OR DELETE ON tickets FOR EACH ROW
					EXECUTE FUNCTION boxoffice_stock_changed()`,
				`CREATE TRIGGER tickets_live_stock AFTER UPDATE ON tickets FOR EACH ROW
					WHEN (OLD.quantity IS DISTINCT FROM NEW.quantity OR OLD.sold <> NEW.sold OR OLD.held <> NEW.held
						OR OLD.event_date_id <> NEW.event_date_id)
					EXECUTE FUNCTION boxoffice_stock_changed()`,
			)
		}
		bump := func(kind string) string {
			return `BEGIN UPDATE live_version SET n = n + 1 WHERE kind = '` + kind + `'; END`
		}
		return execAll(ctx, db,
			`CREATE TABLE live_version (kind TEXT PRIMARY KEY, n INTEGER NOT NULL)`,
			`INSERT INTO live_version (kind, n) VALUES ('order', 0), ('stock', 0)`,
			`CREATE TRIGGER orders_live AFTER UPDATE OF status, updated_at, payment_reference ON orders
				WHEN OLD.status IS NOT NEW.status OR OLD.updated_at IS NOT NEW.updated_at
					OR OLD.payment_reference IS NOT NEW.payment_reference `+bump("order"),
			`CREATE TRIGGER tickets_live_insert AFTER INSERT ON tickets `+bump("stock"),
			`CREATE TRIGGER tickets_live_delete AFTER DELETE ON tickets `+bump("stock"),
			`CREATE TRIGGER tickets_live_update AFTER UPDATE OF quantity, sold, held, event_date_id ON tickets
				WHEN OLD.quantity IS NOT NEW.quantity OR OLD.sold <> NEW.sold OR OLD.held <> NEW.held
					OR OLD.event_date_id <> NEW.event_date_id `+bump("stock"),
		)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			return execAll(ctx, db,
				`DROP TRIGGER tickets_live_stock ON tickets`, `DROP TRIGGER tickets_live_rows ON tickets`,
				`DROP FUNCTION boxoffice_stock_changed()`,
				`DROP TRIGGER orders_live ON orders`, `DROP FUNCTION boxoffice_order_changed()`)
		}
		return execAll(ctx, db,
			`DROP TRIGGER tickets_live_update`, `DROP TRIGGER tickets_live_delete`, `DROP TRIGGER tickets_live_insert`,
			`DROP TRIGGER orders_live`, `DROP TABLE live_version`)
	})
}
