package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// The offline door (spec/offline-door.md):
//
// A date's manifest is read as a change log of its tickets, with the
// order changes' technique (20261126000030_order_sync.go): every insert
// and every update of a ticket, whoever makes it (checkout, a void, a
// refund, a scan on any instance), gives the row a new position. On
// PostgreSQL the position is (change_tx, change_seq): the writing
// transaction's id and a number from a sequence, set by a BEFORE trigger
// in the same row write, and readers read only below the oldest
// transaction still running, so a position taken by a transaction that
// commits late is never passed over. On SQLite, one writer at a time, it
// is change_seq alone, one above the largest so far, set by AFTER triggers
// (SQLite cannot assign NEW); the update trigger names the columns a
// scanner's decision reads, so the trigger's own write does not fire it.
//
// admitted_at is when the admission that stands was scanned: an exit
// dated before it is not_inside (a late-uploaded offline exit must not
// let a ticket out that was admitted after it). It is filled from the
// scans recorded so far.
//
// check_ins.offline marks a scan received more than 30 seconds after it
// was made; check_ins_offline_conflicts_idx holds only offline entries
// refused as already inside, the conflicts a date's stats count.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if err := execAll(ctx, db,
			`ALTER TABLE issued_tickets ADD COLUMN admitted_at {ts}`,
			`UPDATE issued_tickets SET admitted_at = (SELECT MAX(ci.scanned_at) FROM check_ins AS ci
				WHERE ci.ticket_id = issued_tickets.id AND ci.result = 'admitted' AND ci.direction = 'entry')
				WHERE status = 'checked_in'`,
			`ALTER TABLE check_ins ADD COLUMN offline BOOLEAN NOT NULL DEFAULT FALSE`,
			`CREATE INDEX check_ins_offline_conflicts_idx ON check_ins (event_date_id, environment)
				WHERE offline AND reason = 'already_checked_in'`,
		); err != nil {
			return err
		}
		if db.Dialect().Name() == dialect.PG {
			return execAll(ctx, db,
				`CREATE SEQUENCE issued_tickets_change_seq`,
				`ALTER TABLE issued_tickets ADD COLUMN change_tx xid8`,
				`ALTER TABLE issued_tickets ADD COLUMN change_seq BIGINT`,
				`UPDATE issued_tickets SET change_tx = pg_current_xact_id(), change_seq = nextval('issued_tickets_change_seq')`,
				`ALTER TABLE issued_tickets ALTER COLUMN change_tx SET NOT NULL`,
				`ALTER TABLE issued_tickets ALTER COLUMN change_seq SET NOT NULL`,
				`CREATE INDEX issued_tickets_manifest_idx ON issued_tickets (event_date_id, environment, change_tx, change_seq)`,
				`CREATE FUNCTION boxoffice_ticket_changed() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN
						NEW.change_tx := pg_current_xact_id();
						NEW.change_seq := nextval('issued_tickets_change_seq');
						RETURN NEW;
					END $$`,
				`CREATE TRIGGER issued_tickets_manifest BEFORE INSERT OR UPDATE ON issued_tickets FOR EACH ROW
					EXECUTE FUNCTION boxoffice_ticket_changed()`,
			)
		}
		next := `UPDATE issued_tickets SET change_seq = (SELECT COALESCE(MAX(change_seq), 0) + 1 FROM issued_tickets)
			WHERE id = NEW.id;`
		return execAll(ctx, db,
			`ALTER TABLE issued_tickets ADD COLUMN change_seq INTEGER`,
			`UPDATE issued_tickets SET change_seq = id`,
			`CREATE INDEX issued_tickets_change_seq_idx ON issued_tickets (change_seq)`,
			`CREATE INDEX issued_tickets_manifest_idx ON issued_tickets (event_date_id, environment, change_seq)`,
			`CREATE TRIGGER issued_tickets_manifest_insert AFTER INSERT ON issued_tickets BEGIN `+next+` END`,
			`CREATE TRIGGER issued_tickets_manifest_update
				AFTER UPDATE OF status, inside, ticket_name, position, tickets_in_order, event_date_id, environment, code
				ON issued_tickets BEGIN `+next+` END`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			if err := execAll(ctx, db,
				`DROP TRIGGER issued_tickets_manifest ON issued_tickets`,
				`DROP FUNCTION boxoffice_ticket_changed()`,
				`DROP INDEX issued_tickets_manifest_idx`,
				`ALTER TABLE issued_tickets DROP COLUMN change_seq`,
				`ALTER TABLE issued_tickets DROP COLUMN change_tx`,
				`DROP SEQUENCE issued_tickets_change_seq`,
			); err != nil {
				return err
			}
		} else if err := execAll(ctx, db,
			`DROP TRIGGER issued_tickets_manifest_update`,
			`DROP TRIGGER issued_tickets_manifest_insert`,
			`DROP INDEX issued_tickets_manifest_idx`,
			`DROP INDEX issued_tickets_change_seq_idx`,
			`ALTER TABLE issued_tickets DROP COLUMN change_seq`,
		); err != nil {
			return err
		}
		return execAll(ctx, db,
			`DROP INDEX check_ins_offline_conflicts_idx`,
			`ALTER TABLE check_ins DROP COLUMN offline`,
			`ALTER TABLE issued_tickets DROP COLUMN admitted_at`,
		)
	})
}
