package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Checkout: orders with their items, idempotency records and the daily
// counters of live free tickets.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE TABLE orders (
				id {pk},
				reference TEXT NOT NULL,
				app_id BIGINT NOT NULL REFERENCES apps (id),
				environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
				status TEXT NOT NULL,
				event_id BIGINT NOT NULL REFERENCES events (id),
				event_date_id BIGINT NOT NULL REFERENCES event_dates (id),
				currency TEXT NOT NULL,
				total_amount BIGINT NOT NULL CHECK (total_amount >= 0),
				requires_payment BOOLEAN NOT NULL,
				holds_stock BOOLEAN NOT NULL,
				customer_name TEXT NOT NULL,
				customer_email TEXT NOT NULL,
				customer_phone TEXT NOT NULL,
				metadata {json},
				success_url TEXT NOT NULL,
				cancel_url TEXT NOT NULL,
				payment_reference TEXT,
				expires_at {ts},
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX orders_reference_key ON orders (reference)`,
			`CREATE INDEX orders_app_env_idx ON orders (app_id, environment, created_at)`,
			// The expiry job walks pending orders by expiry.
			`CREATE INDEX orders_pending_expiry_idx ON orders (status, expires_at)`,

			`CREATE TABLE order_items (
				id {pk},
				order_id BIGINT NOT NULL REFERENCES orders (id),
				ticket_id BIGINT NOT NULL REFERENCES tickets (id),
				quantity BIGINT NOT NULL CHECK (quantity > 0),
				unit_price BIGINT NOT NULL CHECK (unit_price >= 0)
			)`,
			`CREATE INDEX order_items_order_idx ON order_items (order_id)`,
			`CREATE INDEX order_items_ticket_idx ON order_items (ticket_id)`,

			`CREATE TABLE idempotency_keys (
				id {pk},
				app_id BIGINT NOT NULL REFERENCES apps (id),
				environment TEXT NOT NULL,
				key TEXT NOT NULL,
				fingerprint TEXT NOT NULL,
				state TEXT NOT NULL CHECK (state IN ('in_progress', 'done')),
				owner TEXT NOT NULL,
				locked_until {ts} NOT NULL,
				response TEXT,
				created_at {ts} NOT NULL,
				expires_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX idempotency_keys_scope_key ON idempotency_keys (app_id, environment, key)`,
			`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`,

			`CREATE TABLE free_ticket_usage (
				scope TEXT NOT NULL,
				day TEXT NOT NULL,
				quantity BIGINT NOT NULL,
				PRIMARY KEY (scope, day)
			)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `DROP TABLE free_ticket_usage`, `DROP TABLE idempotency_keys`,
			`DROP TABLE order_items`, `DROP TABLE orders`)
	})
}
