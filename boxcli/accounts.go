package boxcli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/urfave/cli/v3"
)

// accountJSON is one account of `accounts list`.
type accountJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Email     string `json:"email"`
	Status    string `json:"status"`
	CreatedAt string `json:"created_at"`
}

func accountsCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "accounts",
		Usage: "manage developer accounts",
		Commands: []*cli.Command{
			{
				Name:  "create",
				Usage: "create a developer account",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Required: true, Usage: "the account's display name"},
					&cli.StringFlag{Name: "email", Required: true, Usage: "the account's email address (unique)"},
					&cli.StringFlag{Name: "status", Value: store.AccountActive, Usage: "active, pending_approval or disabled"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := m.Portal.CreateAccount(ctx, provision.AccountInput{
						Name: cmd.String("name"), Email: cmd.String("email"), Status: cmd.String("status"),
					})
					if err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"id": a.ID, "name": a.Name, "email": a.Email, "status": a.Status}, func(w io.Writer) {
						fmt.Fprintf(w, "account %d %q <%s> is %s\n", a.ID, a.Name, shownEmail(a.Email), a.Status)
					})
				}),
			},
			{
				Name:  "list",
				Usage: "list developer accounts, oldest first",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "status", Usage: "only accounts in this status: active, pending_approval or disabled"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					accounts, err := m.Provision.ListAccounts(ctx, cmd.String("status"))
					if err != nil {
						return err
					}
					out := make([]accountJSON, len(accounts))
					for i, a := range accounts {
						out[i] = accountJSON{ID: a.ID, Name: a.Name, Email: a.Email, Status: a.Status, CreatedAt: rfc3339(a.CreatedAt)}
					}
					return output(cmd, stdout, map[string]any{"accounts": out}, func(w io.Writer) {
						switch {
						case len(out) == 0 && cmd.IsSet("status"):
							fmt.Fprintf(w, "no accounts are %s\n", cmd.String("status"))
						case len(out) == 0:
							fmt.Fprintln(w, "no accounts yet (boxoffice accounts create adds one)")
						}
						for _, a := range out {
							fmt.Fprintf(w, "%-4d %-16s %q <%s>  created %s\n", a.ID, a.Status, a.Name, shownEmail(a.Email), a.CreatedAt)
						}
					})
				}),
			},
			{
				Name:      "reset-link",
				Usage:     "create a one-time link that sets the account's portal password, voiding earlier ones (the service sends no email)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := idArg(cmd, "account")
					if err != nil {
						return err
					}
					link, err := m.Portal.NewResetLink(ctx, id)
					if err != nil {
						return err
					}
					expires := rfc3339(link.ExpiresAt)
					return output(cmd, stdout, map[string]any{"account_id": id, "url": link.URL, "expires_at": expires}, func(w io.Writer) {
						fmt.Fprintf(w, "one-time password reset link for account %d, valid until %s:\n%s\n", id, expires, link.URL)
					})
				}),
			},
			setStatusCommand(stdout, stderr, "account", "change an account's status", "active|pending_approval|disabled",
				func(m *server.Main) func(context.Context, int64, string) error { return m.Provision.SetAccountStatus }),
		},
	}
}

// setStatusCommand is "set-status ID STATUS" of accounts and apps: set
// changes the status of the noun with that id and says so.
func setStatusCommand(stdout, stderr io.Writer, noun, usage, statuses string, set func(m *server.Main) func(context.Context, int64, string) error) *cli.Command {
	return &cli.Command{
		Name:      "set-status",
		Usage:     usage,
		ArgsUsage: "ID " + statuses,
		Flags:     []cli.Flag{jsonFlag()},
		Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
			id, a, err := idArgs(cmd, noun, "STATUS")
			if err != nil {
				return err
			}
			status := a[0]
			if err := set(m)(ctx, id, status); err != nil {
				return err
			}
			return output(cmd, stdout, map[string]any{"id": id, "status": status}, func(w io.Writer) {
				fmt.Fprintf(w, "%s %d is %s\n", noun, id, status)
			})
		}),
	}
}

// shownEmail is an address as stored, for a terminal: printable ASCII as
// it is, anything else escaped (\u200b), so an operator approving accounts
// sees a stored address that would imitate another (one kept from before
// the identity rule) for what it is, and no escape sequence reaches the
// terminal.
func shownEmail(email string) string {
	for i := 0; i < len(email); i++ {
		if email[i] < 0x21 || email[i] > 0x7e {
			q := strconv.QuoteToASCII(email)
			return q[1 : len(q)-1]
		}
	}
	return email
}
