// Package boxcli is the boxoffice command line: serve, migrate, seed demo
// data, import the catalog, provision accounts, apps and keys, and read
// what the service did. Its names, flags and output are a contract
// scripts depend on (docs/operator.md). cmd/boxoffice is main over Run.
//
// The name keeps it apart from urfave/cli, which every file here imports
// as cli.
package boxcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/live"
	"github.com/boxoffice/boxoffice/portal"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
)

// describe is what an error prints as: a refusal's own message (its code
// is for the APIs and the portal), any other error in full.
func describe(err error) string {
	var e *apperr.Error
	if errors.As(err, &e) && e.Status() < 500 {
		return e.Message
	}
	return err.Error()
}

// Run runs the command args names (args[0] is the program's name) and
// reports a failure as docs/operator.md promises: one line on stderr and,
// when --json was asked for, also {"error": "…"} on stdout (with
// "problems" for a refused catalog file). It returns the error, for the
// exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := New(stdout, stderr).Run(ctx, args)
	if err == nil {
		return nil
	}
	msg := oneLine(describe(err))
	fmt.Fprintln(stderr, "boxoffice: "+msg)
	if wantsJSON(args) {
		out := map[string]any{"error": msg}
		var fe *catalog.FileError
		if errors.As(err, &fe) {
			out["problems"] = fe.Problems
		}
		_ = printJSON(stdout, out)
	}
	return err
}

// wantsJSON reports whether --json is among the flags of args, read
// without the parser, which may be what failed.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "json" {
			return !hasValue || value == "true" || value == "1"
		}
	}
	return false
}

// scriptable makes a command tree fail the way scripts need: a usage
// error (unknown flag, missing flag or argument, unknown command) is one
// line, never the help text; a group named without a command, or with
// one it does not have, says so; a command that takes no arguments
// refuses stray ones (such as "apps list 3" for "apps list --account 3").
// Only `boxoffice` alone, and --help, print help.
func scriptable(cmd *cli.Command) {
	cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
		return fmt.Errorf("%s: %w (see %s --help)", commandName(c), err, c.FullName())
	}
	switch {
	case len(cmd.Commands) > 0 && cmd.Action == nil:
		cmd.Action = func(_ context.Context, c *cli.Command) error {
			var names []string
			for _, sub := range c.Commands {
				if sub.Name != "help" {
					names = append(names, sub.Name)
				}
			}
			if c.Args().Present() {
				return fmt.Errorf("unknown command %q (%s has %s)", strings.TrimPrefix(c.FullName()+" "+c.Args().First(), "boxoffice "),
					c.FullName(), strings.Join(names, ", "))
			}
			if c.Root() == c {
				return cli.ShowRootCommandHelp(c)
			}
			return fmt.Errorf("%s needs a command: %s", commandName(c), strings.Join(names, ", "))
		}
	case len(cmd.Commands) == 0 && cmd.ArgsUsage == "" && cmd.Action != nil:
		action := cmd.Action
		cmd.Action = func(ctx context.Context, c *cli.Command) error {
			if c.Args().Present() {
				return fmt.Errorf("%s takes no arguments, but was given %q (see %s --help)", commandName(c), c.Args().First(), c.FullName())
			}
			return action(ctx, c)
		}
	}
	for _, sub := range cmd.Commands {
		scriptable(sub)
	}
}

// commandName is a command's name as errors give it: "apps create".
func commandName(c *cli.Command) string {
	return strings.TrimPrefix(c.FullName(), c.Root().Name+" ")
}

// oneLine keeps an error to the one line docs/operator.md promises, unless it is
// a list of problems (a refused catalog file), which is worth its lines.
func oneLine(s string) string {
	if strings.Contains(s, "\n  ") {
		return s
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// newLogger writes JSON logs to stderr, or text when stderr is a terminal.
func newLogger(w io.Writer) *slog.Logger {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// globalFlags are read by every command, each from its flag or environment
// variable. Fresh flags per CLI: urfave/cli keeps values in the flags.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "database-url", Value: defaults.DatabaseURL, Sources: cli.EnvVars("DATABASE_URL"),
			Usage: "sqlite://PATH (embedded) or postgres://… (production)"},
		&cli.StringFlag{Name: "addr", Value: defaults.Addr, Sources: cli.EnvVars("ADDR"), Usage: "listen address of serve"},
		&cli.StringFlag{Name: "admin-addr", Value: defaults.AdminAddr, Sources: cli.EnvVars("ADMIN_ADDR"),
			Usage: "listen address of serve's /metrics and health checks, never the public port (empty: none)"},
		&cli.StringFlag{Name: "public-base-url", Value: defaults.PublicBaseURL, Sources: cli.EnvVars("PUBLIC_BASE_URL"),
			Usage: "base of every URL the service hands out"},
		&cli.BoolFlag{Name: "webhook-allow-private-targets", Sources: cli.EnvVars("WEBHOOK_ALLOW_PRIVATE_TARGETS"),
			Usage: "allow http:// and private-network webhook URLs (development and tests only)"},
		&cli.DurationFlag{Name: "sandbox-expiry", Value: defaults.SandboxExpiry, Sources: cli.EnvVars("SANDBOX_EXPIRY"),
			Usage: "how long a pending sandbox checkout lives"},
		&cli.DurationFlag{Name: "live-expiry", Value: defaults.LiveExpiry, Sources: cli.EnvVars("LIVE_EXPIRY"),
			Usage: "how long a pending live checkout lives"},
		&cli.Int64Flag{Name: "free-daily-app-cap", Value: defaults.FreeDailyAppCap, Sources: cli.EnvVars("FREE_DAILY_APP_CAP"),
			Usage: "live free tickets per app per UTC day"},
		&cli.DurationFlag{Name: "webhook-retry-base", Value: defaults.WebhookRetryBase, Sources: cli.EnvVars("WEBHOOK_RETRY_BASE"),
			Usage: "first webhook retry delay; attempt n waits about base·2^(n-1)"},
		&cli.IntFlag{Name: "webhook-app-concurrency", Value: defaults.WebhookAppConcurrency, Sources: cli.EnvVars("WEBHOOK_APP_CONCURRENCY"),
			Usage: "most webhook deliveries of one account's apps together running at once on one instance (at most half the workers; one while its receiver fails)"},
		&cli.DurationFlag{Name: "webhook-disable-after", Value: defaults.WebhookDisableAfter, Sources: cli.EnvVars("WEBHOOK_DISABLE_AFTER"),
			Usage: "how long every delivery to a webhook URL may fail before deliveries to it stop until the partner resumes them"},
		&cli.Int64Flag{Name: "free-daily-buyer-event-cap", Value: defaults.FreeDailyBuyerEventCap, Sources: cli.EnvVars("FREE_DAILY_BUYER_EVENT_CAP"),
			Usage: "live free tickets per buyer per event per UTC day"},
		&cli.StringFlag{Name: "redis-url", Sources: cli.EnvVars("REDIS_URL"),
			Usage: "Redis for rate-limit counters shared by every instance (redis://host:6379/0)"},
		&cli.StringFlag{Name: "trusted-proxies", Sources: cli.EnvVars("TRUSTED_PROXIES"),
			Usage: "comma-separated CIDRs whose X-Forwarded-For is believed for the client IP"},
		&cli.IntFlag{Name: "rate-limit-failed-auth", Value: defaults.RateLimits.FailedAuth, Sources: cli.EnvVars("RATE_LIMIT_FAILED_AUTH"),
			Usage: "failed authentication attempts per client IP per window"},
		&cli.IntFlag{Name: "rate-limit-live", Value: defaults.RateLimits.LiveApp, Sources: cli.EnvVars("RATE_LIMIT_LIVE"),
			Usage: "requests per live app per window"},
		&cli.IntFlag{Name: "rate-limit-test", Value: defaults.RateLimits.TestApp, Sources: cli.EnvVars("RATE_LIMIT_TEST"),
			Usage: "requests per test app per window"},
		&cli.IntFlag{Name: "rate-limit-checkout", Value: defaults.RateLimits.Checkout, Sources: cli.EnvVars("RATE_LIMIT_CHECKOUT"),
			Usage: "checkout creates per app and environment per window"},
		&cli.DurationFlag{Name: "rate-limit-window", Value: defaults.RateLimits.Window, Sources: cli.EnvVars("RATE_LIMIT_WINDOW"),
			Usage: "the window of every rate limit"},
		&cli.DurationFlag{Name: "rate-limit-delay", Value: defaults.RateLimitDelay, Sources: cli.EnvVars("RATE_LIMIT_DELAY"),
			Usage: "how long a request refused for a rate limit waits before its 429 is sent (at most its Retry-After; 0 answers at once)"},
		&cli.IntFlag{Name: "account-limit-multiple", Value: defaults.RateLimits.AccountMultiple, Sources: cli.EnvVars("ACCOUNT_LIMIT_MULTIPLE"),
			Usage: "an account's apps together get at most this many times one app's request, checkout, WebSocket and subscription limits"},
		&cli.IntFlag{Name: "max-apps-per-account", Value: defaults.MaxAppsPerAccount, Sources: cli.EnvVars("MAX_APPS_PER_ACCOUNT"),
			Usage: "most apps one account may have"},
		&cli.StringFlag{Name: "payment-provider", Sources: cli.EnvVars("PAYMENT_PROVIDER"),
			Usage: "live payments: paystack, or dev (development only; never for real buyers)"},
		&cli.StringFlag{Name: "paystack-secret-key", Sources: cli.EnvVars("PAYSTACK_SECRET_KEY"),
			Usage: "Paystack secret key (sk_…)"},
		&cli.StringFlag{Name: "paystack-base-url", Sources: cli.EnvVars("PAYSTACK_BASE_URL"),
			Usage: "Paystack API base (default https://api.paystack.co)"},
		&cli.BoolFlag{Name: "live-free-checkout", Value: true, Sources: cli.EnvVars("LIVE_FREE_CHECKOUT"),
			Usage: "allow live free checkout (false answers 503 free_checkout_unavailable)"},
		&cli.IntFlag{Name: "webhook-streams-per-app", Value: defaults.WebhookStreams.PerApp, Sources: cli.EnvVars("WEBHOOK_STREAMS_PER_APP"),
			Usage: "most webhook event streams (boxoffice listen) one app may hold open on one instance"},
		&cli.Int64Flag{Name: "max-body-bytes", Value: defaults.MaxBodyBytes, Sources: cli.EnvVars("MAX_BODY_BYTES"),
			Usage: "largest request body accepted"},
		&cli.DurationFlag{Name: "portal-session-ttl", Value: defaults.Portal.SessionTTL, Sources: cli.EnvVars("PORTAL_SESSION_TTL"),
			Usage: "how long a developer portal sign-in lasts"},
		&cli.DurationFlag{Name: "portal-reset-ttl", Value: defaults.Portal.ResetTTL, Sources: cli.EnvVars("PORTAL_RESET_TTL"),
			Usage: "how long a password reset link (accounts reset-link) works"},
		&cli.IntFlag{Name: "portal-signin-per-ip", Value: defaults.Portal.SignInPerIP, Sources: cli.EnvVars("PORTAL_SIGNIN_PER_IP"),
			Usage: "portal sign-in and sign-up attempts per client IP per --portal-signin-window"},
		&cli.IntFlag{Name: "portal-signin-per-account", Value: defaults.Portal.SignInPerAccount, Sources: cli.EnvVars("PORTAL_SIGNIN_PER_ACCOUNT"),
			Usage: "portal sign-in attempts per email address per --portal-signin-window"},
		&cli.DurationFlag{Name: "portal-signin-window", Value: defaults.Portal.SignInWindow, Sources: cli.EnvVars("PORTAL_SIGNIN_WINDOW"),
			Usage: "the window of the portal's sign-in limits"},
		&cli.IntFlag{Name: "portal-test-events-per-app", Value: defaults.Portal.TestEventsPerApp, Sources: cli.EnvVars("PORTAL_TEST_EVENTS_PER_APP"),
			Usage: "test webhook events one app may send from the portal per minute"},
		&cli.IntFlag{Name: "graphql-max-bytes", Value: defaults.GraphQLLimits.Bytes, Sources: cli.EnvVars("GRAPHQL_MAX_BYTES"),
			Usage: "largest GraphQL document, in bytes, read before parsing"},
		&cli.IntFlag{Name: "graphql-max-tokens", Value: defaults.GraphQLLimits.Tokens, Sources: cli.EnvVars("GRAPHQL_MAX_TOKENS"),
			Usage: "most lexical tokens in a GraphQL document"},
		&cli.IntFlag{Name: "graphql-max-fields", Value: defaults.GraphQLLimits.Fields, Sources: cli.EnvVars("GRAPHQL_MAX_FIELDS"),
			Usage: "most field selections in a GraphQL document, fragments counted where spread"},
		&cli.IntFlag{Name: "graphql-max-aliases", Value: defaults.GraphQLLimits.Aliases, Sources: cli.EnvVars("GRAPHQL_MAX_ALIASES"),
			Usage: "most aliased fields in a GraphQL document"},
		&cli.IntFlag{Name: "graphql-max-fragments", Value: defaults.GraphQLLimits.Fragments, Sources: cli.EnvVars("GRAPHQL_MAX_FRAGMENTS"),
			Usage: "most fragment definitions in a GraphQL document"},
		&cli.IntFlag{Name: "graphql-max-spreads", Value: defaults.GraphQLLimits.Spreads, Sources: cli.EnvVars("GRAPHQL_MAX_SPREADS"),
			Usage: "most fragment spreads written in a GraphQL document"},
		&cli.IntFlag{Name: "graphql-max-subscriptions", Value: defaults.Live.MaxSubscriptions, Sources: cli.EnvVars("GRAPHQL_MAX_SUBSCRIPTIONS"),
			Usage: "live subscriptions one app (per environment) may hold open on this instance"},
		&cli.IntFlag{Name: "graphql-max-connections", Value: defaults.Live.MaxConnections, Sources: cli.EnvVars("GRAPHQL_MAX_CONNECTIONS"),
			Usage: "GraphQL WebSocket connections one app (per environment) may hold open on this instance"},
		&cli.DurationFlag{Name: "live-poll-interval", Value: defaults.Live.PollInterval, Sources: cli.EnvVars("LIVE_POLL_INTERVAL"),
			Usage: "how often SQLite is asked for order and stock changes while anyone subscribes (PostgreSQL notifies)"},
		&cli.StringFlag{Name: "smtp-url", Sources: cli.EnvVars("SMTP_URL"),
			Usage: "mail server of ticket emails: smtp://user:pass@host:port (STARTTLS unless loopback) or smtps://… (unset: the development mailbox at the admin listener's /mail)"},
		&cli.StringFlag{Name: "mail-from", Value: defaults.MailFrom, Sources: cli.EnvVars("MAIL_FROM"),
			Usage: "sender of ticket emails"},
		&cli.DurationFlag{Name: "mail-retry-base", Value: defaults.MailRetryBase, Sources: cli.EnvVars("MAIL_RETRY_BASE"),
			Usage: "first retry delay of a ticket email, doubling; retried for at least an hour"},
		&cli.IntFlag{Name: "graphql-max-nesting", Value: defaults.GraphQLLimits.Depth, Sources: cli.EnvVars("GRAPHQL_MAX_NESTING"),
			Usage: "deepest nesting of selection sets as written in a GraphQL document"},
	}
}

var defaults = server.DefaultConfig()

func configFrom(cmd *cli.Command) server.Config {
	return server.Config{
		DatabaseURL:            cmd.String("database-url"),
		Addr:                   cmd.String("addr"),
		AdminAddr:              cmd.String("admin-addr"),
		PublicBaseURL:          strings.TrimRight(cmd.String("public-base-url"), "/"),
		AllowPrivateWebhooks:   cmd.Bool("webhook-allow-private-targets"),
		SandboxExpiry:          cmd.Duration("sandbox-expiry"),
		LiveExpiry:             cmd.Duration("live-expiry"),
		FreeDailyAppCap:        cmd.Int64("free-daily-app-cap"),
		FreeDailyBuyerEventCap: cmd.Int64("free-daily-buyer-event-cap"),
		WebhookRetryBase:       cmd.Duration("webhook-retry-base"),
		SMTPURL:                cmd.String("smtp-url"),
		MailFrom:               cmd.String("mail-from"),
		MailRetryBase:          cmd.Duration("mail-retry-base"),
		WebhookAppConcurrency:  cmd.Int("webhook-app-concurrency"),
		WebhookDisableAfter:    cmd.Duration("webhook-disable-after"),
		Jobs:                   defaults.Jobs,
		RedisURL:               cmd.String("redis-url"),
		TrustedProxies:         cmd.String("trusted-proxies"),
		RateLimits: ratelimit.Config{
			FailedAuth: cmd.Int("rate-limit-failed-auth"), LiveApp: cmd.Int("rate-limit-live"),
			TestApp: cmd.Int("rate-limit-test"), Checkout: cmd.Int("rate-limit-checkout"),
			Window: cmd.Duration("rate-limit-window"), AccountMultiple: cmd.Int("account-limit-multiple"),
			Prefix: defaults.RateLimits.Prefix,
		},
		RateLimitDelay:    cmd.Duration("rate-limit-delay"),
		MaxAppsPerAccount: cmd.Int("max-apps-per-account"),
		MaxBodyBytes:      cmd.Int64("max-body-bytes"),
		GraphQLLimits: graph.DocumentLimits{
			Bytes: cmd.Int("graphql-max-bytes"), Tokens: cmd.Int("graphql-max-tokens"),
			Fields: cmd.Int("graphql-max-fields"), Aliases: cmd.Int("graphql-max-aliases"),
			Fragments: cmd.Int("graphql-max-fragments"), Spreads: cmd.Int("graphql-max-spreads"),
			Depth: cmd.Int("graphql-max-nesting"),
		},
		Live: live.Config{
			MaxSubscriptions: cmd.Int("graphql-max-subscriptions"), MaxConnections: cmd.Int("graphql-max-connections"),
			AccountMultiple: cmd.Int("account-limit-multiple"), PollInterval: cmd.Duration("live-poll-interval"),
		},
		LiveInitTimeout: defaults.LiveInitTimeout, LivePingInterval: defaults.LivePingInterval,
		PaymentProvider:   cmd.String("payment-provider"),
		PaystackSecretKey: cmd.String("paystack-secret-key"),
		PaystackBaseURL:   cmd.String("paystack-base-url"),
		LiveFreeDisabled:  !cmd.Bool("live-free-checkout"),
		WebhookStreams: webhook.StreamConfig{PerApp: cmd.Int("webhook-streams-per-app"),
			Poll: defaults.WebhookStreams.Poll, Heartbeat: defaults.WebhookStreams.Heartbeat},
		Portal: portal.Config{
			SessionTTL: cmd.Duration("portal-session-ttl"), ResetTTL: cmd.Duration("portal-reset-ttl"),
			SignInPerIP: cmd.Int("portal-signin-per-ip"), SignInPerAccount: cmd.Int("portal-signin-per-account"),
			SignInWindow: cmd.Duration("portal-signin-window"), TestEventsPerApp: cmd.Int("portal-test-events-per-app"),
		},
	}
}

// withMain opens the program for a command and closes it afterwards.
func withMain(stderr io.Writer, fn func(ctx context.Context, cmd *cli.Command, m *server.Main) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		m, err := server.Open(ctx, configFrom(cmd), newLogger(stderr))
		if err != nil {
			return err
		}
		defer m.Close()
		return fn(ctx, cmd, m)
	}
}

// withMigrated is withMain on a database migrated first, so a command on a
// fresh database just works.
func withMigrated(stderr io.Writer, fn func(ctx context.Context, cmd *cli.Command, m *server.Main) error) cli.ActionFunc {
	return withMain(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
		if err := m.Migrate(ctx); err != nil {
			return err
		}
		return fn(ctx, cmd, m)
	})
}

// New returns the boxoffice command tree, writing to stdout and stderr.
// Running it returns a failure without printing it; Run prints it as
// scripts expect.
func New(stdout, stderr io.Writer) *cli.Command {
	root := &cli.Command{
		Name:      "boxoffice",
		Usage:     "ticketing developer API gateway",
		Writer:    stdout,
		ErrWriter: stderr,
		Flags:     globalFlags(),
		// Errors are printed once, by main, as one line.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Commands: []*cli.Command{
			serveCommand(stdout, stderr),
			{
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
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"status": "migrated", "applied": pending})
					}
					fmt.Fprintln(stderr, "migrations applied")
					return nil
				}),
			},
			seedCommand(stdout, stderr),
			catalogCommand(stdout, stderr),
			accountsCommand(stdout, stderr),
			appsCommand(stdout, stderr),
			keysCommand(stdout, stderr),
			webhooksCommand(stdout, stderr),
			listenCommand(stdout, stderr),
			auditCommand(stdout, stderr),
			mailCommand(stdout, stderr),
			scannersCommand(stdout, stderr),
			ticketsCommand(stdout, stderr),
			ordersCommand(stdout, stderr),
			healthcheckCommand(stdout),
		},
	}
	scriptable(root)
	scopeHelp(root)
	return root
}

// commandGlobals names the global options (globalFlags) each command reads,
// which are the only ones its --help lists: serve reads them all (and
// boxoffice --help lists them all), listen none (it talks to a server over
// HTTP), and a command not named here reads --database-url alone.
var commandGlobals = map[string][]string{
	"listen":              {},
	"healthcheck":         {"addr"},
	"seed demo":           {"database-url", "public-base-url"},
	"accounts reset-link": {"database-url", "public-base-url", "portal-reset-ttl"},
	"apps create":         {"database-url", "webhook-allow-private-targets", "max-apps-per-account"},
	"apps update":         {"database-url", "webhook-allow-private-targets"},
	"scanners create":     {"database-url", "public-base-url"},
	"orders list":         {"database-url", "public-base-url"},
	"orders show":         {"database-url", "public-base-url"},
	"orders expire":       {"database-url", "public-base-url"},
}

func init() {
	// urfave/cli shows a group's help, and a command's after a usage
	// error, with SubcommandHelpTemplate whatever CustomHelpTemplate says;
	// scopeHelp's templates must apply there too.
	cli.ShowSubcommandHelp = func(cmd *cli.Command) error {
		tmpl := cmd.CustomHelpTemplate
		if tmpl == "" {
			tmpl = cli.SubcommandHelpTemplate
		}
		cli.HelpPrinter(cmd.Root().Writer, tmpl, cmd)
		return nil
	}
}

// globalsSection is the GLOBAL OPTIONS section of urfave/cli's help
// templates, which lists every global option under every command.
const globalsSection = `{{if .VisiblePersistentFlags}}

GLOBAL OPTIONS:{{template "visiblePersistentFlagTemplate" .}}{{end}}`

// ownGlobals lists only the global options in the command's metadata,
// formatted as the section it replaces.
const ownGlobals = `{{if .Metadata.globals}}

GLOBAL OPTIONS:{{range .VisiblePersistentFlags}}{{if index $.Metadata.globals (index .Names 0)}}
   {{wrap .String 6}}{{end}}{{end}}{{end}}`

// scopeHelp makes each command's --help list its own flags and only the
// global options it reads (commandGlobals); a group of commands lists none
// of them. serve and the root keep the full list.
func scopeHelp(root *cli.Command) {
	for _, cmd := range root.Commands {
		scopeCommandHelp(cmd, cmd.Name)
	}
}

// scopeCommandHelp scopes the help of cmd, named name ("apps create"),
// and of its commands.
func scopeCommandHelp(cmd *cli.Command, name string) {
	switch {
	case name == "serve":
		return
	case len(cmd.Commands) > 0:
		cmd.CustomHelpTemplate = strings.Replace(cli.SubcommandHelpTemplate, globalsSection, "", 1)
		for _, sub := range cmd.Commands {
			scopeCommandHelp(sub, name+" "+sub.Name)
		}
		return
	}
	names, ok := commandGlobals[name]
	if !ok {
		names = []string{"database-url"}
	}
	globals := map[string]bool{}
	for _, n := range names {
		globals[n] = true
	}
	if cmd.Metadata == nil {
		cmd.Metadata = map[string]any{}
	}
	cmd.Metadata["globals"] = globals
	cmd.CustomHelpTemplate = strings.Replace(cli.CommandHelpTemplate, globalsSection, ownGlobals, 1)
}
