package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// catalogTables are the tables whose rows make up the published catalog.
var catalogTables = []string{"venues", "events", "event_dates"}

// ticketCatalogColumns are the ticket columns the catalog shows as they are;
// sold and held (stock) and updated_at change with every checkout and are
// left out, so a checkout does not count as a catalog change.
const ticketCatalogColumns = `reference, event_date_id, name, description, free, price, promotional_price,
	quantity, tickets_per_attendee, sales_start, sales_end, currency`

// endIndex serves store.NextDateEnd: when the next date ends.
const endIndex = `CREATE INDEX event_dates_end_idx ON event_dates (end_at)`

// Catalog changes: triggers tell every server that the catalog changed, so
// each may keep what it read of the catalog until then. PostgreSQL notifies
// the channel boxoffice_catalog, with the schema as payload, when the
// changing transaction commits (one notification per statement, folded per
// transaction); SQLite, whose
// writers share one file, counts changes in catalog_version.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			stmts := []string{`CREATE FUNCTION boxoffice_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					PERFORM pg_notify('boxoffice_catalog', TG_TABLE_SCHEMA);
					RETURN NULL;
				END $$`}
			for _, t := range catalogTables {
				stmts = append(stmts, fmt.Sprintf(`CREATE TRIGGER %[1]s_catalog_changed
					AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %[1]s
					FOR EACH STATEMENT EXECUTE FUNCTION boxoffice_catalog_changed()`, t))
			}
			stmts = append(stmts, `CREATE TRIGGER tickets_catalog_changed
				AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF `+ticketCatalogColumns+` ON tickets
				FOR EACH STATEMENT EXECUTE FUNCTION boxoffice_catalog_changed()`)
			return execAll(ctx, db, append(stmts, endIndex)...)
		}
		stmts := []string{
			endIndex,
			`CREATE TABLE catalog_version (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)`,
			`INSERT INTO catalog_version (id, n) VALUES (1, 0)`,
		}
		bump := `BEGIN UPDATE catalog_version SET n = n + 1 WHERE id = 1; END`
		for _, t := range append(catalogTables, "tickets") {
			for _, op := range []string{"insert", "delete", "update"} {
				on := op
				if t == "tickets" && op == "update" {
					on = "update of " + ticketCatalogColumns
				}
				stmts = append(stmts, fmt.Sprintf(`CREATE TRIGGER %s_catalog_%s AFTER %s ON %s %s`, t, op, on, t, bump))
			}
		}
		return execAll(ctx, db, stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			stmts := []string{}
			for _, t := range append(catalogTables, "tickets") {
				stmts = append(stmts, fmt.Sprintf(`DROP TRIGGER %[1]s_catalog_changed ON %[1]s`, t))
			}
			return execAll(ctx, db, append(stmts, `DROP FUNCTION boxoffice_catalog_changed()`, `DROP INDEX event_dates_end_idx`)...)
		}
		stmts := []string{}
		for _, t := range append(catalogTables, "tickets") {
			for _, op := range []string{"insert", "delete", "update"} {
				stmts = append(stmts, fmt.Sprintf(`DROP TRIGGER %s_catalog_%s`, t, op))
			}
		}
		return execAll(ctx, db, append(stmts, `DROP TABLE catalog_version`, `DROP INDEX event_dates_end_idx`)...)
	})
}
