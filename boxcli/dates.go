package boxcli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/boxoffice/boxoffice/cancellation"
	"github.com/boxoffice/boxoffice/server"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
)

// cancelPoll is how often `dates cancel` reads the cancellation's progress
// while it waits.
const cancelPoll = 500 * time.Millisecond

func datesCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "dates",
		Usage: "cancel an event date (stop its sales and refund its buyers) and follow the refunds",
		Commands: []*cli.Command{
			{
				Name: "cancel",
				Usage: "cancel a date now: checkouts of it are refused, its pending checkouts expire, the door refuses its tickets; " +
					"with --refund every paid and completed order of it is refunded in full by a running `boxoffice serve`",
				ArgsUsage: "ID",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "reason", Required: true, Usage: "why the date is cancelled (kept with the date)"},
					&cli.BoolFlag{Name: "refund", Usage: "refund every paid and completed order of the date, of every app"},
					&cli.BoolFlag{Name: "no-wait", Usage: "return once the cancellation is recorded; `dates cancel-status` follows it"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := idArg(cmd, "event date")
					if err != nil {
						return err
					}
					st, err := m.Cancellations.Cancel(ctx, id, cmd.String("reason"), cmd.Bool("refund"))
					if err != nil {
						return err
					}
					if !cmd.Bool("no-wait") {
						if st, err = waitCancellation(ctx, m.Cancellations, st, stderr); err != nil {
							return err
						}
					}
					return output(cmd, stdout, st, func(w io.Writer) { printCancellation(w, st) })
				}),
			},
			{
				Name:      "cancel-status",
				Usage:     "where a date's cancellation stands: its orders to refund, those refunded, pending and failed",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := idArg(cmd, "event date")
					if err != nil {
						return err
					}
					st, err := m.Cancellations.Status(ctx, id)
					if err != nil {
						return err
					}
					return output(cmd, stdout, st, func(w io.Writer) { printCancellation(w, st) })
				}),
			},
		},
	}
}

// waitCancellation shows a progress bar on stderr until every order of the
// date has its refund (the servers do the work) or ctx ends (Ctrl-C: the
// work goes on without the command).
func waitCancellation(ctx context.Context, svc *cancellation.Service, st *cancellation.Status, stderr io.Writer) (*cancellation.Status, error) {
	bar := progressbar.NewOptions(max(st.Orders, 1), progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription(fmt.Sprintf("date %d: refunding", st.EventdateID)), progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	defer fmt.Fprintln(stderr)
	t := time.NewTicker(cancelPoll)
	defer t.Stop()
	for !st.Done {
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-t.C:
		}
		var err error
		if st, err = svc.Status(ctx, st.EventdateID); err != nil {
			return nil, err
		}
		bar.ChangeMax(max(st.Orders, 1))
		_ = bar.Set(st.Refunded)
	}
	_ = bar.Finish()
	return st, nil
}

func printCancellation(w io.Writer, st *cancellation.Status) {
	if !st.Cancelled {
		fmt.Fprintf(w, "date %d is not cancelled\n", st.EventdateID)
		return
	}
	fmt.Fprintf(w, "date %d is cancelled (%s): %d order(s) to refund, %d refunded (%d pending at the provider, %d failed)",
		st.EventdateID, st.Reason, st.Orders, st.Refunded, st.Pending, st.Failed)
	if st.Done {
		fmt.Fprintln(w, ", done")
	} else {
		fmt.Fprintln(w, "; a running `boxoffice serve` is refunding the rest")
	}
	if st.Failed > 0 {
		fmt.Fprintln(w, "failed refunds: boxoffice orders list --refund-failed")
	}
}
