package boxcli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/urfave/cli/v3"
)

// webhookEndpointsCommand is `webhooks endpoints …`: an app's webhook
// endpoints of one environment, as a partner manages them over the API.
func webhookEndpointsCommand(stdout, stderr io.Writer) *cli.Command {
	owner := []cli.Flag{
		&cli.Int64Flag{Name: "app", Required: true, Usage: "app id"},
		&cli.StringFlag{Name: "env", Required: true, Usage: "test or live"},
	}
	fields := []cli.Flag{
		&cli.StringFlag{Name: "url", Usage: "where deliveries go (https; the webhook URL rules)"},
		&cli.StringSliceFlag{Name: "events", Usage: "event types it receives, comma-separated or repeated; * for every type (the default)"},
		&cli.StringFlag{Name: "description", Usage: "a note, at most 200 characters (\"\" clears it on update)"},
	}
	input := func(cmd *cli.Command) webhook.EndpointInput {
		var in webhook.EndpointInput
		if cmd.IsSet("url") {
			u := cmd.String("url")
			in.URL = &u
		}
		if cmd.IsSet("events") {
			for _, e := range cmd.StringSlice("events") {
				for _, x := range strings.Split(e, ",") {
					if x = strings.TrimSpace(x); x != "" {
						in.EnabledEvents = append(in.EnabledEvents, x)
					}
				}
			}
			if in.EnabledEvents == nil {
				in.EnabledEvents = []string{}
			}
		}
		if cmd.IsSet("description") {
			d := cmd.String("description")
			in.Description = &d
		}
		if cmd.IsSet("status") {
			st := cmd.String("status")
			in.Status = &st
		}
		return in
	}
	one := func(cmd *cli.Command, ep *webhook.Endpoint) error {
		return output(cmd, stdout, ep, func(w io.Writer) {
			printEndpoint(w, ep)
			if ep.Secret != nil {
				fmt.Fprintf(w, "  secret: %s (shown only this once)\n", *ep.Secret)
			}
		})
	}
	return &cli.Command{
		Name:  "endpoints",
		Usage: "an app's webhook endpoints of one environment: list, create, update, delete, rotate-secret",
		Commands: []*cli.Command{
			{
				Name:  "list",
				Usage: "the app's endpoints of the environment (no secrets)",
				Flags: append(append([]cli.Flag{}, owner...), jsonFlag()),
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					eps, err := m.Webhooks.Endpoints(ctx, cmd.Int64("app"), cmd.String("env"))
					if err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"app_id": cmd.Int64("app"), "environment": cmd.String("env"), "endpoints": eps}, func(w io.Writer) {
						if len(eps) == 0 {
							fmt.Fprintf(w, "app %d has no %s webhook endpoint\n", cmd.Int64("app"), cmd.String("env"))
						}
						for _, ep := range eps {
							printEndpoint(w, ep)
						}
					})
				}),
			},
			{
				Name:  "create",
				Usage: "add an endpoint; its secret is printed this once",
				Flags: append(append(append([]cli.Flag{}, owner...), fields...), jsonFlag()),
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					ep, err := m.Webhooks.CreateEndpoint(ctx, cmd.Int64("app"), cmd.String("env"), input(cmd))
					if err != nil {
						return err
					}
					return one(cmd, ep)
				}),
			},
			{
				Name:      "update",
				Usage:     "change an endpoint's URL, events, description or status (enabled resumes a disabled one)",
				ArgsUsage: "ENDPOINT_ID",
				Flags: append(append(append([]cli.Flag{}, owner...), fields...),
					&cli.StringFlag{Name: "status", Usage: "enabled or disabled"}, jsonFlag()),
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "ENDPOINT_ID")
					if err != nil {
						return err
					}
					ep, err := m.Webhooks.UpdateEndpoint(ctx, cmd.Int64("app"), cmd.String("env"), a[0], input(cmd))
					if err != nil {
						return err
					}
					return one(cmd, ep)
				}),
			},
			{
				Name:      "delete",
				Usage:     "delete an endpoint; its pending deliveries stop",
				ArgsUsage: "ENDPOINT_ID",
				Flags:     append(append([]cli.Flag{}, owner...), jsonFlag()),
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "ENDPOINT_ID")
					if err != nil {
						return err
					}
					if err := m.Webhooks.DeleteEndpoint(ctx, cmd.Int64("app"), cmd.String("env"), a[0]); err != nil {
						return err
					}
					return output(cmd, stdout, map[string]any{"id": a[0], "deleted": true}, func(w io.Writer) {
						fmt.Fprintf(w, "deleted webhook endpoint %s\n", a[0])
					})
				}),
			},
			{
				Name:      "rotate-secret",
				Usage:     "give an endpoint a new secret, printed this once; for 24 hours deliveries are signed with both",
				ArgsUsage: "ENDPOINT_ID",
				Flags:     append(append([]cli.Flag{}, owner...), jsonFlag()),
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					a, err := args(cmd, "ENDPOINT_ID")
					if err != nil {
						return err
					}
					ep, err := m.Webhooks.RotateEndpointSecret(ctx, cmd.Int64("app"), cmd.String("env"), a[0])
					if err != nil {
						return err
					}
					return one(cmd, ep)
				}),
			},
		},
	}
}

// webhookRecoverCommand is `webhooks recover ENDPOINT_ID --since TIME`.
func webhookRecoverCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "recover",
		Usage:     "deliver again to an endpoint every event of the last 30 days after --since whose delivery to it failed or was not sent",
		ArgsUsage: "ENDPOINT_ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Required: true, Usage: "an RFC 3339 time, e.g. 2026-11-28T09:00:00Z"},
			jsonFlag(),
		},
		Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
			a, err := args(cmd, "ENDPOINT_ID")
			if err != nil {
				return err
			}
			since, err := time.Parse(time.RFC3339, cmd.String("since"))
			if err != nil {
				return fmt.Errorf("--since %q is not an RFC 3339 time, e.g. 2026-11-28T09:00:00Z", cmd.String("since"))
			}
			app, env, err := m.Webhooks.EndpointOwner(ctx, a[0])
			if err != nil {
				return err
			}
			n, err := m.Webhooks.Recover(ctx, app, env, a[0], since)
			if err != nil {
				return err
			}
			return output(cmd, stdout, map[string]any{"endpoint_id": a[0], "since": since.UTC().Format(time.RFC3339), "recovering": n}, func(w io.Writer) {
				fmt.Fprintf(w, "queued %d events again to webhook endpoint %s; a running `boxoffice serve` delivers them\n", n, a[0])
			})
		}),
	}
}

// printEndpoint prints one endpoint on a line, for a person.
func printEndpoint(w io.Writer, ep *webhook.Endpoint) {
	status := ep.Status
	if ep.DisabledReason != nil {
		status += " (" + *ep.DisabledReason + ")"
	}
	fmt.Fprintf(w, "%s  %-4s %-18s %s  events=%s\n", ep.ID, ep.Environment, status, ep.URL, strings.Join(ep.EnabledEvents, ","))
}
