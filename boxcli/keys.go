package boxcli

import (
	"context"
	"fmt"
	"io"

	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
)

func keysCommand(stdout, stderr io.Writer) *cli.Command {
	keyFlags := func() []cli.Flag {
		return []cli.Flag{
			&cli.Int64Flag{Name: "app", Required: true, Usage: "app id"},
			&cli.StringFlag{Name: "env", Required: true, Usage: "test or live"},
			jsonFlag(),
		}
	}
	return &cli.Command{
		Name:  "keys",
		Usage: "rotate and revoke API keys",
		Commands: []*cli.Command{
			{
				Name:  "rotate",
				Usage: "revoke the app's current key of --env and issue a new one",
				Flags: keyFlags(),
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					key, err := m.Provision.RotateKey(ctx, cmd.Int64("app"), cmd.String("env"))
					if err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"app_id": cmd.Int64("app"), "env": cmd.String("env"), "key": key}, func(w io.Writer) {
						fmt.Fprintf(w, "new %s key of app %d (shown only this once): %s\n", cmd.String("env"), cmd.Int64("app"), key)
					})
				}),
			},
			{
				Name:  "revoke",
				Usage: "revoke the app's key of --env; requests with it fail at once",
				Flags: keyFlags(),
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					if err := m.Provision.RevokeKey(ctx, cmd.Int64("app"), cmd.String("env")); err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"app_id": cmd.Int64("app"), "env": cmd.String("env"), "revoked": true}, func(w io.Writer) {
						fmt.Fprintf(w, "revoked the %s key of app %d\n", cmd.String("env"), cmd.Int64("app"))
					})
				}),
			},
		},
	}
}
