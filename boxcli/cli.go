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
	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
)

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
		// Errors are printed once, by Run, as one line.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Commands: []*cli.Command{
			serveCommand(stdout, stderr),
			migrateCommand(stdout, stderr),
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
			datesCommand(stdout, stderr),
			healthcheckCommand(stdout),
		},
	}
	scriptable(root)
	scopeHelp(root)
	return root
}

// describe is what an error prints as: a refusal's own message (its code
// is for the APIs and the portal), any other error in full.
func describe(err error) string {
	var e *apperr.Error
	if errors.As(err, &e) && e.Status() < 500 {
		return e.Message
	}
	return err.Error()
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
