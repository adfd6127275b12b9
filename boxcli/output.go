package boxcli

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v3"
)

// What every read or change command does around its one service call:
// read an id argument or a --limit, then print the result, as one JSON
// object with --json or as text for a person.

// idArg reads a command's one argument, the id of noun: "scanners revoke 3".
func idArg(cmd *cli.Command, noun string) (int64, error) {
	a, err := args(cmd, "ID")
	if err != nil {
		return 0, err
	}
	return parseID(noun, a[0])
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
