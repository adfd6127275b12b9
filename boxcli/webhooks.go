package boxcli

import (
	"context"
	"fmt"
	"io"

	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/urfave/cli/v3"
)

// webhookJSON is one event as `webhooks list --json` prints it.
type webhookJSON struct {
	ID          string  `json:"id"`
	Type        string  `json:"type"`
	Environment string  `json:"environment"`
	Status      string  `json:"status"`
	Attempts    int64   `json:"attempts"`
	LastError   *string `json:"last_error"`
	CreatedAt   string  `json:"created_at"`
	DeliveredAt *string `json:"delivered_at"`
	// StreamedAt is when `boxoffice listen` first got the event; null when
	// no listener did.
	StreamedAt *string       `json:"streamed_at"`
	Log        []attemptJSON `json:"attempt_log"`
}

func toWebhookJSON(e *store.WebhookEvent, attempts []store.WebhookAttempt) webhookJSON {
	out := webhookJSON{ID: e.ID, Type: e.Type, Environment: e.Environment, Status: e.Status,
		Attempts: e.Attempts, LastError: e.LastError, CreatedAt: rfc3339(e.CreatedAt), Log: []attemptJSON{}}
	if !e.DeliveredAt.IsZero() {
		s := rfc3339(e.DeliveredAt)
		out.DeliveredAt = &s
	}
	if !e.StreamedAt.IsZero() {
		s := rfc3339(e.StreamedAt)
		out.StreamedAt = &s
	}
	for _, a := range attempts {
		out.Log = append(out.Log, attemptJSON{Attempt: a.Attempt, URL: a.URL, StatusCode: a.StatusCode,
			LatencyMS: a.LatencyMS, Error: a.Error, At: rfc3339(a.CreatedAt)})
	}
	return out
}

// printWebhookEvent prints an event and its attempts for a person, at
// indent.
func printWebhookEvent(w io.Writer, indent string, e webhookJSON) {
	fmt.Fprintf(w, "%s%s  %-16s %-5s %-9s attempts=%d  %s\n", indent, e.CreatedAt, e.Type, e.Environment, e.Status, e.Attempts, e.ID)
	for _, a := range e.Log {
		code := "-"
		if a.StatusCode != nil {
			code = fmt.Sprint(*a.StatusCode)
		}
		msg := ""
		if a.Error != nil {
			msg = *a.Error
		}
		fmt.Fprintf(w, "%s    #%d %s status=%s %dms %s\n", indent, a.Attempt, a.At, code, a.LatencyMS, msg)
	}
	if e.StreamedAt != nil {
		fmt.Fprintf(w, "%s    sent to boxoffice listen %s\n", indent, *e.StreamedAt)
	}
}

type attemptJSON struct {
	Attempt    int64   `json:"attempt"`
	URL        string  `json:"url"`
	StatusCode *int64  `json:"status_code"`
	LatencyMS  int64   `json:"latency_ms"`
	Error      *string `json:"error"`
	At         string  `json:"at"`
}

// maxWebhookListLimit bounds `webhooks list --limit`.
const maxWebhookListLimit = 1000

func webhooksCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "webhooks",
		Usage: "inspect and send webhook events",
		Commands: []*cli.Command{
			{
				Name:  "test",
				Usage: "emit a webhook.test event to the app's webhook URL (a running serve delivers it)",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "app", Required: true, Usage: "app id"},
					&cli.StringFlag{Name: "env", Required: true, Usage: "test or live"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := m.Webhooks.EmitTest(ctx, cmd.Int64("app"), cmd.String("env"))
					if err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"event_id": id, "type": "webhook.test", "status": store.WebhookPending}, func(w io.Writer) {
						fmt.Fprintf(w, "queued webhook.test event %s; a running `boxoffice serve` delivers it\n", id)
					})
				}),
			},
			{
				Name:  "list",
				Usage: "recent events of an app and their delivery attempts",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "app", Required: true, Usage: "app id"},
					limitFlag(20, maxWebhookListLimit, "of the newest events"),
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					n, err := limit(cmd, maxWebhookListLimit)
					if err != nil {
						return err
					}
					appID := cmd.Int64("app")
					events, attempts, err := m.Webhooks.Recent(ctx, appID, n)
					if err != nil {
						return err
					}
					out := make([]webhookJSON, len(events))
					for i := range events {
						out[i] = toWebhookJSON(&events[i], attempts[events[i].ID])
					}
					return output(cmd, stdout, map[string]any{"app_id": appID, "events": out}, func(w io.Writer) {
						if len(out) == 0 {
							fmt.Fprintf(w, "app %d has no webhook events yet (boxoffice webhooks test --app %d --env test emits one)\n", appID, appID)
						}
						for _, e := range out {
							printWebhookEvent(w, "", e)
						}
					})
				}),
			},
			{
				Name:      "redeliver",
				Usage:     "deliver an event again once its delivery has ended (a new round of up to 10 attempts); refused while one is under way",
				ArgsUsage: "EVENT_ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "EVENT_ID")
					if err != nil {
						return err
					}
					if err := m.Webhooks.Redeliver(ctx, a[0]); err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"event_id": a[0], "status": store.WebhookPending}, func(w io.Writer) {
						fmt.Fprintf(w, "queued event %s for redelivery\n", a[0])
					})
				}),
			},
			{
				Name:  "resume",
				Usage: "deliver again to an app's webhook URL after deliveries to it were disabled for failing too long",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "app", Required: true, Usage: "app id"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					appID := cmd.Int64("app")
					if err := m.Webhooks.Resume(ctx, appID); err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"app_id": appID, "deliveries": "resumed"}, func(w io.Writer) {
						fmt.Fprintf(w, "deliveries to the webhook URL of app %d resumed; redeliver the events that failed meanwhile\n", appID)
					})
				}),
			},
			webhookEndpointsCommand(stdout, stderr),
			webhookRecoverCommand(stdout, stderr),
		},
	}
}
