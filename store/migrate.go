package store

import (
	"context"
	"fmt"

	"github.com/boxoffice/boxoffice/store/migrations"
	"github.com/uptrace/bun/migrate"
)

// migrationLockID is the PostgreSQL advisory lock that serialises migrations
// of instances starting together.
const migrationLockID = 0x626f786f6666 // "boxoff"

// Migrate applies pending migrations. On PostgreSQL a session advisory lock
// makes concurrent starts wait for each other instead of failing or racing;
// the lock dies with its connection, so a crash never leaves it stuck. SQLite
// serialises writers itself.
func Migrate(ctx context.Context, db *DB) error {
	if db.Postgres() {
		conn, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrationLockID); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrationLockID) //nolint:errcheck // released with the connection anyway
	}
	m := migrate.NewMigrator(db.DB, migrations.Migrations, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("migrate: init: %w", err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// PendingMigrations reports how many migrations are not yet applied.
func PendingMigrations(ctx context.Context, db *DB) (int, error) {
	m := migrate.NewMigrator(db.DB, migrations.Migrations)
	ms, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		return 0, err
	}
	return len(ms.Unapplied()), nil
}

// MigrationCount is how many migrations the service has.
func MigrationCount() int { return len(migrations.Migrations.Sorted()) }
