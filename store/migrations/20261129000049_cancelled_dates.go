package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// A cancelled date (docs/spec/refunds.md section 5): a flag on the date
// (cancelled_at, with the operator's reason and whether its orders are
// refunded), set once. The work of refunding its orders reads them by
// orders_date_sale_idx, the date's orders by status in id order, a batch
// at a time; progress is which of them have their event_cancelled refund
// (refunds_reason_idx), read from the database, so a crash loses no count.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE event_dates ADD COLUMN cancelled_at {ts}`,
			`ALTER TABLE event_dates ADD COLUMN cancel_reason TEXT`,
			`ALTER TABLE event_dates ADD COLUMN cancel_refund BOOLEAN NOT NULL DEFAULT false`,
			`CREATE INDEX orders_date_sale_idx ON orders (event_date_id, status, id)`,
			`CREATE INDEX refunds_reason_idx ON refunds (order_id) WHERE reason = 'event_cancelled'`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`DROP INDEX refunds_reason_idx`,
			`DROP INDEX orders_date_sale_idx`,
			`ALTER TABLE event_dates DROP COLUMN cancel_refund`,
			`ALTER TABLE event_dates DROP COLUMN cancel_reason`,
			`ALTER TABLE event_dates DROP COLUMN cancelled_at`,
		)
	})
}
