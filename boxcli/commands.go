package boxcli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/urfave/cli/v3"
)

// jsonFlag returns a fresh --json flag: urfave/cli keeps a flag's value in
// the flag itself, so commands (and concurrent runs) must not share one.
func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print exactly one JSON object on stdout"}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// args returns the command's positional arguments, refusing a wrong count.
func args(cmd *cli.Command, names ...string) ([]string, error) {
	got := cmd.Args().Slice()
	if len(got) != len(names) {
		return nil, fmt.Errorf("%s needs %d argument(s): %s (see %s --help)", commandName(cmd), len(names), strings.Join(names, " "), cmd.FullName())
	}
	return got, nil
}

func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("%s %q is not a positive integer id", what, s)
	}
	return id, nil
}

// appJSON is the object `apps create` and `seed demo` print.
type appJSON struct {
	ID            int64  `json:"id"`
	AccountID     int64  `json:"account_id"`
	Name          string `json:"name"`
	TestKey       string `json:"test_key"`
	LiveKey       string `json:"live_key"`
	WebhookSecret string `json:"webhook_secret"`
}

func toAppJSON(a *provision.NewApp) appJSON {
	return appJSON{ID: a.App.ID, AccountID: a.App.AccountID, Name: a.App.Name,
		TestKey: a.TestKey, LiveKey: a.LiveKey, WebhookSecret: a.WebhookSecret}
}

func printNewApp(w io.Writer, a *provision.NewApp) {
	fmt.Fprintf(w, "app %d %q of account %d (keys and secret are shown only this once)\n", a.App.ID, a.App.Name, a.App.AccountID)
	fmt.Fprintf(w, "  test key:       %s\n  live key:       %s\n  webhook secret: %s\n", a.TestKey, a.LiveKey, a.WebhookSecret)
	if len(a.App.RedirectDomains) > 0 {
		// Checkout refuses success_url and cancel_url on any other host.
		fmt.Fprintf(w, "  redirect domain: %s (success_url and cancel_url: https://%s/…)\n",
			strings.Join(a.App.RedirectDomains, ", "), a.App.RedirectDomains[0])
	}
}

// printListening tells a person where everything is once serve listens.
func printListening(w io.Writer, addr net.Addr, base string, admin net.Listener, mailTo fmt.Stringer) {
	fmt.Fprintf(w, "\nBoxoffice is listening on %s\n", addr)
	fmt.Fprintf(w, "  REST:          %s/api/v1/events\n", base)
	fmt.Fprintf(w, "  API reference: %s/docs (try requests with your key)\n", base)
	fmt.Fprintf(w, "  GraphQL:       %s/graphql (open it in a browser for the playground)\n", base)
	fmt.Fprintf(w, "  Portal:        %s/portal (partners manage their apps, keys and webhooks)\n", base)
	if admin != nil {
		fmt.Fprintf(w, "  Metrics:       http://%s/metrics (admin listener)\n", admin.Addr())
	}
	switch {
	case mailTo != nil:
		fmt.Fprintf(w, "  Ticket emails: %s\n", mailTo)
	case admin != nil:
		fmt.Fprintf(w, "  Ticket emails: http://%s/mail (development mailbox; set SMTP_URL to send them)\n", admin.Addr())
	default:
		fmt.Fprintln(w, "  Ticket emails: the development mailbox (boxoffice mail list; set SMTP_URL to send them)")
	}
	fmt.Fprintln(w)
}

func serveCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "run pending migrations, then serve HTTP until SIGINT/SIGTERM",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "demo", Usage: "on a database without apps, seed the demo catalog and app and print its keys"}},
		Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
			ln, err := net.Listen("tcp", m.Config.Addr)
			if err != nil {
				return err
			}
			if cmd.Bool("demo") {
				if err := seedOnFirstStart(ctx, stdout, m); err != nil {
					ln.Close()
					return err
				}
			}
			var admin net.Listener
			if m.Config.AdminAddr != "" {
				if admin, err = net.Listen("tcp", m.Config.AdminAddr); err != nil {
					ln.Close()
					return fmt.Errorf("ADMIN_ADDR: %w", err)
				}
			}
			var mailTo fmt.Stringer
			if smtp, ok := m.Mail.(*mail.SMTP); ok {
				mailTo = smtp
			}
			printListening(stdout, ln.Addr(), m.Config.PublicBaseURL, admin, mailTo)
			adminAddr := "none"
			if admin != nil {
				adminAddr = admin.Addr().String()
			}
			limit, gogc := runtimeDefaults()
			m.Log.Info("serving", "addr", ln.Addr().String(), "admin_addr", adminAddr, "memory_limit_mib", limit>>20, "gogc", gogc)
			return m.Serve(ctx, ln, admin)
		}),
	}
}

// DefaultMemoryLimit is serve's soft memory limit when GOMEMLIMIT is unset.
const DefaultMemoryLimit = 100 << 20

// DefaultGCPercent is serve's GOGC when GOGC is unset. A nested GraphQL
// catalog answer allocates about 0.5 MB that dies with the request
// (BenchmarkNestedGraphQL/NewText; 2 MB when this was set), while the
// caches keep 20–50 MB alive; at Go's default of 100 the collector re-marks those
// caches every 25 MB allocated, a third of the server's CPU under a
// new-text GraphQL load (pprof). At 200 it marks half as often; the memory
// limit still bounds the heap.
const DefaultGCPercent = 200

// runtimeDefaults applies DefaultMemoryLimit unless GOMEMLIMIT sets one,
// and DefaultGCPercent unless GOGC sets one, and returns the limit and
// the GOGC in force. The garbage collector works harder as the heap nears the limit,
// instead of letting a burst double the heap; the catalog cache (≈ 25 MB
// at most) stays well inside it.
func runtimeDefaults() (limit int64, gcPercent int) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
	gcPercent = DefaultGCPercent
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	} else {
		gcPercent = debug.SetGCPercent(-1) // read it back: set, then restore
		debug.SetGCPercent(gcPercent)
	}
	return debug.SetMemoryLimit(-1), gcPercent
}

// seedOnFirstStart seeds the demo when no app exists yet; later starts only
// say how to get a fresh key, since only key hashes are stored.
func seedOnFirstStart(ctx context.Context, w io.Writer, m *server.Main) error {
	n, err := store.CountApps(ctx, m.DB)
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(w, "Demo data is already seeded; its keys and portal password were printed on first start.\n"+
			"Lost them? boxoffice keys rotate --app 1 --env test, boxoffice accounts reset-link 1   (or delete %s to start over)\n",
			strings.TrimPrefix(m.Config.DatabaseURL, "sqlite://"))
		return nil
	}
	res, err := seed.Demo(ctx, m.DB, m.Provision, m.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Seeded the demo catalog (%d events) and a demo ", len(res.Catalog.Events))
	printNewApp(w, res.App)
	printDemoSignIn(w, res, m.Config.PublicBaseURL)
	fmt.Fprintf(w, "\nTry it:\n  curl -H 'X-API-Key: %s' %s/api/v1/events\n", res.App.TestKey, m.Config.PublicBaseURL)
	return nil
}

// printDemoSignIn prints how to sign in to the portal as the demo partner;
// the password exists only in this output.
func printDemoSignIn(w io.Writer, res *seed.Result, base string) {
	if res.Password == "" {
		return
	}
	fmt.Fprintf(w, "Developer portal %s/portal, as the demo partner who owns this app (shown only this once):\n", base)
	fmt.Fprintf(w, "  email:          %s\n  password:       %s\n", seed.DemoEmail, res.Password)
	fmt.Fprintf(w, "  (lost it? boxoffice accounts reset-link %d prints a one-time link to set a new one)\n", res.AccountID)
}

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
				if cmd.Bool("json") {
					return printJSON(stdout, toAppJSON(res.App))
				}
				printNewApp(stdout, res.App)
				printDemoSignIn(stdout, res, m.Config.PublicBaseURL)
				return nil
			}),
		}},
	}
}

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
				if cmd.Bool("json") {
					return printJSON(stdout, res)
				}
				if res.NothingChanged {
					fmt.Fprintf(stdout, "nothing changed: the catalog already matches %s (%s)\n", a[0], res.Unchanged)
					return nil
				}
				fmt.Fprintf(stdout, "imported %s: created %s; updated %s; unchanged %s\n", a[0], res.Created, res.Updated, res.Unchanged)
				return nil
			}),
		}},
	}
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
					a, err := m.Provision.CreateAccount(ctx, provision.AccountInput{
						Name: cmd.String("name"), Email: cmd.String("email"), Status: cmd.String("status"),
					})
					if err != nil {
						return err
					}
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"id": a.ID, "name": a.Name, "email": a.Email, "status": a.Status})
					}
					fmt.Fprintf(stdout, "account %d %q <%s> is %s\n", a.ID, a.Name, a.Email, a.Status)
					return nil
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
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"accounts": out})
					}
					if len(out) == 0 {
						if cmd.IsSet("status") {
							fmt.Fprintf(stdout, "no accounts are %s\n", cmd.String("status"))
						} else {
							fmt.Fprintln(stdout, "no accounts yet (boxoffice accounts create adds one)")
						}
						return nil
					}
					for _, a := range out {
						fmt.Fprintf(stdout, "%-4d %-16s %q <%s>  created %s\n", a.ID, a.Status, a.Name, a.Email, a.CreatedAt)
					}
					return nil
				}),
			},
			{
				Name:      "reset-link",
				Usage:     "create a one-time link that sets the account's portal password, voiding earlier ones (the service sends no email)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "ID")
					if err != nil {
						return err
					}
					id, err := parseID("account", a[0])
					if err != nil {
						return err
					}
					link, err := m.Portal.NewResetLink(ctx, id)
					if err != nil {
						return err
					}
					expires := link.ExpiresAt.UTC().Format(time.RFC3339)
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"account_id": id, "url": link.URL, "expires_at": expires})
					}
					fmt.Fprintf(stdout, "one-time password reset link for account %d, valid until %s:\n%s\n", id, expires, link.URL)
					return nil
				}),
			},
			setStatusCommand(stdout, stderr, "account", "change an account's status", "active|pending_approval|disabled",
				func(m *server.Main) func(context.Context, int64, string) error { return m.Provision.SetAccountStatus }),
		},
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
					if cmd.Bool("json") {
						return printJSON(stdout, toAppJSON(a))
					}
					printNewApp(stdout, a)
					return nil
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
					a, err := args(cmd, "ID")
					if err != nil {
						return err
					}
					id, err := parseID("app", a[0])
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
					if cmd.Bool("json") {
						return printJSON(stdout, out)
					}
					fmt.Fprintf(stdout, "app %d %q: redirect domains [%s], webhook URL %q\n", app.ID, app.Name,
						strings.Join(app.RedirectDomains, ", "), app.WebhookURL)
					return nil
				}),
			},
			{
				Name:      "set-ticket-emails",
				Usage:     "switch the ticket emails of an app's live orders on or off (off: the app delivers tickets itself)",
				ArgsUsage: "ID on|off",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "ID", "on|off")
					if err != nil {
						return err
					}
					id, err := parseID("app", a[0])
					if err != nil {
						return err
					}
					if a[1] != "on" && a[1] != "off" {
						return fmt.Errorf("the second argument is on or off, not %q", a[1])
					}
					app, err := m.Provision.SetTicketEmails(ctx, id, a[1] == "on")
					if err != nil {
						return err
					}
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"id": app.ID, "ticket_emails": app.TicketEmails})
					}
					fmt.Fprintf(stdout, "app %d %q: ticket emails %s\n", app.ID, app.Name, onOff(app.TicketEmails))
					return nil
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
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"apps": out})
					}
					if len(out) == 0 {
						if cmd.IsSet("account") {
							fmt.Fprintf(stdout, "account %d has no apps\n", cmd.Int64("account"))
						} else {
							fmt.Fprintln(stdout, "no apps yet (boxoffice apps create adds one)")
						}
						return nil
					}
					for _, a := range out {
						fmt.Fprintf(stdout, "%-4d %-9s account %-4d %q  webhook URL %s\n", a.ID, a.Status, a.AccountID, a.Name, orNone(a.WebhookURL))
					}
					return nil
				}),
			},
			{
				Name:      "show",
				Usage:     "show one app and the hints of its active keys (never keys or secrets)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "ID")
					if err != nil {
						return err
					}
					id, err := parseID("app", a[0])
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
					if cmd.Bool("json") {
						return printJSON(stdout, out)
					}
					printAppShow(stdout, out)
					return nil
				}),
			},
			{
				Name:      "rotate-webhook-secret",
				Usage:     "give an app a new webhook secret, shown this once (every later delivery is signed with it)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "ID")
					if err != nil {
						return err
					}
					id, err := parseID("app", a[0])
					if err != nil {
						return err
					}
					secret, err := m.Provision.RotateWebhookSecret(ctx, id)
					if err != nil {
						return err
					}
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"app_id": id, "webhook_secret": secret})
					}
					fmt.Fprintf(stdout, "new webhook secret of app %d (shown only this once; deliveries from now on are signed with it): %s\n", id, secret)
					return nil
				}),
			},
			setStatusCommand(stdout, stderr, "app", "suspend or reactivate an app", "active|suspended",
				func(m *server.Main) func(context.Context, int64, string) error { return m.Provision.SetAppStatus }),
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
			a, err := args(cmd, "ID", "STATUS")
			if err != nil {
				return err
			}
			id, err := parseID(noun, a[0])
			if err != nil {
				return err
			}
			if err := set(m)(ctx, id, a[1]); err != nil {
				return err
			}
			if cmd.Bool("json") {
				return printJSON(stdout, map[string]any{"id": id, "status": a[1]})
			}
			fmt.Fprintf(stdout, "%s %d is %s\n", noun, id, a[1])
			return nil
		}),
	}
}

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
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"app_id": cmd.Int64("app"), "env": cmd.String("env"), "key": key})
					}
					fmt.Fprintf(stdout, "new %s key of app %d (shown only this once): %s\n", cmd.String("env"), cmd.Int64("app"), key)
					return nil
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
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"app_id": cmd.Int64("app"), "env": cmd.String("env"), "revoked": true})
					}
					fmt.Fprintf(stdout, "revoked the %s key of app %d\n", cmd.String("env"), cmd.Int64("app"))
					return nil
				}),
			},
		},
	}
}

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
					out[i] = auditEntryJSON{ID: e.ID, At: e.CreatedAt.UTC().Format(time.RFC3339), Actor: e.Actor,
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
				if cmd.Bool("json") {
					return printJSON(stdout, map[string]any{"entries": out})
				}
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
					fmt.Fprintf(stdout, "%s  %-22s %-28s %-18s %s\n", e.At, who, e.Action, scope, e.Detail)
				}
				return nil
			}),
		}},
	}
}
