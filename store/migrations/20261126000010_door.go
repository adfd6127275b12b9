package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// The door (spec/fulfilment.md section 4): scanner keys, one event and
// one environment each, stored as hashes; whether each issued ticket is
// inside now (the one column a scan's conditional update moves, so
// concurrent scans on any number of instances admit a ticket once) and
// why it was voided; and every scan, admitted or rejected, as a row of
// check_ins with the answer the door got (a code no ticket has is not
// kept, in the row or the answer). A scan sent with an Idempotency-Key
// keeps the key and a fingerprint of its body on its own row, unique per
// scanner, so a retry finds its answer there. Each new scan is a live
// change of its date (kind checkin, key ENVIRONMENT:DATE_ID), as orders
// and stock are (20261122000041_live.go).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if err := execAll(ctx, db,
			`CREATE TABLE scanners (
				id {pk},
				name TEXT NOT NULL,
				event_id BIGINT NOT NULL REFERENCES events (id),
				environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
				key_hash TEXT NOT NULL,
				hint TEXT NOT NULL,
				created_at {ts} NOT NULL,
				revoked_at {ts}
			)`,
			// Every request of a door device finds its key by hash.
			`CREATE UNIQUE INDEX scanners_key_hash_key ON scanners (key_hash)`,
			`CREATE INDEX scanners_event_idx ON scanners (event_id)`,

			`ALTER TABLE issued_tickets ADD COLUMN inside BOOLEAN NOT NULL DEFAULT FALSE`,
			`ALTER TABLE issued_tickets ADD COLUMN voided_at {ts}`,
			`ALTER TABLE issued_tickets ADD COLUMN void_reason TEXT`,
			// A date's door counts (issued, checked in, inside) read this
			// index alone; it replaces the narrower one nothing read.
			`DROP INDEX issued_tickets_date_idx`,
			`CREATE INDEX issued_tickets_door_idx ON issued_tickets (event_date_id, environment, status, inside)`,

			`CREATE TABLE check_ins (
				id {pk},
				public_id TEXT NOT NULL,
				scanner_id BIGINT NOT NULL REFERENCES scanners (id),
				environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
				event_date_id BIGINT NOT NULL REFERENCES event_dates (id),
				ticket_id BIGINT REFERENCES issued_tickets (id),
				direction TEXT NOT NULL CHECK (direction IN ('entry', 'exit')),
				gate TEXT,
				scanned_at {ts} NOT NULL,
				result TEXT NOT NULL CHECK (result IN ('admitted', 'rejected')),
				reason TEXT CHECK (reason IN ('unknown_code', 'test_ticket', 'wrong_event', 'wrong_date', 'void',
					'already_checked_in', 'not_inside')),
				idempotency_key TEXT,
				fingerprint TEXT,
				answer TEXT NOT NULL,
				created_at {ts} NOT NULL,
				CHECK ((result = 'admitted') = (reason IS NULL))
			)`,
			`CREATE UNIQUE INDEX check_ins_public_id_key ON check_ins (public_id)`,
			// NULL keys never collide: only keyed scans are unique.
			`CREATE UNIQUE INDEX check_ins_idempotency_key ON check_ins (scanner_id, idempotency_key)`,
			// A ticket's scans, newest last: the admission that stands, and
			// boxoffice tickets show.
			`CREATE INDEX check_ins_ticket_idx ON check_ins (ticket_id, id)`,
			// A date's scans after a given one, for its live feed.
			`CREATE INDEX check_ins_date_idx ON check_ins (event_date_id, environment, id)`,
			// A date's rejected scans, counted for its door counts.
			`CREATE INDEX check_ins_rejected_idx ON check_ins (event_date_id, environment) WHERE result = 'rejected'`,
		); err != nil {
			return err
		}
		if db.Dialect().Name() == dialect.PG {
			return execAll(ctx, db,
				`CREATE FUNCTION boxoffice_check_in_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN
						PERFORM pg_notify('boxoffice_live',
							'checkin ' || NEW.environment || ':' || NEW.event_date_id || ' ' || TG_TABLE_SCHEMA);
						RETURN NULL;
					END $$`,
				`CREATE TRIGGER check_ins_live AFTER INSERT ON check_ins FOR EACH ROW
					EXECUTE FUNCTION boxoffice_check_in_recorded()`,
			)
		}
		return execAll(ctx, db,
			`INSERT INTO live_version (kind, n) VALUES ('checkin', 0)`,
			`CREATE TRIGGER check_ins_live AFTER INSERT ON check_ins
				BEGIN UPDATE live_version SET n = n + 1 WHERE kind = 'checkin'; END`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			if err := execAll(ctx, db,
				`DROP TRIGGER check_ins_live ON check_ins`, `DROP FUNCTION boxoffice_check_in_recorded()`); err != nil {
				return err
			}
		} else if err := execAll(ctx, db,
			`DROP TRIGGER check_ins_live`, `DELETE FROM live_version WHERE kind = 'checkin'`); err != nil {
			return err
		}
		return execAll(ctx, db,
			`DROP TABLE check_ins`,
			`DROP INDEX issued_tickets_door_idx`,
			`CREATE INDEX issued_tickets_date_idx ON issued_tickets (event_date_id, status)`,
			`ALTER TABLE issued_tickets DROP COLUMN void_reason`,
			`ALTER TABLE issued_tickets DROP COLUMN voided_at`,
			`ALTER TABLE issued_tickets DROP COLUMN inside`,
			`DROP TABLE scanners`,
		)
	})
}
