package migrations

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Notifications after commit. PostgreSQL serializes the commits of
// transactions that NOTIFY: each takes one database-wide lock before its
// commit record is written and keeps it until the commit has been flushed
// to disk, so notifying transactions commit one flush at a time instead of
// sharing flushes (group commit). On this project's 2-core machine a
// one-row UPDATE commits about 6,000 times a second alone and 1,300 times
// with a NOTIFY in the same transaction; every admitted scan at the door
// has three (order, check-in and webhook-stream triggers).
//
// The triggers keep saying what changed, but through boxoffice_notify,
// which NOTIFYs at once unless the transaction asked for its
// notifications after commit (store.DB.RunInTxNotifyAfter sets
// boxoffice.notify_after_commit for the transaction): then it adds the
// notification, once, to the transaction-local setting
// boxoffice.pending_notifies ("CHANNEL\tPAYLOAD\n" lines), which the
// writer reads before its commit and sends after it in a statement of its
// own. That statement has no transaction id and writes no WAL, so it holds
// the lock for microseconds. Every other writer (an operator's psql
// included) notifies in its transaction as before.
//
// SQLite has no NOTIFY; nothing changes there.
func init() {
	notifyFuncs := func(notify string) []string {
		return []string{
			`CREATE OR REPLACE FUNCTION boxoffice_order_changed() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					PERFORM ` + notify + `('boxoffice_live', 'order ' || NEW.reference || ' ' || TG_TABLE_SCHEMA);
					RETURN NULL;
				END $$`,
			`CREATE OR REPLACE FUNCTION boxoffice_stock_changed() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					IF TG_OP <> 'INSERT' THEN
						PERFORM ` + notify + `('boxoffice_live', 'stock ' || OLD.event_date_id || ' ' || TG_TABLE_SCHEMA);
					END IF;
					IF TG_OP <> 'DELETE' THEN
						PERFORM ` + notify + `('boxoffice_live', 'stock ' || NEW.event_date_id || ' ' || TG_TABLE_SCHEMA);
					END IF;
					RETURN NULL;
				END $$`,
			`CREATE OR REPLACE FUNCTION boxoffice_check_in_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					PERFORM ` + notify + `('boxoffice_live',
						'checkin ' || NEW.environment || ':' || NEW.event_date_id || ' ' || TG_TABLE_SCHEMA);
					RETURN NULL;
				END $$`,
			`CREATE OR REPLACE FUNCTION boxoffice_webhook_event_written() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					PERFORM ` + notify + `('boxoffice_webhook_events', TG_TABLE_SCHEMA || ' ' || NEW.app_id || ' ' || NEW.environment);
					RETURN NULL;
				END $$`,
		}
	}
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != dialect.PG {
			return nil
		}
		return execAll(ctx, db, append([]string{
			`CREATE FUNCTION boxoffice_notify(channel text, payload text) RETURNS void LANGUAGE plpgsql AS $$
				DECLARE
					line text := channel || E'\t' || payload || E'\n';
					pending text;
				BEGIN
					IF current_setting('boxoffice.notify_after_commit', true) IS DISTINCT FROM 'on' THEN
						PERFORM pg_notify(channel, payload);
						RETURN;
					END IF;
					pending := coalesce(current_setting('boxoffice.pending_notifies', true), '');
					-- As NOTIFY folds identical notifications of a transaction.
					IF position(line IN pending) = 0 THEN
						PERFORM set_config('boxoffice.pending_notifies', pending || line, true);
					END IF;
				END $$`,
		}, notifyFuncs("boxoffice_notify")...)...)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != dialect.PG {
			return nil
		}
		return execAll(ctx, db, append(notifyFuncs("pg_notify"), `DROP FUNCTION boxoffice_notify(text, text)`)...)
	})
}
