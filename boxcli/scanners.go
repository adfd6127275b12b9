package boxcli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/urfave/cli/v3"
)

// scannerJSON is a scanner as `scanners list --json` prints it; `scanners
// create --json` prints the spec's object (newScannerJSON).
type scannerJSON struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	EventID     int64   `json:"event_id"`
	Environment string  `json:"environment"`
	Hint        string  `json:"hint"`
	CreatedAt   string  `json:"created_at"`
	RevokedAt   *string `json:"revoked_at"`
}

type newScannerJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	EventID     int64  `json:"event_id"`
	Environment string `json:"environment"`
	Key         string `json:"key"`
}

func toScannerJSON(s *store.Scanner) scannerJSON {
	out := scannerJSON{ID: s.ID, Name: s.Name, EventID: s.EventID, Environment: s.Environment, Hint: s.Hint,
		CreatedAt: rfc3339(s.CreatedAt)}
	if !s.RevokedAt.IsZero() {
		at := rfc3339(s.RevokedAt)
		out.RevokedAt = &at
	}
	return out
}

func scannersCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "scanners",
		Usage: "make and revoke the door's scanner keys (one event, one environment each)",
		Commands: []*cli.Command{
			{
				Name:  "create",
				Usage: "make a scanner key for the door of an event; the key is shown only this once",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "event", Required: true, Usage: "the event id whose dates it admits to"},
					&cli.StringFlag{Name: "env", Required: true, Usage: "test (admits test tickets) or live"},
					&cli.StringFlag{Name: "name", Required: true, Usage: "what door staff call the device, such as \"Main gate\""},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					s, err := m.Provision.CreateScanner(ctx, provision.ScannerInput{
						EventID: cmd.Int64("event"), Environment: cmd.String("env"), Name: cmd.String("name"),
					})
					if err != nil {
						return err
					}
					sc := s.Scanner
					out := newScannerJSON{ID: sc.ID, Name: sc.Name, EventID: sc.EventID, Environment: sc.Environment, Key: s.Key}
					return output(cmd, stdout, out, func(w io.Writer) {
						fmt.Fprintf(w, "scanner %d %q for the %s door of event %d (the key is shown only this once):\n  %s\n",
							sc.ID, sc.Name, sc.Environment, sc.EventID, s.Key)
						fmt.Fprintf(w, "Open %s/door on the phone and paste the key; revoke it with boxoffice scanners revoke %d\n",
							strings.TrimRight(m.Config.PublicBaseURL, "/"), sc.ID)
					})
				}),
			},
			{
				Name:  "list",
				Usage: "list scanners, oldest first, revoked ones too (never their keys)",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "event", Usage: "only the scanners of this event id"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					list, err := m.Provision.ListScanners(ctx, cmd.Int64("event"))
					if err != nil {
						return err
					}
					out := make([]scannerJSON, len(list))
					for i := range list {
						out[i] = toScannerJSON(&list[i])
					}
					return output(cmd, stdout, map[string]any{"scanners": out}, func(w io.Writer) {
						if len(out) == 0 {
							fmt.Fprintln(w, "no scanners yet (boxoffice scanners create --event ID --env test|live --name NAME adds one)")
						}
						for _, s := range out {
							state := "active"
							if s.RevokedAt != nil {
								state = "revoked " + *s.RevokedAt
							}
							fmt.Fprintf(w, "%-4d %-4s event %-4d %q  key …%s  created %s  %s\n", s.ID, s.Environment, s.EventID, s.Name,
								s.Hint, s.CreatedAt, state)
						}
					})
				}),
			},
			{
				Name:      "revoke",
				Usage:     "revoke a scanner; its key stops working at once",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := idArg(cmd, "scanner")
					if err != nil {
						return err
					}
					s, err := m.Provision.RevokeScanner(ctx, id)
					if err != nil {
						return err
					}
					return output(cmd, stdout, toScannerJSON(s), func(w io.Writer) {
						fmt.Fprintf(w, "scanner %d %q is revoked (since %s)\n", s.ID, s.Name, rfc3339(s.RevokedAt))
					})
				}),
			},
		},
	}
}
