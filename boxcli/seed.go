package boxcli

import (
	"context"
	"io"

	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
)

func seedCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "seed",
		Usage: "create demo data",
		Commands: []*cli.Command{{
			Name:  "demo",
			Usage: "import the demo catalog and create a demo account and app; prints its keys",
			Flags: []cli.Flag{jsonFlag()},
			Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
				res, err := seed.Demo(ctx, m.DB, m.Provision, m.Now())
				if err != nil {
					return err
				}
				return output(cmd, stdout, toAppJSON(res.App), func(w io.Writer) {
					printNewApp(w, res.App)
					printDemoSignIn(w, res, m.Config.PublicBaseURL)
				})
			}),
		}},
	}
}
