package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Webhooks: the events emitted for apps and every delivery attempt, and a
// per-order sequence so receivers can order events of one order.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE orders ADD COLUMN event_sequence BIGINT NOT NULL DEFAULT 0`,
			`CREATE TABLE webhook_events (
				id TEXT PRIMARY KEY,
				app_id BIGINT NOT NULL REFERENCES apps (id),
				environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
				type TEXT NOT NULL,
				order_id BIGINT REFERENCES orders (id),
				sequence BIGINT NOT NULL,
				payload TEXT NOT NULL,
				status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
				attempts BIGINT NOT NULL,
				last_error TEXT,
				created_at {ts} NOT NULL,
				delivered_at {ts}
			)`,
			`CREATE INDEX webhook_events_app_idx ON webhook_events (app_id, created_at)`,
			`CREATE INDEX webhook_events_order_idx ON webhook_events (order_id)`,
			`CREATE TABLE webhook_attempts (
				id {pk},
				event_id TEXT NOT NULL REFERENCES webhook_events (id),
				attempt BIGINT NOT NULL,
				url TEXT NOT NULL,
				status_code BIGINT,
				latency_ms BIGINT NOT NULL,
				error TEXT,
				created_at {ts} NOT NULL
			)`,
			`CREATE INDEX webhook_attempts_event_idx ON webhook_attempts (event_id, attempt)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `DROP TABLE webhook_attempts`, `DROP TABLE webhook_events`,
			`ALTER TABLE orders DROP COLUMN event_sequence`)
	})
}
