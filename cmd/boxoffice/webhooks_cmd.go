package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/urfave/cli/v3"
)

// webhookJSON is one event as `webhooks list --json` prints it.
type webhookJSON struct {
	ID          string        `json:"id"`
	Type        string        `json:"type"`
	Environment string        `json:"environment"`
	Status      string        `json:"status"`
	Attempts    int64         `json:"attempts"`
	LastError   *string       `json:"last_error"`
	CreatedAt   string        `json:"created_at"`
	DeliveredAt *string       `json:"delivered_at"`
	Log         []attemptJSON `json:"attempt_log"`
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
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *Main) error {
					id, err := m.Webhooks.EmitTest(ctx, cmd.Int64("app"), cmd.String("env"))
					if err != nil {
						return err
					}
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"event_id": id, "type": "webhook.test", "status": store.WebhookPending})
					}
					fmt.Fprintf(stdout, "queued webhook.test event %s; a running `boxoffice serve` delivers it\n", id)
					return nil
				}),
			},
			{
				Name:  "list",
				Usage: "recent events of an app and their delivery attempts",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "app", Required: true, Usage: "app id"},
					&cli.IntFlag{Name: "limit", Value: 20, Usage: fmt.Sprintf("how many of the newest events to show (1 to %d)", maxWebhookListLimit)},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *Main) error {
					if n := cmd.Int("limit"); n < 1 || n > maxWebhookListLimit {
						return fmt.Errorf("--limit %d is not between 1 and %d", n, maxWebhookListLimit)
					}
					appID := cmd.Int64("app")
					events, attempts, err := m.Webhooks.Recent(ctx, appID, cmd.Int("limit"))
					if err != nil {
						return err
					}
					out := make([]webhookJSON, len(events))
					for i, e := range events {
						out[i] = webhookJSON{ID: e.ID, Type: e.Type, Environment: e.Environment, Status: e.Status,
							Attempts: e.Attempts, LastError: e.LastError, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339), Log: []attemptJSON{}}
						if !e.DeliveredAt.IsZero() {
							s := e.DeliveredAt.UTC().Format(time.RFC3339)
							out[i].DeliveredAt = &s
						}
						for _, a := range attempts[e.ID] {
							out[i].Log = append(out[i].Log, attemptJSON{Attempt: a.Attempt, URL: a.URL, StatusCode: a.StatusCode,
								LatencyMS: a.LatencyMS, Error: a.Error, At: a.CreatedAt.UTC().Format(time.RFC3339)})
						}
					}
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"app_id": appID, "events": out})
					}
					if len(out) == 0 {
						fmt.Fprintf(stdout, "app %d has no webhook events yet (boxoffice webhooks test --app %d --env test emits one)\n", appID, appID)
						return nil
					}
					for _, e := range out {
						fmt.Fprintf(stdout, "%s  %-16s %-5s %-9s attempts=%d  %s\n", e.CreatedAt, e.Type, e.Environment, e.Status, e.Attempts, e.ID)
						for _, a := range e.Log {
							code := "-"
							if a.StatusCode != nil {
								code = fmt.Sprint(*a.StatusCode)
							}
							msg := ""
							if a.Error != nil {
								msg = *a.Error
							}
							fmt.Fprintf(stdout, "    #%d %s status=%s %dms %s\n", a.Attempt, a.At, code, a.LatencyMS, msg)
						}
					}
					return nil
				}),
			},
			{
				Name:      "redeliver",
				Usage:     "deliver an event again once its delivery has ended (a new round of up to 10 attempts); refused while one is under way",
				ArgsUsage: "EVENT_ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *Main) error {
					a, err := args(cmd, "EVENT_ID")
					if err != nil {
						return err
					}
					if err := m.Webhooks.Redeliver(ctx, a[0]); err != nil {
						return err
					}
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"event_id": a[0], "status": store.WebhookPending})
					}
					fmt.Fprintf(stdout, "queued event %s for redelivery\n", a[0])
					return nil
				}),
			},
			{
				Name:  "resume",
				Usage: "deliver again to an app's webhook URL after deliveries to it were disabled for failing too long",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "app", Required: true, Usage: "app id"},
					jsonFlag(),
				},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *Main) error {
					appID := cmd.Int64("app")
					if err := m.Webhooks.Resume(ctx, appID); err != nil {
						return err
					}
					if cmd.Bool("json") {
						return printJSON(stdout, map[string]any{"app_id": appID, "deliveries": "resumed"})
					}
					fmt.Fprintf(stdout, "deliveries to the webhook URL of app %d resumed; redeliver the events that failed meanwhile\n", appID)
					return nil
				}),
			},
		},
	}
}
