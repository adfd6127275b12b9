package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Catalog changes name what changed. The catalog listing index
// (catalog.Index) keeps every visible event's listing facts in memory and,
// on a change, re-reads only the events that changed instead of the whole
// catalog; for that the triggers must say which. On PostgreSQL each
// written row now notifies boxoffice_catalog with "SCHEMA e:EVENT_ID" (an
// event, a date or a ticket of that event) or "SCHEMA v:VENUE_ID" (a venue),
// once per transaction and payload (NOTIFY folds identical ones). The plain
// "SCHEMA" payload still means "anything may have changed": TRUNCATE sends
// it, and so does any statement of a transaction that set
// boxoffice.catalog_bulk, whose rows then send nothing (an import of
// thousands of events would otherwise send thousands of notifications, and
// the index re-reads everything once anyway).
//
// A ticket's row finds its event through its date; when the date is gone
// in the same statement (a cascade), the date's own row has named the event.
//
// SQLite keeps counting changes in catalog_version; the index re-reads the
// catalog there when the count moves.
func init() {
	rowFunc := `CREATE FUNCTION boxoffice_catalog_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
		DECLARE
			ids bigint[];
			kind text := 'e:';
			id bigint;
		BEGIN
			IF current_setting('boxoffice.catalog_bulk', true) = 'on' THEN
				RETURN NULL;
			END IF;
			IF TG_TABLE_NAME = 'events' THEN
				ids := ARRAY[CASE WHEN TG_OP <> 'INSERT' THEN OLD.id END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.id END];
			ELSIF TG_TABLE_NAME = 'event_dates' THEN
				ids := ARRAY[CASE WHEN TG_OP <> 'INSERT' THEN OLD.event_id END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.event_id END];
			ELSIF TG_TABLE_NAME = 'tickets' THEN
				SELECT array_agg(d.event_id) INTO ids FROM event_dates AS d
				WHERE d.id IN (CASE WHEN TG_OP <> 'INSERT' THEN OLD.event_date_id END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.event_date_id END);
			ELSE
				kind := 'v:';
				ids := ARRAY[CASE WHEN TG_OP <> 'INSERT' THEN OLD.id END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.id END];
			END IF;
			FOREACH id IN ARRAY coalesce(ids, '{}') LOOP
				IF id IS NOT NULL THEN
					PERFORM pg_notify('boxoffice_catalog', TG_TABLE_SCHEMA || ' ' || kind || id);
				END IF;
			END LOOP;
			RETURN NULL;
		END $$`
	stmtFunc := `CREATE OR REPLACE FUNCTION boxoffice_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF TG_OP = 'TRUNCATE' OR current_setting('boxoffice.catalog_bulk', true) = 'on' THEN
				PERFORM pg_notify('boxoffice_catalog', TG_TABLE_SCHEMA);
			END IF;
			RETURN NULL;
		END $$`
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != dialect.PG {
			return nil
		}
		stmts := []string{rowFunc, stmtFunc}
		for _, t := range append(catalogTables, "tickets") {
			on := "INSERT OR UPDATE OR DELETE"
			if t == "tickets" {
				on = "INSERT OR DELETE OR UPDATE OF " + ticketCatalogColumns
			}
			stmts = append(stmts, fmt.Sprintf(`CREATE TRIGGER %[1]s_catalog_row_changed
				AFTER %[2]s ON %[1]s
				FOR EACH ROW EXECUTE FUNCTION boxoffice_catalog_row_changed()`, t, on))
		}
		return execAll(ctx, db, stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != dialect.PG {
			return nil
		}
		stmts := []string{}
		for _, t := range append(catalogTables, "tickets") {
			stmts = append(stmts, fmt.Sprintf(`DROP TRIGGER %[1]s_catalog_row_changed ON %[1]s`, t))
		}
		return execAll(ctx, db, append(stmts, `DROP FUNCTION boxoffice_catalog_row_changed()`,
			`CREATE OR REPLACE FUNCTION boxoffice_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					PERFORM pg_notify('boxoffice_catalog', TG_TABLE_SCHEMA);
					RETURN NULL;
				END $$`)...)
	})
}
