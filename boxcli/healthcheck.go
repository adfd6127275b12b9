package boxcli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v3"
)

// healthcheckTimeout bounds one check; container runtimes give a check a
// few seconds before they count it failed.
const healthcheckTimeout = 3 * time.Second

// healthURL is where a server listening on addr (ADDR) answers /healthz
// from the same machine: an unspecified or missing host is the loopback.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("ADDR %q is not host:port: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// healthcheckCommand lets a container image without a shell or curl check
// its own server: it exits 0 when /healthz answers 200, 1 otherwise.
func healthcheckCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "healthcheck",
		Usage: "exit 0 when the server of ADDR on this machine answers /healthz (for container health checks)",
		Flags: []cli.Flag{&cli.StringFlag{Name: "url", Usage: "check this URL instead of /healthz on ADDR"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			u := cmd.String("url")
			if u == "" {
				var err error
				if u, err = healthURL(cmd.String("addr")); err != nil {
					return err
				}
			}
			ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				return err
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("healthcheck: %w", err)
			}
			defer res.Body.Close()
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("healthcheck: %s answered %d", u, res.StatusCode)
			}
			fmt.Fprintf(stdout, "ok: %s\n", u)
			return nil
		},
	}
}
