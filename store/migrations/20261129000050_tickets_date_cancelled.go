package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// tickets.date_cancelled copies a cancelled date's flag onto its ticket
// types, so the checkout's stock write refuses them in the same
// conditional UPDATE that takes the stock: a checkout racing the
// cancellation either committed before it (and its order is expired or
// refunded by the cancellation's work) or is refused, never in between.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `ALTER TABLE tickets ADD COLUMN date_cancelled BOOLEAN NOT NULL DEFAULT false`)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `ALTER TABLE tickets DROP COLUMN date_cancelled`)
	})
}
