// Command boxoffice runs and administers the Boxoffice ticketing API
// gateway: serve, migrate, seed demo data, import the catalog and provision
// accounts, apps and keys (OPERATOR.md is the contract of its names).
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"
	_ "time/tzdata" // event timezones resolve on machines without a zoneinfo database
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCLI(os.Stdout, os.Stderr).Run(ctx, os.Args)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "boxoffice: "+oneLine(err.Error()))
		os.Exit(1)
	}
}

// oneLine keeps an error to the one line OPERATOR.md promises, unless it is
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

// globalFlags are read by every command, each from its flag or environment variable.
var globalFlags = []cli.Flag{
	&cli.StringFlag{Name: "database-url", Value: defaults.DatabaseURL, Sources: cli.EnvVars("DATABASE_URL"),
		Usage: "sqlite://PATH (embedded) or postgres://… (production)"},
	&cli.StringFlag{Name: "addr", Value: defaults.Addr, Sources: cli.EnvVars("ADDR"), Usage: "listen address of serve"},
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
	&cli.Int64Flag{Name: "free-daily-buyer-event-cap", Value: defaults.FreeDailyBuyerEventCap, Sources: cli.EnvVars("FREE_DAILY_BUYER_EVENT_CAP"),
		Usage: "live free tickets per buyer per event per UTC day"},
}

var defaults = DefaultConfig()

func configFrom(cmd *cli.Command) Config {
	return Config{
		DatabaseURL:            cmd.String("database-url"),
		Addr:                   cmd.String("addr"),
		PublicBaseURL:          strings.TrimRight(cmd.String("public-base-url"), "/"),
		AllowPrivateWebhooks:   cmd.Bool("webhook-allow-private-targets"),
		SandboxExpiry:          cmd.Duration("sandbox-expiry"),
		LiveExpiry:             cmd.Duration("live-expiry"),
		FreeDailyAppCap:        cmd.Int64("free-daily-app-cap"),
		FreeDailyBuyerEventCap: cmd.Int64("free-daily-buyer-event-cap"),
		WebhookRetryBase:       cmd.Duration("webhook-retry-base"),
		Jobs:                   defaults.Jobs,
	}
}

// withMain opens the program for a command and closes it afterwards.
func withMain(stderr io.Writer, fn func(ctx context.Context, cmd *cli.Command, m *Main) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		m, err := Open(ctx, configFrom(cmd), newLogger(stderr))
		if err != nil {
			return err
		}
		defer m.Close()
		return fn(ctx, cmd, m)
	}
}

// withMigrated is withMain on a database migrated first, so a command on a
// fresh database just works.
func withMigrated(stderr io.Writer, fn func(ctx context.Context, cmd *cli.Command, m *Main) error) cli.ActionFunc {
	return withMain(stderr, func(ctx context.Context, cmd *cli.Command, m *Main) error {
		if err := m.Migrate(ctx); err != nil {
			return err
		}
		return fn(ctx, cmd, m)
	})
}

func newCLI(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "boxoffice",
		Usage:     "ticketing developer API gateway",
		Writer:    stdout,
		ErrWriter: stderr,
		Flags:     globalFlags,
		// Errors are printed once, by main, as one line.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Commands: []*cli.Command{
			serveCommand(stdout, stderr),
			{
				Name:  "migrate",
				Usage: "apply pending migrations and exit",
				Action: withMigrated(stderr, func(_ context.Context, _ *cli.Command, _ *Main) error {
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
		},
	}
}
