package boxcli

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"

	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
)

// refundCommand is `orders refund`: an operator's refund, through the
// rules a partner's refund follows (refunds.Service.ByOperator).
func refundCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name: "refund",
		Usage: "refund an order as its app would: whole, chosen tickets (--ticket), or money only (--money-only --amount); " +
			"on an order flagged for refund review, return the payment and clear the flag. A running `boxoffice serve` " +
			"asks the payment provider for a live refund's money",
		ArgsUsage: "REFERENCE",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "ticket", Usage: "an itk_… id to cancel (repeat for more); none given: every ticket that is not void"},
			&cli.BoolFlag{Name: "money-only", Usage: "cancel no ticket: return --amount only (a goodwill or partial refund)"},
			&cli.StringFlag{Name: "amount", Usage: "the money to return, e.g. 25.00; none given: the price of the tickets cancelled"},
			&cli.StringFlag{Name: "reason", Value: "requested_by_customer", Usage: "one of " + strings.Join(refunds.Reasons, ", ")},
			&cli.StringFlag{Name: "key", Usage: "the refund's idempotency key: run the command again with the same key and you get " +
				"the same refund, never a second (default: a new key each run)"},
			jsonFlag(),
		},
		Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
			a, err := args(cmd, "REFERENCE")
			if err != nil {
				return err
			}
			in := &refunds.Input{Reason: ptrTo(cmd.String("reason"))}
			switch {
			case cmd.Bool("money-only") && cmd.IsSet("ticket"):
				return fmt.Errorf("--money-only cancels no ticket: leave out --ticket")
			case cmd.Bool("money-only"):
				in.Tickets = []*string{}
			case cmd.IsSet("ticket"):
				for _, id := range cmd.StringSlice("ticket") {
					in.Tickets = append(in.Tickets, ptrTo(id))
				}
			}
			if cmd.IsSet("amount") {
				in.Amount = ptrTo(cmd.String("amount"))
			}
			key := cmd.String("key")
			if key == "" {
				key = "cli-" + strings.ToLower(rand.Text())
			}
			v, err := m.Refunds.ByOperator(ctx, a[0], key, in)
			if err != nil {
				return err
			}
			return output(cmd, stdout, v, func(w io.Writer) {
				printRefundLine(w, "", v)
				if v.Status == "pending" {
					fmt.Fprintln(w, "the payment provider is asked for the money by a running `boxoffice serve`; "+
						"`boxoffice orders show "+v.OrderReference+"` follows it")
				}
			})
		}),
	}
}

// printRefundLine prints a refund on a line.
func printRefundLine(w io.Writer, indent string, r *checkout.Refund) {
	fmt.Fprintf(w, "%srefund %s of order %s: %s %s, %d ticket(s) cancelled, %s, %s", indent, r.ID, r.OrderReference,
		r.Currency, r.Amount, len(r.Tickets), r.Reason, r.Status)
	if r.FailureReason != nil {
		fmt.Fprintf(w, ": %s", *r.FailureReason)
	}
	fmt.Fprintln(w)
}

func ptrTo[T any](v T) *T { return &v }
