package boxcli

import (
	"context"
	"io"
	"strings"

	"github.com/boxoffice/boxoffice/webhook/listen"
	"github.com/urfave/cli/v3"
)

// listenCommand is `boxoffice listen`: webhooks on a laptop. It talks to a
// running server over HTTP with the app's own key, so it needs no database
// and no operator.
func listenCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name: "listen",
		Usage: "forward an app's webhook events to a URL on this machine, signed as real deliveries are " +
			"(no public URL needed; the app's own deliveries go on as before)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "api-key", Required: true, Sources: cli.EnvVars("BOXOFFICE_API_KEY"),
				Usage: "the app's svc_test_… or svc_live_… key; events of its environment are forwarded"},
			&cli.StringFlag{Name: "forward-to", Required: true,
				Usage: "local URL each event is posted to, such as http://localhost:3000/hooks"},
			&cli.StringSliceFlag{Name: "events",
				Usage: "only these event types, comma-separated or repeated (order.paid, order.completed, order.failed, order.expired, ticket.checked_in, ticket.voided, webhook.test)"},
			&cli.StringFlag{Name: "url", Sources: cli.EnvVars("BOXOFFICE_URL"),
				Usage: "the Boxoffice server to listen to (default: PUBLIC_BASE_URL, else the server ADDR names, as serve does)"},
			&cli.StringFlag{Name: "secret",
				Usage: "sign forwarded events with this whsec_… secret (one printed by an earlier run) instead of a new one"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			var types []string
			for _, v := range cmd.StringSlice("events") {
				for t := range strings.SplitSeq(v, ",") {
					if t = strings.TrimSpace(t); t != "" {
						types = append(types, t)
					}
				}
			}
			return listen.Run(ctx, listen.Config{
				Server: serverURL(cmd), APIKey: cmd.String("api-key"), ForwardTo: cmd.String("forward-to"),
				Types: types, Secret: cmd.String("secret"), Out: stdout, Errs: stderr,
			})
		},
	}
}

// serverURL is the server listen calls: --url (BOXOFFICE_URL), else the
// one serve in the same shell serves, by the same variables.
func serverURL(cmd *cli.Command) string {
	if u := cmd.String("url"); u != "" {
		return u
	}
	return publicBaseURL(cmd)
}
