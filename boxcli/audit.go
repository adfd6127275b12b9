package boxcli

import (
	"context"
	"fmt"
	"io"

	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
)

// auditEntryJSON is one entry as `audit list --json` prints it.
type auditEntryJSON struct {
	ID        int64   `json:"id"`
	At        string  `json:"at"`
	AccountID *int64  `json:"account_id"`
	AppID     *int64  `json:"app_id"`
	Actor     string  `json:"actor"`
	IP        *string `json:"ip"`
	Action    string  `json:"action"`
	Detail    string  `json:"detail"`
}

func auditCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "read the audit log of what partners and operators did",
		Commands: []*cli.Command{{
			Name:  "list",
			Usage: "the newest entries first: who (partner and IP, or operator), what, when; never a key or secret",
			Flags: []cli.Flag{
				&cli.Int64Flag{Name: "account", Usage: "only entries of this account id"},
				// Not limitFlag: this --limit came first and is clamped to
				// 1…1000 (audit.List), not refused; scripts may rely on that.
				&cli.IntFlag{Name: "limit", Value: 100, Usage: "how many entries (at most 1000)"},
				jsonFlag(),
			},
			Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
				entries, err := audit.List(ctx, m.DB, cmd.Int64("account"), cmd.Int("limit"))
				if err != nil {
					return err
				}
				out := make([]auditEntryJSON, len(entries))
				for i, e := range entries {
					out[i] = auditEntryJSON{ID: e.ID, At: rfc3339(e.CreatedAt), Actor: e.Actor,
						Action: e.Action, Detail: e.Detail}
					if e.IP != "" {
						out[i].IP = &e.IP
					}
					if e.AccountID != 0 {
						out[i].AccountID = &e.AccountID
					}
					if e.AppID != 0 {
						out[i].AppID = &e.AppID
					}
				}
				return output(cmd, stdout, map[string]any{"entries": out}, func(w io.Writer) {
					for _, e := range out {
						who := e.Actor
						if e.IP != nil {
							who += " " + *e.IP
						}
						scope := ""
						if e.AccountID != nil {
							scope = fmt.Sprintf("account %d", *e.AccountID)
						}
						if e.AppID != nil {
							scope += fmt.Sprintf(" app %d", *e.AppID)
						}
						fmt.Fprintf(w, "%s  %-22s %-28s %-18s %s\n", e.At, who, e.Action, scope, e.Detail)
					}
				})
			}),
		}},
	}
}
