package boxcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
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
				res, err := catalog.ImportReporting(ctx, m.DB, file, m.Now(), importProgress(stderr, time.Now))
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

// importProgress returns what shows an import's progress on w when w is a
// terminal (nil otherwise: logs and pipes get only the result): one line,
// rewritten at most every 200 ms and at the end.
func importProgress(w io.Writer, now func() time.Time) func(done, total int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressLine(w, now)
}

// progressLine writes "importing: DONE of TOTAL rows (P%)" over itself on w.
func progressLine(w io.Writer, now func() time.Time) func(done, total int) {
	var last time.Time
	return func(done, total int) {
		t := now()
		if done < total && t.Sub(last) < 200*time.Millisecond {
			return
		}
		last = t
		fmt.Fprintf(w, "\rimporting: %d of %d rows (%d%%)", done, total, done*100/max(total, 1))
		if done >= total {
			fmt.Fprintln(w)
		}
	}
}
