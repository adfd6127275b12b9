package boxcli

import (
	"context"
	"fmt"
	"io"

	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/urfave/cli/v3"
)

func migrateCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "migrate",
		Usage: "apply pending migrations and exit",
		Flags: []cli.Flag{jsonFlag()},
		Action: withMain(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
			pending, err := store.PendingMigrations(ctx, m.DB)
			if err != nil {
				pending = store.MigrationCount() // a fresh database has no migration table yet
			}
			if err := m.Migrate(ctx); err != nil {
				return err
			}
			// Without --json the one line is a log line: stderr.
			return output(cmd, stdout, map[string]any{"status": "migrated", "applied": pending}, func(io.Writer) {
				fmt.Fprintln(stderr, "migrations applied")
			})
		}),
	}
}
