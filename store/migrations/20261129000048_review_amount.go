package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// orders.review_amount and review_currency are the payment a refund review
// is about (it may differ from the order's total): what the operator's
// refund of the review returns. NULL on orders flagged before they
// existed, whose refund returns the order's total.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE orders ADD COLUMN review_amount BIGINT`,
			`ALTER TABLE orders ADD COLUMN review_currency TEXT`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE orders DROP COLUMN review_currency`,
			`ALTER TABLE orders DROP COLUMN review_amount`,
		)
	})
}
