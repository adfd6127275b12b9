package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// event_dates_cancelled_idx holds only cancelled dates: what a starting
// server reads to resume their work, without reading the catalog.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `CREATE INDEX event_dates_cancelled_idx ON event_dates (id) WHERE cancelled_at IS NOT NULL`)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `DROP INDEX event_dates_cancelled_idx`)
	})
}
