package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Webhook health: the failure streak of an app's webhook endpoint. A row
// exists while deliveries to the URL it names keep failing (it is deleted
// by the next success); disabled_at is set once the streak has lasted long
// enough that deliveries to that URL stop until the partner resumes them
// or sets another URL.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE TABLE webhook_health (
				app_id BIGINT PRIMARY KEY REFERENCES apps (id),
				url TEXT NOT NULL,
				failures BIGINT NOT NULL,
				failing_since {ts} NOT NULL,
				last_failure_at {ts} NOT NULL,
				last_error TEXT NOT NULL,
				disabled_at {ts}
			)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, `DROP TABLE webhook_health`)
	})
}
