package boxcli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strings"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/urfave/cli/v3"
)

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

// DefaultMemoryLimit is serve's soft memory limit when GOMEMLIMIT is unset.
const DefaultMemoryLimit = 100 << 20

// DefaultGCPercent is serve's GOGC when GOGC is unset. A nested GraphQL
// catalog answer allocates memory that dies with the request
// (BenchmarkNestedGraphQL/NewText), while the caches keep many times more
// alive; at Go's default of 100 the collector re-marked those caches so
// often that marking was a large share of the server's CPU under a
// new-text GraphQL load (pprof; the figures are in docs/benchmarks.md). At
// 200 it marks half as often; the memory limit still bounds the heap.
const DefaultGCPercent = 200

// runtimeDefaults applies DefaultMemoryLimit unless GOMEMLIMIT sets one,
// and DefaultGCPercent unless GOGC sets one, and returns the limit and
// the GOGC in force. The garbage collector works harder as the heap nears the limit,
// instead of letting a burst double the heap; the catalog cache (at most
// readcache.DefaultCacheBudget) stays well inside it.
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
