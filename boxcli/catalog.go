package boxcli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
)

func catalogCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "catalog",
		Usage: "manage the published catalog",
		Commands: []*cli.Command{{
			Name:      "import",
			Usage:     "upsert a catalog file by reference, all or nothing",
			ArgsUsage: "FILE",
			Flags:     []cli.Flag{jsonFlag()},
			Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
				a, err := args(cmd, "FILE")
				if err != nil {
					return err
				}
				f, err := os.Open(a[0])
				if err != nil {
					return err
				}
				defer f.Close()
				file, err := catalog.ParseFile(f)
				if err != nil {
					return err
				}
				res, err := catalog.Import(ctx, m.DB, file, m.Now())
				if err != nil {
					return err
				}
				return output(cmd, stdout, res, func(w io.Writer) {
					if res.NothingChanged {
						fmt.Fprintf(w, "nothing changed: the catalog already matches %s (%s)\n", a[0], res.Unchanged)
						return
					}
					fmt.Fprintf(w, "imported %s: created %s; updated %s; unchanged %s\n", a[0], res.Created, res.Updated, res.Unchanged)
				})
			}),
		}},
	}
}
