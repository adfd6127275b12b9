package boxcli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
)

// orderJSON is an order as `orders list --json` prints it: the API's
// Order (spec section 2.5, with its items and tickets) and what only the
// service keeps: its app, the buyer, the payment and its refund review.
type orderJSON struct {
	*checkout.OrderView
	AppID           int64     `json:"app_id"`
	Customer        buyerJSON `json:"customer"`
	PaymentProvider *string   `json:"payment_provider"`
	RefundReview    bool      `json:"refund_review"`
	ReviewNote      *string   `json:"review_note"`
}

type buyerJSON struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Phone string `json:"phone"`
}

// orderShowJSON is `orders show --json`: the order, what was bought, and
// every webhook event of the order with its delivery attempts.
type orderShowJSON struct {
	orderJSON
	EventName      string        `json:"event_name"`
	EventdateStart string        `json:"eventdate_start"`
	WebhookEvents  []webhookJSON `json:"webhook_events"`
}

func toOrderJSON(r *checkout.Record) orderJSON {
	out := orderJSON{OrderView: r.OrderView, AppID: r.AppID, RefundReview: r.Payment.RefundReview,
		Customer: buyerJSON{Name: r.Buyer.Name, Email: r.Buyer.Email, Phone: r.Buyer.Phone}}
	if r.Payment.Provider != "" {
		out.PaymentProvider = &r.Payment.Provider
	}
	if r.Payment.ReviewNote != "" {
		out.ReviewNote = &r.Payment.ReviewNote
	}
	return out
}

func ordersCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "orders",
		Usage: "look orders up across apps (support), and expire a pending one",
		Commands: []*cli.Command{
			{
				Name:  "list",
				Usage: "orders of every app, newest first, with their items and tickets",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "app", Usage: "only the orders of this app id"},
					&cli.StringFlag{Name: "env", Usage: "only test or only live orders"},
					&cli.StringFlag{Name: "status", Usage: "only orders in this status: pending, paid, completed, failed or expired"},
					&cli.BoolFlag{Name: "refund-review", Usage: "only orders whose payment waits for a refund review (confirmed late, or for the wrong amount)"},
					&cli.BoolFlag{Name: "refund-failed", Usage: "only orders with a refund whose money the payment provider did not return"},
					limitFlag(checkout.DefaultSearchLimit, checkout.MaxSearchLimit, "of the newest orders"),
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					n, err := limit(cmd, checkout.MaxSearchLimit)
					if err != nil {
						return err
					}
					q := checkout.Search{AppID: cmd.Int64("app"), Environment: cmd.String("env"), Status: cmd.String("status"),
						RefundReview: cmd.Bool("refund-review"), RefundFailed: cmd.Bool("refund-failed"), Limit: n}
					if cmd.IsSet("app") && q.AppID < 1 {
						return fmt.Errorf("--app %d is not a positive integer id", q.AppID)
					}
					records, err := m.Checkout.SearchOrders(ctx, q)
					if err != nil {
						return err
					}
					out := make([]orderJSON, len(records))
					for i, r := range records {
						out[i] = toOrderJSON(r)
					}
					return output(cmd, stdout, map[string]any{"orders": out}, func(w io.Writer) {
						if len(out) == 0 {
							fmt.Fprintf(w, "no orders%s\n", describeSearch(q))
						}
						for _, o := range out {
							printOrderLine(w, o)
						}
					})
				}),
			},
			{
				Name:      "show",
				Usage:     "one order by its reference: items, tickets, buyer, payment, and every webhook event with its deliveries",
				ArgsUsage: "REFERENCE",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "REFERENCE")
					if err != nil {
						return err
					}
					r, err := m.Checkout.Inspect(ctx, a[0])
					if err != nil {
						return err
					}
					out := orderShowJSON{orderJSON: toOrderJSON(r), EventName: r.Event.Name, EventdateStart: rfc3339(r.Date.StartAt),
						WebhookEvents: []webhookJSON{}}
					for i := range r.Events {
						out.WebhookEvents = append(out.WebhookEvents, toWebhookJSON(&r.Events[i], r.Attempts[r.Events[i].ID]))
					}
					return output(cmd, stdout, out, func(w io.Writer) { printOrder(w, out, r) })
				}),
			},
			refundCommand(stdout, stderr),
			{
				Name: "expire",
				Usage: "expire a pending order now, as its app's POST /checkout-sessions/{reference}/expire does: " +
					"held stock is released and order.expired is sent",
				ArgsUsage: "REFERENCE",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "REFERENCE")
					if err != nil {
						return err
					}
					v, err := m.Checkout.ExpireOrder(ctx, a[0])
					if err != nil {
						return err
					}
					return output(cmd, stdout, v, func(w io.Writer) {
						fmt.Fprintf(w, "order %s is expired: its held stock is released and order.expired is queued for the app "+
							"(a running `boxoffice serve` delivers it)\n", v.Reference)
					})
				}),
			},
		},
	}
}

// describeSearch says what a search kept, for "no orders …".
func describeSearch(q checkout.Search) string {
	var s []string
	if q.RefundReview {
		s = append(s, " flagged for refund review")
	}
	if q.RefundFailed {
		s = append(s, " with a failed refund")
	}
	if q.Status != "" {
		s = append(s, " "+q.Status)
	}
	if q.Environment != "" {
		s = append(s, " in "+q.Environment)
	}
	if q.AppID != 0 {
		s = append(s, fmt.Sprintf(" of app %d", q.AppID))
	}
	if len(s) == 0 {
		return " yet"
	}
	return strings.Join(s, "")
}

// printOrderLine prints one order of a list on a line.
func printOrderLine(w io.Writer, o orderJSON) {
	fmt.Fprintf(w, "%-37s app %-4d %-4s %-9s %s %10s  %s", o.Reference, o.AppID, o.Environment, o.Status,
		deref(o.Currency), o.TotalAmount, deref(o.CreatedAt))
	if o.RefundReview {
		fmt.Fprintf(w, "  REFUND REVIEW: %s", orNone(deref(o.ReviewNote)))
	}
	for _, r := range o.Refunds {
		if r.Status == "failed" {
			fmt.Fprintf(w, "  REFUND FAILED: %s %s: %s", r.ID, r.Amount, deref(r.FailureReason))
		}
	}
	fmt.Fprintln(w)
}

// printOrder prints an order whole for a person.
func printOrder(w io.Writer, o orderShowJSON, r *checkout.Record) {
	fmt.Fprintf(w, "order %s (%s) of app %d: %s, %s %s\n", o.Reference, o.Environment, o.AppID, o.Status,
		deref(o.Currency), o.TotalAmount)
	fmt.Fprintf(w, "  event %d %q, date %d: %s\n", o.EventID, o.EventName, o.EventdateID,
		catalog.DisplayInZone(r.Date.StartAt, r.Event.Timezone))
	fmt.Fprintf(w, "  created %s, updated %s\n", deref(o.CreatedAt), deref(o.UpdatedAt))
	if o.CheckoutURL != nil {
		fmt.Fprintf(w, "  pending until %s: %s\n", deref(o.ExpiresAt), *o.CheckoutURL)
	}
	fmt.Fprintf(w, "  buyer: %s <%s> %s\n", o.Customer.Name, o.Customer.Email, o.Customer.Phone)
	switch {
	case !o.RequiresPayment:
		fmt.Fprintln(w, "  payment: none (a free order)")
	case o.Environment == "test":
		fmt.Fprintln(w, "  payment: simulated (a sandbox order)")
	case o.PaymentProvider == nil:
		fmt.Fprintln(w, "  payment: none recorded")
	default:
		fmt.Fprintf(w, "  payment: %s, reference %s\n", *o.PaymentProvider, orNone(deref(o.PaymentReference)))
	}
	if o.RefundReview {
		fmt.Fprintf(w, "  REFUND REVIEW: %s\n", orNone(deref(o.ReviewNote)))
	}
	if len(o.Metadata) > 0 {
		meta, _ := json.Marshal(o.Metadata)
		fmt.Fprintf(w, "  metadata: %s\n", meta)
	}
	fmt.Fprintf(w, "  %d item(s):\n", len(o.Items))
	for _, it := range o.Items {
		fmt.Fprintf(w, "    %d × %s (ticket %d) at %s = %s\n", it.Quantity, it.Name, it.TicketID, it.UnitPrice, it.Amount)
	}
	if len(o.Tickets) == 0 {
		fmt.Fprintln(w, "  no tickets issued")
	} else {
		fmt.Fprintf(w, "  %d ticket(s), email %s%s:\n", len(o.Tickets), o.TicketsEmail.Status, prefixed(", sent ", deref(o.TicketsEmail.SentAt)))
		for _, t := range o.Tickets {
			fmt.Fprintf(w, "    %s  %d of %d  %-12s %-10s %s\n", t.ID, t.Position, len(o.Tickets), t.TicketName, t.Status, t.Code)
		}
		if o.TicketsURL != nil {
			fmt.Fprintf(w, "    page: %s\n", *o.TicketsURL)
		}
	}
	if len(o.Refunds) > 0 {
		fmt.Fprintf(w, "  %d refund(s), %s refunded (%s):\n", len(o.Refunds), o.RefundedAmount, o.RefundStatus)
		for _, r := range o.Refunds {
			printRefundLine(w, "    ", r)
		}
	}
	if len(o.WebhookEvents) == 0 {
		fmt.Fprintln(w, "  no webhook events")
		return
	}
	fmt.Fprintf(w, "  %d webhook event(s):\n", len(o.WebhookEvents))
	for _, e := range o.WebhookEvents {
		printWebhookEvent(w, "    ", e)
	}
}

// prefixed is prefix+s, or "" when s is.
func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
