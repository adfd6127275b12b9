package boxcli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
)

// What every command does around its one service call: read its
// arguments (an id, or a --limit), then print the result, as exactly one
// JSON object with --json or as text for a person. Every command goes
// through these, so a refusal reads the same everywhere.

// jsonFlag returns a fresh --json flag: urfave/cli keeps a flag's value in
// the flag itself, so commands (and concurrent runs) must not share one.
func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print exactly one JSON object on stdout"}
}

// output prints a command's result on stdout: v as exactly one JSON object
// with --json, otherwise what text writes for a person.
func output(cmd *cli.Command, stdout io.Writer, v any, text func(w io.Writer)) error {
	if cmd.Bool("json") {
		return printJSON(stdout, v)
	}
	text(stdout)
	return nil
}

// printJSON writes v as one line of JSON, leaving <, > and & as they are.
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

// idArg reads a command's one argument, the id of noun: "scanners revoke 3".
func idArg(cmd *cli.Command, noun string) (int64, error) {
	id, _, err := idArgs(cmd, noun)
	return id, err
}

// idArgs reads a command's arguments, the id of noun and then those that
// rest names: "apps set-status 3 active".
func idArgs(cmd *cli.Command, noun string, rest ...string) (int64, []string, error) {
	a, err := args(cmd, append([]string{"ID"}, rest...)...)
	if err != nil {
		return 0, nil, err
	}
	id, err := parseID(noun, a[0])
	return id, a[1:], err
}

// parseID reads s as the id of what, refusing anything but a positive
// integer.
func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("%s %q is not a positive integer id", what, s)
	}
	return id, nil
}

// limitFlag returns a fresh --limit flag for how many of what a list shows:
// def unless given, 1 to max (limit refuses the rest).
func limitFlag(def, max int, what string) cli.Flag {
	return &cli.IntFlag{Name: "limit", Value: def, Usage: fmt.Sprintf("how many %s to show (1 to %d)", what, max)}
}

// limit reads the --limit of limitFlag.
func limit(cmd *cli.Command, max int) (int, error) {
	n := cmd.Int("limit")
	if n < 1 || n > max {
		return 0, fmt.Errorf("--limit %d is not between 1 and %d", n, max)
	}
	return n, nil
}

// rfc3339 is how the commands print an instant: UTC, to the second.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// deref is what p points at, or T's zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
