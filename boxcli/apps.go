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

// appJSON is the object `apps create` and `seed demo` print.
type appJSON struct {
	ID            int64  `json:"id"`
	AccountID     int64  `json:"account_id"`
	Name          string `json:"name"`
	TestKey       string `json:"test_key"`
	LiveKey       string `json:"live_key"`
	WebhookSecret string `json:"webhook_secret"`
}

// toAppJSON is a new app with its keys and secret, as it is printed the
// one time they are shown.
func toAppJSON(a *provision.NewApp) appJSON {
	return appJSON{ID: a.App.ID, AccountID: a.App.AccountID, Name: a.App.Name,
		TestKey: a.TestKey, LiveKey: a.LiveKey, WebhookSecret: a.WebhookSecret}
}

// printNewApp prints a new app, its keys and secret for a person.
func printNewApp(w io.Writer, a *provision.NewApp) {
	fmt.Fprintf(w, "app %d %q of account %d (keys and secret are shown only this once)\n", a.App.ID, a.App.Name, a.App.AccountID)
	fmt.Fprintf(w, "  test key:       %s\n  live key:       %s\n  webhook secret: %s\n", a.TestKey, a.LiveKey, a.WebhookSecret)
	if len(a.App.RedirectDomains) > 0 {
		// Checkout refuses success_url and cancel_url on any other host.
		fmt.Fprintf(w, "  redirect domain: %s (success_url and cancel_url: https://%s/…)\n",
			strings.Join(a.App.RedirectDomains, ", "), a.App.RedirectDomains[0])
	}
}

func appsCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "apps",
		Usage: "manage partner apps",
		Commands: []*cli.Command{
			{
				Name:  "create",
				Usage: "create an app with a test key, a live key and a webhook secret",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "account", Required: true, Usage: "owning account id"},
					&cli.StringFlag{Name: "name", Required: true, Usage: "the app's display name"},
					&cli.StringSliceFlag{Name: "redirect-domain", Usage: "allowed redirect host (repeatable)"},
					&cli.StringFlag{Name: "webhook-url", Usage: "https:// URL that receives the app's webhook events"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := m.Provision.CreateApp(ctx, provision.AppInput{
						AccountID: cmd.Int64("account"), Name: cmd.String("name"),
						RedirectDomains: cmd.StringSlice("redirect-domain"), WebhookURL: cmd.String("webhook-url"),
					})
					if err != nil {
						return err
					}
					return output(cmd, stdout, toAppJSON(a), func(w io.Writer) { printNewApp(w, a) })
				}),
			},
			{
				Name:      "update",
				Usage:     "change an app's redirect allowlist, webhook URL or name",
				ArgsUsage: "ID",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "redirect-domain", Usage: "add an allowed redirect host (repeatable)"},
					&cli.StringSliceFlag{Name: "remove-redirect-domain", Usage: "take a host off the allowlist (repeatable)"},
					&cli.BoolFlag{Name: "clear-redirect-domains", Usage: "empty the allowlist first"},
					&cli.StringFlag{Name: "webhook-url", Usage: "webhook URL (empty string removes it)"},
					&cli.StringFlag{Name: "name", Usage: "a new display name"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := idArg(cmd, "app")
					if err != nil {
						return err
					}
					up := provision.AppUpdate{
						RedirectDomains:       cmd.StringSlice("redirect-domain"),
						RemoveRedirectDomains: cmd.StringSlice("remove-redirect-domain"),
						ClearRedirectDomains:  cmd.Bool("clear-redirect-domains"),
					}
					if cmd.IsSet("webhook-url") {
						u := cmd.String("webhook-url")
						up.WebhookURL = &u
					}
					if cmd.IsSet("name") {
						n := cmd.String("name")
						up.Name = &n
					}
					app, err := m.Provision.UpdateApp(ctx, id, up)
					if err != nil {
						return err
					}
					out := map[string]any{"id": app.ID, "account_id": app.AccountID, "name": app.Name, "status": app.Status,
						"redirect_domains": app.RedirectDomains, "webhook_url": app.WebhookURL}
					return output(cmd, stdout, out, func(w io.Writer) {
						fmt.Fprintf(w, "app %d %q: redirect domains [%s], webhook URL %q\n", app.ID, app.Name,
							strings.Join(app.RedirectDomains, ", "), app.WebhookURL)
					})
				}),
			},
			{
				Name:      "set-ticket-emails",
				Usage:     "switch the ticket emails of an app's live orders on or off (off: the app delivers tickets itself)",
				ArgsUsage: "ID on|off",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, a, err := idArgs(cmd, "app", "on|off")
					if err != nil {
						return err
					}
					if a[0] != "on" && a[0] != "off" {
						return fmt.Errorf("the second argument is on or off, not %q", a[0])
					}
					app, err := m.Provision.SetTicketEmails(ctx, id, a[0] == "on")
					if err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"id": app.ID, "ticket_emails": app.TicketEmails}, func(w io.Writer) {
						fmt.Fprintf(w, "app %d %q: ticket emails %s\n", app.ID, app.Name, onOff(app.TicketEmails))
					})
				}),
			},
			{
				Name:  "list",
				Usage: "list apps, oldest first (never their keys or secrets)",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "account", Usage: "only the apps of this account id"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					apps, err := m.Provision.ListApps(ctx, cmd.Int64("account"))
					if err != nil {
						return err
					}
					out := make([]appInfoJSON, len(apps))
					for i := range apps {
						out[i] = toAppInfoJSON(&apps[i])
					}
					return output(cmd, stdout, map[string]any{"apps": out}, func(w io.Writer) {
						switch {
						case len(out) == 0 && cmd.IsSet("account"):
							fmt.Fprintf(w, "account %d has no apps\n", cmd.Int64("account"))
						case len(out) == 0:
							fmt.Fprintln(w, "no apps yet (boxoffice apps create adds one)")
						}
						for _, a := range out {
							fmt.Fprintf(w, "%-4d %-9s account %-4d %q  webhook URL %s\n", a.ID, a.Status, a.AccountID, a.Name, orNone(a.WebhookURL))
						}
					})
				}),
			},
			{
				Name:      "show",
				Usage:     "show one app and the hints of its active keys (never keys or secrets)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := idArg(cmd, "app")
					if err != nil {
						return err
					}
					d, err := m.Provision.ShowApp(ctx, id)
					if err != nil {
						return err
					}
					out := appShowJSON{appInfoJSON: toAppInfoJSON(d.App), Keys: []keyHintJSON{}}
					for _, k := range d.Keys {
						out.Keys = append(out.Keys, keyHintJSON{Env: k.Environment, Hint: k.Hint, CreatedAt: rfc3339(k.CreatedAt)})
					}
					return output(cmd, stdout, out, func(w io.Writer) { printAppShow(w, out) })
				}),
			},
			{
				Name:      "rotate-webhook-secret",
				Usage:     "give an app a new webhook secret, shown this once (every later delivery is signed with it)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := idArg(cmd, "app")
					if err != nil {
						return err
					}
					secret, err := m.Provision.RotateWebhookSecret(ctx, id)
					if err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"app_id": id, "webhook_secret": secret}, func(w io.Writer) {
						fmt.Fprintf(w, "new webhook secret of app %d (shown only this once; deliveries from now on are signed with it): %s\n", id, secret)
					})
				}),
			},
			setStatusCommand(stdout, stderr, "app", "suspend or reactivate an app", "active|suspended",
				func(m *server.Main) func(context.Context, int64, string) error { return m.Provision.SetAppStatus }),
		},
	}
}

// The objects the read commands print with --json. They carry no key,
// key hash or webhook secret: only key hints.

// appInfoJSON is one app of `apps list`: the fields `apps update` prints,
// and when it was created and last changed.
type appInfoJSON struct {
	ID              int64    `json:"id"`
	AccountID       int64    `json:"account_id"`
	Name            string   `json:"name"`
	Status          string   `json:"status"`
	RedirectDomains []string `json:"redirect_domains"`
	WebhookURL      string   `json:"webhook_url"`
	TicketEmails    bool     `json:"ticket_emails"`
	CreatedAt       string   `json:"created_at"`
	UpdatedAt       string   `json:"updated_at"`
}

// appShowJSON is `apps show`: the app and the hints of its active keys.
type appShowJSON struct {
	appInfoJSON
	Keys []keyHintJSON `json:"keys"`
}

// keyHintJSON is one active key of `apps show`: never the key itself.
type keyHintJSON struct {
	Env       string `json:"env"`
	Hint      string `json:"hint"` // the key's last four characters
	CreatedAt string `json:"created_at"`
}

// toAppInfoJSON is an app as the read commands print it.
func toAppInfoJSON(a *store.App) appInfoJSON {
	domains := a.RedirectDomains
	if domains == nil {
		domains = []string{}
	}
	return appInfoJSON{ID: a.ID, AccountID: a.AccountID, Name: a.Name, Status: a.Status, RedirectDomains: domains,
		WebhookURL: a.WebhookURL, TicketEmails: a.TicketEmails, CreatedAt: rfc3339(a.CreatedAt), UpdatedAt: rfc3339(a.UpdatedAt)}
}

// printAppShow prints `apps show` for a person.
func printAppShow(w io.Writer, a appShowJSON) {
	fmt.Fprintf(w, "app %d %q of account %d is %s\n", a.ID, a.Name, a.AccountID, a.Status)
	fmt.Fprintf(w, "  redirect domains: %s\n", orNone(strings.Join(a.RedirectDomains, ", ")))
	fmt.Fprintf(w, "  webhook URL:      %s\n", orNone(a.WebhookURL))
	fmt.Fprintf(w, "  ticket emails:    %s\n", onOff(a.TicketEmails))
	for _, env := range []string{store.EnvTest, store.EnvLive} {
		hint := "none active"
		for _, k := range a.Keys {
			if k.Env == env {
				hint = fmt.Sprintf("svc_%s_…%s (issued %s)", env, k.Hint, k.CreatedAt)
			}
		}
		fmt.Fprintf(w, "  %s key:         %s\n", env, hint)
	}
	fmt.Fprintf(w, "  created %s, updated %s\n", a.CreatedAt, a.UpdatedAt)
}

// onOff names a switch's state.
func onOff(on bool) string {
	if on {
		return "on (the service emails buyers their tickets)"
	}
	return "off (the app delivers tickets itself)"
}
