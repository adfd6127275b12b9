package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Each issued ticket keeps how many tickets its order has, so that a scan
// at the door, a webhook and the API can say "2 of 4" from the ticket's own
// row (an order's tickets are issued once and never added to).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE issued_tickets ADD COLUMN tickets_in_order INTEGER NOT NULL DEFAULT 0`,
			`UPDATE issued_tickets SET tickets_in_order =
				(SELECT count(*) FROM issued_tickets AS o WHERE o.order_id = issued_tickets.order_id)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `ALTER TABLE issued_tickets DROP COLUMN tickets_in_order`)
	})
}
