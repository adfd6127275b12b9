package boxcli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWebhookEndpointCommands: `webhooks endpoints list|create|update|
// delete|rotate-secret` and `webhooks recover` manage an app's endpoints
// per environment as the API does; the app's webhook URL is one of them.
func TestWebhookEndpointCommands(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite://" + t.TempDir() + "/cmd.db"
	mustJSON(t, dbURL, "seed", "demo", "--json")
	_, err := runCLI(t, dbURL, "apps", "update", "1", "--webhook-url", "https://hooks.partner.example/all")
	require.NoError(t, err)

	list := mustJSON(t, dbURL, "webhooks", "endpoints", "list", "--app", "1", "--env", "live", "--json")
	eps := list["endpoints"].([]any)
	require.Len(t, eps, 1, "the app's webhook URL")
	legacy := eps[0].(map[string]any)
	require.Equal(t, "https://hooks.partner.example/all", legacy["url"])
	require.Equal(t, []any{"*"}, legacy["enabled_events"])
	require.NotContains(t, legacy, "secret")

	made := mustJSON(t, dbURL, "webhooks", "endpoints", "create", "--app", "1", "--env", "live",
		"--url", "https://door.partner.example/in", "--events", "ticket.checked_in,ticket.voided", "--description", "door service", "--json")
	require.Regexp(t, `^we_`, made["id"])
	require.Regexp(t, `^whsec_`, made["secret"])
	require.Equal(t, []any{"ticket.checked_in", "ticket.voided"}, made["enabled_events"])
	require.Equal(t, "live", made["environment"])
	id := made["id"].(string)

	_, err = runCLI(t, dbURL, "webhooks", "endpoints", "create", "--app", "1", "--env", "live", "--url", "https://x.example/in", "--events", "order.shipped")
	require.ErrorContains(t, err, `"order.shipped" is not an event type`)
	_, err = runCLI(t, dbURL, "webhooks", "endpoints", "update", id, "--app", "1", "--env", "test", "--status", "disabled")
	require.ErrorContains(t, err, "belongs to the live environment")

	off := mustJSON(t, dbURL, "webhooks", "endpoints", "update", id, "--app", "1", "--env", "live", "--status", "disabled", "--json")
	require.Equal(t, "disabled", off["status"])
	require.Equal(t, "manual", off["disabled_reason"])
	require.NotContains(t, off, "secret")

	rotated := mustJSON(t, dbURL, "webhooks", "endpoints", "rotate-secret", id, "--app", "1", "--env", "live", "--json")
	require.Regexp(t, `^whsec_`, rotated["secret"])
	require.NotEqual(t, made["secret"], rotated["secret"])

	_, err = runCLI(t, dbURL, "webhooks", "recover", id, "--since", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	require.ErrorContains(t, err, "enable the endpoint before recovering its events")
	mustJSON(t, dbURL, "webhooks", "endpoints", "update", id, "--app", "1", "--env", "live", "--status", "enabled", "--json")
	rec := mustJSON(t, dbURL, "webhooks", "recover", id, "--since", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "--json")
	require.Equal(t, 0.0, rec["recovering"])
	_, err = runCLI(t, dbURL, "webhooks", "recover", id, "--since", "yesterday")
	require.ErrorContains(t, err, `--since "yesterday" is not an RFC 3339 time`)

	require.Equal(t, map[string]any{"id": id, "deleted": true},
		mustJSON(t, dbURL, "webhooks", "endpoints", "delete", id, "--app", "1", "--env", "live", "--json"))
	list = mustJSON(t, dbURL, "webhooks", "endpoints", "list", "--app", "1", "--env", "live", "--json")
	require.Len(t, list["endpoints"].([]any), 1)
	out, err := runCLI(t, dbURL, "webhooks", "endpoints", "list", "--app", "1", "--env", "test")
	require.NoError(t, err)
	require.Contains(t, out, "https://hooks.partner.example/all")
}
