package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Development payments: the development payment provider (PAYMENT_PROVIDER=dev)
// keeps each payment it creates here instead of in one process's memory, so
// a pending live order can still be paid after a restart or through another
// instance. Nothing of a real payment provider is stored.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE TABLE dev_payments (
				reference TEXT PRIMARY KEY,
				amount BIGINT NOT NULL,
				currency TEXT NOT NULL,
				callback_url TEXT NOT NULL,
				state TEXT NOT NULL,
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `DROP TABLE dev_payments`)
	})
}
