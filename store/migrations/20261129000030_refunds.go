package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Refunds (docs/spec/refunds.md): a refund is a row of its own, the
// tickets it cancelled point at it, and the order keeps two sums so that
// the balance rule is one conditional write on the order's row:
// refund_committed is what pending and succeeded refunds take
// (never above total_amount), refunded_amount what has succeeded.
//
// refunds_order_idx lists an order's refunds oldest first;
// refunds_failed_idx holds only failed refunds (exceptions), for the
// operators' listing and the gauge; refunds_pending_idx only those whose
// money is still on its way, for the provider's callbacks to find them by
// order. issued_tickets_refund_idx finds a refund's tickets; its column
// names a refund without a foreign key, which SQLite could not drop again.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE TABLE refunds (
				id {pk},
				public_id TEXT NOT NULL,
				order_id BIGINT NOT NULL REFERENCES orders (id),
				app_id BIGINT NOT NULL REFERENCES apps (id),
				environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
				amount BIGINT NOT NULL CHECK (amount >= 0),
				currency TEXT NOT NULL,
				reason TEXT NOT NULL,
				status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
				failure_reason TEXT,
				metadata TEXT,
				provider TEXT,
				provider_refund_id TEXT,
				sent_at {ts},
				attempts BIGINT NOT NULL DEFAULT 0,
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX refunds_public_id_key ON refunds (public_id)`,
			`CREATE INDEX refunds_order_idx ON refunds (order_id, id)`,
			`CREATE INDEX refunds_failed_idx ON refunds (environment, created_at) WHERE status = 'failed'`,
			`CREATE INDEX refunds_pending_idx ON refunds (order_id) WHERE status = 'pending'`,
			`ALTER TABLE orders ADD COLUMN refund_committed BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE orders ADD COLUMN refunded_amount BIGINT NOT NULL DEFAULT 0`,
			`ALTER TABLE issued_tickets ADD COLUMN refund_id BIGINT`,
			`CREATE INDEX issued_tickets_refund_idx ON issued_tickets (refund_id) WHERE refund_id IS NOT NULL`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`DROP INDEX issued_tickets_refund_idx`,
			`ALTER TABLE issued_tickets DROP COLUMN refund_id`,
			`ALTER TABLE orders DROP COLUMN refunded_amount`,
			`ALTER TABLE orders DROP COLUMN refund_committed`,
			`DROP TABLE refunds`,
		)
	})
}
