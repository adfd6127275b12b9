package boxcli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/urfave/cli/v3"
)

// ticketShowJSON is what `tickets show --json` prints.
type ticketShowJSON struct {
	Ticket     *tickets.View  `json:"ticket"`
	Inside     bool           `json:"inside"`
	VoidedAt   *string        `json:"voided_at"`
	VoidReason *string        `json:"void_reason"`
	Scans      []scanShowJSON `json:"scans"`
}

// scanShowJSON is one scan of a ticket: the check-in its door got, and
// which scanner made it.
type scanShowJSON struct {
	*checkin.View
	ScannerID   int64  `json:"scanner_id"`
	ScannerName string `json:"scanner_name"`
}

func ticketsCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "tickets",
		Usage: "look up and void issued tickets",
		Commands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "one ticket by its code: its state and every scan of it at the door",
				ArgsUsage: "CODE (as printed: groups of four, any case)",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					// The groups of a code pasted without quotes arrive
					// as several arguments.
					if cmd.Args().Len() == 0 {
						_, err := args(cmd, "CODE")
						return err
					}
					rec, err := m.CheckIns.Ticket(ctx, strings.Join(cmd.Args().Slice(), " "))
					if err != nil {
						return err
					}
					out := ticketShowJSON{Ticket: rec.Ticket, Inside: rec.Inside, Scans: []scanShowJSON{}}
					if rec.VoidedAt != "" {
						out.VoidedAt = &rec.VoidedAt
					}
					if rec.VoidReason != "" {
						out.VoidReason = &rec.VoidReason
					}
					for _, s := range rec.Scans {
						out.Scans = append(out.Scans, scanShowJSON{View: s.View, ScannerID: s.ScannerID, ScannerName: s.ScannerName})
					}
					return output(cmd, stdout, out, func(w io.Writer) { printTicket(w, out) })
				}),
			},
			{
				Name:  "void",
				Usage: "void a ticket, or every ticket of an order: the door refuses it from now on, and the app gets ticket.voided",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "code", Usage: "the ticket's code"},
					&cli.StringFlag{Name: "order", Usage: "an order reference: void all its tickets"},
					&cli.StringFlag{Name: "reason", Usage: "why, kept with the ticket (boxoffice tickets show)"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					res, err := m.Tickets.Void(ctx, tickets.VoidRequest{
						Code: cmd.String("code"), OrderReference: cmd.String("order"), Reason: cmd.String("reason"),
					})
					if err != nil {
						return err
					}
					out := map[string]any{"order_reference": res.OrderReference, "voided": res.Voided, "tickets": res.Tickets}
					return output(cmd, stdout, out, func(w io.Writer) {
						fmt.Fprintf(w, "voided %d of %d ticket(s) of order %s", res.Voided, len(res.Tickets), res.OrderReference)
						if res.Voided < len(res.Tickets) {
							fmt.Fprint(w, " (the others were void already)")
						}
						fmt.Fprintln(w)
						for _, t := range res.Tickets {
							fmt.Fprintf(w, "  %s  %d of %d  %s  %s\n", t.ID, t.Position, len(res.Tickets), t.TicketName, t.Status)
						}
					})
				}),
			},
		},
	}
}

// printTicket prints a ticket and its scans for a person.
func printTicket(w io.Writer, t ticketShowJSON) {
	tk := t.Ticket
	fmt.Fprintf(w, "ticket %s (%s), %s, position %d of order %s\n", tk.ID, tk.Environment, tk.TicketName, tk.Position, tk.OrderReference)
	fmt.Fprintf(w, "  event %d, date %d\n", tk.EventID, tk.EventdateID)
	where := "outside"
	if t.Inside {
		where = "inside"
	}
	fmt.Fprintf(w, "  status %s, %s", tk.Status, where)
	if tk.CheckedInAt != nil {
		fmt.Fprintf(w, ", first admitted %s", *tk.CheckedInAt)
	}
	fmt.Fprintln(w)
	if t.VoidedAt != nil {
		fmt.Fprintf(w, "  voided %s: %s\n", *t.VoidedAt, orNone(deref(t.VoidReason)))
	}
	if len(t.Scans) == 0 {
		fmt.Fprintln(w, "  never scanned")
		return
	}
	fmt.Fprintf(w, "  %d scan(s):\n", len(t.Scans))
	for _, s := range t.Scans {
		outcome := s.Result
		if s.Reason != nil {
			outcome += " (" + *s.Reason + ")"
		}
		fmt.Fprintf(w, "    %s  %-5s %-30s gate %s  scanner %d %q\n", s.ScannedAt, s.Direction, outcome, orNone(deref(s.Gate)),
			s.ScannerID, s.ScannerName)
	}
}
