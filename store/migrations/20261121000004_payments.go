package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Payments: which provider a live order pays through, where the buyer pays,
// and a flag for payments that need a refund review (confirmed after the
// order expired or failed, or for the wrong amount).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE orders ADD COLUMN payment_provider TEXT`,
			`ALTER TABLE orders ADD COLUMN payment_url TEXT`,
			`ALTER TABLE orders ADD COLUMN refund_review BOOLEAN NOT NULL DEFAULT FALSE`,
			`ALTER TABLE orders ADD COLUMN review_note TEXT`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE orders DROP COLUMN review_note`, `ALTER TABLE orders DROP COLUMN refund_review`,
			`ALTER TABLE orders DROP COLUMN payment_url`, `ALTER TABLE orders DROP COLUMN payment_provider`)
	})
}
