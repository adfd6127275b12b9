package boxcli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// TestWebhookCommands: webhooks test, list, redeliver and resume, and what
// a server started on the same database makes of them.
func TestWebhookCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite://" + dir + "/cmd.db"
	demo := mustJSON(t, dbURL, "seed", "demo", "--json")
	require.Equal(t, 1.0, demo["id"])

	_, err := runCLI(t, dbURL, "apps", "update", "1", "--webhook-url", "https://[64:ff9b::a9fe:a9fe]/hooks")
	require.ErrorContains(t, err, "special-purpose address", "NAT64 of the metadata address")
	rc := newReceiver(t)
	_, err = runCLI(t, dbURL, "--webhook-allow-private-targets", "apps", "update", "1", "--webhook-url", rc.srv.URL+"/hooks")
	require.NoError(t, err)

	sent := mustJSON(t, dbURL, "webhooks", "test", "--app", "1", "--env", "live", "--json")
	require.Regexp(t, `^evt_`, sent["event_id"])
	_, err = runCLI(t, dbURL, "webhooks", "test", "--app", "99", "--env", "live")
	require.ErrorContains(t, err, "app 99 does not exist")
	// Its delivery is queued: redelivering would start a second chain.
	_, err = runCLI(t, dbURL, "webhooks", "redeliver", sent["event_id"].(string), "--json")
	require.Error(t, err)
	require.Regexp(t, `^event evt_\w+ was not queued again: a delivery of the event is still under way: job \d+ is available, about to make attempt 1 of 10; redeliver it once that delivery has ended$`, describe(err))

	// A server started on the database delivers the queued event.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := server.DefaultConfig()
	fastJobs(&cfg)
	cfg.DatabaseURL = dbURL
	m, err := server.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	defer m.Close()
	testwait.Start(t, "the job runner", func() error { return m.Jobs.Start(ctx) })
	defer func() {
		s, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = m.Jobs.Stop(s)
	}()
	d := rc.waitType(t, "webhook.test")
	require.Equal(t, sent["event_id"], d.Header.Get("X-SVC-Event-Id"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(d.Body, &body))
	require.Equal(t, "live", body["environment"])

	waitFor(t, 10*time.Second, "the attempt to be recorded", func() bool {
		list := mustJSON(t, dbURL, "webhooks", "list", "--app", "1", "--json")
		evs := list["events"].([]any)
		return len(evs) == 1 && evs[0].(map[string]any)["status"] == "delivered"
	})
	list := mustJSON(t, dbURL, "webhooks", "list", "--app", "1", "--json")
	ev := list["events"].([]any)[0].(map[string]any)
	require.Equal(t, "webhook.test", ev["type"])
	log := ev["attempt_log"].([]any)
	require.Len(t, log, 1)
	require.Equal(t, 204.0, log[0].(map[string]any)["status_code"])
	require.True(t, strings.HasSuffix(log[0].(map[string]any)["url"].(string), "/hooks"))

	out := mustJSON(t, dbURL, "webhooks", "redeliver", ev["id"].(string), "--json")
	require.Equal(t, "pending", out["status"])
	waitFor(t, 10*time.Second, "the redelivery", func() bool { return len(rc.deliveries()) == 2 })
	_, err = runCLI(t, dbURL, "webhooks", "redeliver", "evt_nope")
	require.ErrorContains(t, err, "webhook event evt_nope does not exist")

	// Resuming deliveries that were never disabled is refused; once they
	// are, the operator resumes them.
	_, err = runCLI(t, dbURL, "webhooks", "resume", "--app", "1")
	require.ErrorContains(t, err, "Deliveries to the webhook URL of app 1 are not disabled.")
	eps, err := store.WebhookEndpointsOf(ctx, m.DB, 1, store.EnvTest)
	require.NoError(t, err)
	_, err = store.RecordWebhookFailure(ctx, m.DB, eps[0].ID, rc.srv.URL+"/hooks", "receiver answered 500", time.Now())
	require.NoError(t, err)
	_, err = store.DisableWebhookEndpoint(ctx, m.DB, eps[0].ID, time.Now())
	require.NoError(t, err)
	_, err = runCLI(t, dbURL, "webhooks", "test", "--app", "1", "--env", "test")
	require.ErrorContains(t, err, "resume deliveries (or set another webhook URL) before sending a test event")
	require.Equal(t, map[string]any{"app_id": 1.0, "deliveries": "resumed"}, mustJSON(t, dbURL, "webhooks", "resume", "--app", "1", "--json"))
	_, err = runCLI(t, dbURL, "webhooks", "test", "--app", "1", "--env", "test")
	require.NoError(t, err)
}
