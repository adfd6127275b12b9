package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Webhook event stream (boxoffice listen): each event gets a place in a
// stream that readers follow by position, so a reader that resumes from
// the last event it saw misses nothing.
//
// On PostgreSQL a sequence alone is not such a place: numbers are taken
// when rows are written, not when they commit, so a reader could see 11
// before 10 commits and skip 10 for good. Each row therefore also records
// the id of the transaction that wrote it (stream_tx), and readers order by
// (stream_tx, stream_seq) and only read rows whose transaction is older
// than every transaction still running (pg_snapshot_xmin): those rows are
// final, and every later row sorts after them. A trigger notifies the
// channel boxoffice_webhook_events at commit (payload: schema, app id and
// environment) so readers on any instance wake at once.
//
// SQLite has one writer at a time, so commit order is write order: a
// trigger numbers each row one above the largest number so far.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			return execAll(ctx, db,
				`ALTER TABLE webhook_events ADD COLUMN stream_seq BIGINT GENERATED ALWAYS AS IDENTITY`,
				`ALTER TABLE webhook_events ADD COLUMN stream_tx xid8 NOT NULL DEFAULT pg_current_xact_id()`,
				`CREATE INDEX webhook_events_stream_idx ON webhook_events (app_id, environment, stream_tx, stream_seq)`,
				`CREATE FUNCTION boxoffice_webhook_event_written() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN
						PERFORM pg_notify('boxoffice_webhook_events', TG_TABLE_SCHEMA || ' ' || NEW.app_id || ' ' || NEW.environment);
						RETURN NULL;
					END $$`,
				`CREATE TRIGGER webhook_events_written AFTER INSERT ON webhook_events
					FOR EACH ROW EXECUTE FUNCTION boxoffice_webhook_event_written()`,
			)
		}
		return execAll(ctx, db,
			`ALTER TABLE webhook_events ADD COLUMN stream_seq INTEGER`,
			`UPDATE webhook_events SET stream_seq = rowid`,
			`CREATE UNIQUE INDEX webhook_events_stream_seq_idx ON webhook_events (stream_seq)`,
			`CREATE INDEX webhook_events_stream_idx ON webhook_events (app_id, environment, stream_seq)`,
			`CREATE TRIGGER webhook_events_stream_seq AFTER INSERT ON webhook_events WHEN NEW.stream_seq IS NULL
				BEGIN
					UPDATE webhook_events SET stream_seq = (SELECT COALESCE(MAX(stream_seq), 0) + 1 FROM webhook_events)
					WHERE rowid = NEW.rowid;
				END`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			return execAll(ctx, db,
				`DROP TRIGGER webhook_events_written ON webhook_events`,
				`DROP FUNCTION boxoffice_webhook_event_written()`,
				`DROP INDEX webhook_events_stream_idx`,
				`ALTER TABLE webhook_events DROP COLUMN stream_tx`,
				`ALTER TABLE webhook_events DROP COLUMN stream_seq`,
			)
		}
		return execAll(ctx, db,
			`DROP TRIGGER webhook_events_stream_seq`,
			`DROP INDEX webhook_events_stream_idx`,
			`DROP INDEX webhook_events_stream_seq_idx`,
			`ALTER TABLE webhook_events DROP COLUMN stream_seq`,
		)
	})
}
