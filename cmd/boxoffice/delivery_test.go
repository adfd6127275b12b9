package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/stretchr/testify/require"
)

// emitFree makes a sandbox free order, whose order.paid is emitted at once.
func (tb *testBundle) emitFree(t testing.TB) string {
	t.Helper()
	res := tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.data()["order_reference"].(string)
}

func (tb *testBundle) eventOf(t testing.TB, ref string) *store.WebhookEvent {
	t.Helper()
	var e store.WebhookEvent
	require.NoError(t, tb.db.NewSelect().Model(&e).Where("payload LIKE ?", "%"+ref+"%").Scan(context.Background()))
	return &e
}

func gaps(ds []delivery) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ds); i++ {
		out = append(out, ds[i].At.Sub(ds[i-1].At))
	}
	return out
}

func TestWebhookRetries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("FourthAttemptDelivers", func(t *testing.T) {
			tb := setup(t, storetest.MustOpen(t, dbKind(db)), fastJobs, func(c *Config) { c.WebhookRetryBase = 150 * time.Millisecond })
			rc := newReceiver(t, func(n int) int {
				if n <= 3 {
					return http.StatusInternalServerError
				}
				return http.StatusOK
			})
			tb.pointWebhooks(t, rc.srv.URL)
			tb.startJobs(t)
			ref := tb.emitFree(t)
			waitFor(t, 15*time.Second, "delivery", func() bool { return tb.eventOf(t, ref).Status == store.WebhookDelivered })
			ds := rc.deliveries()
			require.Len(t, ds, 4)
			for _, d := range ds {
				require.Equal(t, ds[0].Header.Get("X-SVC-Event-Id"), d.Header.Get("X-SVC-Event-Id"), "one event, retried")
			}
			g := gaps(ds)
			t.Logf("gaps between attempts: %v", g)
			require.Greater(t, g[2], g[0], "backoff grows")
			ev := tb.eventOf(t, ref)
			require.EqualValues(t, 4, ev.Attempts)
			_, attempts, err := store.RecentWebhookEvents(context.Background(), tb.db, tb.demo.App.App.ID, 10)
			require.NoError(t, err)
			log := attempts[ev.ID]
			require.Len(t, log, 4)
			require.EqualValues(t, 500, *log[0].StatusCode)
			require.Equal(t, "receiver answered 500", *log[0].Error)
			require.EqualValues(t, 200, *log[3].StatusCode)
			require.Nil(t, log[3].Error)
		})
		t.Run("TenAttemptsThenFailed", func(t *testing.T) {
			tb := setup(t, storetest.MustOpen(t, dbKind(db)), fastJobs)
			rc := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
			tb.pointWebhooks(t, rc.srv.URL)
			tb.startJobs(t)
			ref := tb.emitFree(t)
			waitFor(t, 30*time.Second, "the event to fail", func() bool { return tb.eventOf(t, ref).Status == store.WebhookFailed })
			time.Sleep(200 * time.Millisecond) // nothing more may arrive
			ds := rc.deliveries()
			require.Len(t, ds, webhook.MaxAttempts)
			require.EqualValues(t, webhook.MaxAttempts, tb.eventOf(t, ref).Attempts)
			g := gaps(ds)
			t.Logf("gaps between attempts: %v", g)
			require.Greater(t, g[8], g[4], "backoff grows")
			require.Greater(t, g[8], 600*time.Millisecond, "the 9th retry waits base·2^8 = 1.28s")

			// An operator redelivers once the receiver is fixed.
			rc.status = ok
			require.NoError(t, tb.m.Webhooks.Redeliver(context.Background(), tb.eventOf(t, ref).ID))
			waitFor(t, 10*time.Second, "redelivery", func() bool { return tb.eventOf(t, ref).Status == store.WebhookDelivered })
			require.EqualValues(t, webhook.MaxAttempts+1, tb.eventOf(t, ref).Attempts)
		})
	})
}

// dbKind tells which kind of database db is, to open another of the same.
func dbKind(db *store.DB) string {
	if db.Postgres() {
		return "postgres"
	}
	return "sqlite"
}

func TestWebhookRestartLosesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var up atomic.Bool
		rc := newReceiver(t, func(int) int {
			if up.Load() {
				return http.StatusOK
			}
			return http.StatusBadGateway
		})
		tb := setup(t, db, fastJobs, func(c *Config) { c.WebhookRetryBase = 300 * time.Millisecond })
		tb.pointWebhooks(t, rc.srv.URL)

		// The first server is up, the receiver is down: deliveries stay pending.
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, tb.m.Jobs.Start(ctx))
		refs := []string{tb.emitFree(t), tb.emitFree(t), tb.emitFree(t)}
		waitFor(t, 10*time.Second, "first attempts", func() bool { return len(rc.deliveries()) >= 3 })
		stop, c := context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(t, tb.m.Jobs.Stop(stop))
		c()
		cancel()
		// Created while no server runs at all.
		refs = append(refs, tb.emitFree(t))
		for _, ref := range refs {
			require.Equal(t, store.WebhookPending, tb.eventOf(t, ref).Status)
		}

		// A new server on the same database delivers everything.
		up.Store(true)
		cfg := tb.m.Config
		m2, err := New(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
		require.NoError(t, err)
		ctx2, cancel2 := context.WithCancel(context.Background())
		defer cancel2()
		require.NoError(t, m2.Jobs.Start(ctx2))
		defer func() {
			s, c := context.WithTimeout(context.Background(), 10*time.Second)
			defer c()
			_ = m2.Jobs.Stop(s)
		}()
		for _, ref := range refs {
			waitFor(t, 20*time.Second, "delivery after restart", func() bool { return tb.eventOf(t, ref).Status == store.WebhookDelivered })
		}
	})
}

func TestWebhookReceiverSafety(t *testing.T) {
	t.Parallel()
	for addr, public := range map[string]bool{
		"8.8.8.8": true, "2001:4860:4860::8888": true, "41.66.192.1": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fc00::1": false, "0.0.0.0": false, "100.64.0.1": false,
		"::ffff:127.0.0.1": false, "224.0.0.1": false,
	} {
		require.Equal(t, public, webhook.Public(netip.MustParseAddr(addr)), addr)
	}

	// With private targets refused, a receiver on loopback is never reached,
	// even by https, and the event fails at once instead of retrying.
	hit := atomic.Int32{}
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hit.Add(1) }))
	defer tls.Close()
	db := storetest.MustOpen(t, "sqlite")
	tb := setup(t, db, fastJobs, func(c *Config) { c.AllowPrivateWebhooks = false })
	_, err := db.NewUpdate().Model((*store.App)(nil)).Set("webhook_url = ?", tls.URL+"/hook").
		Where("id = ?", tb.demo.App.App.ID).Exec(context.Background())
	require.NoError(t, err)
	tb.startJobs(t)
	ref := tb.emitFree(t)
	waitFor(t, 10*time.Second, "the event to fail", func() bool { return tb.eventOf(t, ref).Status == store.WebhookFailed })
	ev := tb.eventOf(t, ref)
	require.EqualValues(t, 1, ev.Attempts)
	require.Contains(t, *ev.LastError, "is not a public address")
	require.Zero(t, hit.Load())

	// Plain http:// is refused the same way.
	_, err = db.NewUpdate().Model((*store.App)(nil)).Set("webhook_url = ?", "http://hooks.example.com/x").
		Where("id = ?", tb.demo.App.App.ID).Exec(context.Background())
	require.NoError(t, err)
	ref = tb.emitFree(t)
	waitFor(t, 10*time.Second, "the event to fail", func() bool { return tb.eventOf(t, ref).Status == store.WebhookFailed })
	require.Contains(t, *tb.eventOf(t, ref).LastError, "must be https://")
}

func TestWebhookCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite://" + dir + "/cmd.db"
	demo := mustJSON(t, dbURL, "seed", "demo", "--json")
	require.Equal(t, 1.0, demo["id"])

	_, err := runCLI(t, dbURL, "apps", "update", "1", "--webhook-url", "https://[64:ff9b::a9fe:a9fe]/hooks")
	require.ErrorContains(t, err, "special-purpose address", "NAT64 of the metadata address")
	rc := newReceiver(t, ok)
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
	cfg := DefaultConfig()
	fastJobs(&cfg)
	cfg.DatabaseURL = dbURL
	m, err := Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, m.Jobs.Start(ctx))
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
}
