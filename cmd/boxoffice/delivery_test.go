package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/jobs"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
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

// requireBackoff checks that each retry waited at least its backoff,
// fastJobs' base 5 ms doubling: the n-th gap at least 5 ms·2^(n-1), so the
// 9th is at least 1.28 s. Only lower bounds: a loaded machine delays
// attempts further, and by however much, so gaps need not grow evenly.
func requireBackoff(t *testing.T, g []time.Duration) {
	t.Helper()
	for i, d := range g {
		require.GreaterOrEqual(t, d, (5*time.Millisecond)<<i, "gap %d: backoff grows", i+1)
	}
}

func gaps(ds []delivery) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ds); i++ {
		out = append(out, ds[i].At.Sub(ds[i-1].At))
	}
	return out
}

func TestWebhookRetries(t *testing.T) {
	t.Parallel()
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
			// Deadlines here only end a stuck test. Alone, the attempts take
			// a second or two; beside the suite's other SQLite tests, which
			// share modernc's process-wide allocator lock, an attempt has
			// taken up to 6 s.
			waitFor(t, 60*time.Second, "delivery", func() bool { return tb.eventOf(t, ref).Status == store.WebhookDelivered })
			ds := rc.deliveries()
			require.Len(t, ds, 4)
			for _, d := range ds {
				require.Equal(t, ds[0].Header.Get("X-SVC-Event-Id"), d.Header.Get("X-SVC-Event-Id"), "one event, retried")
			}
			g := gaps(ds)
			t.Logf("gaps between attempts: %v", g)
			requireBackoff(t, g)
			// Each attempt is recorded once it has an answer. On a loaded
			// machine River has cut an attempt at its job timeout after the
			// receiver got it and before its answer was recorded: the
			// receiver saw four, the log has three. So the log holds at most
			// the receiver's four, and ends with the 200.
			ev := tb.eventOf(t, ref)
			_, attempts, err := store.RecentWebhookEvents(context.Background(), tb.db, tb.demo.App.App.ID, time.Time{}, "", 10)
			require.NoError(t, err)
			log := attempts[ev.ID]
			require.Len(t, log, int(ev.Attempts), "one log line per attempt counted")
			require.GreaterOrEqual(t, len(log), 2)
			require.LessOrEqual(t, len(log), 4)
			if len(log) < 4 {
				t.Logf("%d of the receiver's 4 requests recorded: an attempt was cut at the job timeout", len(log))
			}
			require.EqualValues(t, 500, *log[0].StatusCode)
			require.Equal(t, "receiver answered 500", *log[0].Error)
			last := log[len(log)-1]
			require.EqualValues(t, 200, *last.StatusCode)
			require.Nil(t, last.Error)
		})
		t.Run("TenAttemptsThenFailed", func(t *testing.T) {
			tb := setup(t, storetest.MustOpen(t, dbKind(db)), fastJobs)
			rc := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
			tb.pointWebhooks(t, rc.srv.URL)
			tb.startJobs(t)
			ref := tb.emitFree(t)
			waitFor(t, 90*time.Second, "the event to fail", func() bool { return tb.eventOf(t, ref).Status == store.WebhookFailed })
			time.Sleep(3 * fastJobsPoll) // nothing more may arrive
			ds := rc.deliveries()
			require.Len(t, ds, webhook.MaxAttempts)
			require.EqualValues(t, webhook.MaxAttempts, tb.eventOf(t, ref).Attempts)
			g := gaps(ds)
			t.Logf("gaps between attempts: %v", g)
			requireBackoff(t, g)

			// An operator redelivers once the receiver is fixed.
			rc.status = ok
			require.NoError(t, tb.m.Webhooks.Redeliver(context.Background(), tb.eventOf(t, ref).ID))
			waitFor(t, 60*time.Second, "redelivery", func() bool { return tb.eventOf(t, ref).Status == store.WebhookDelivered })
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
	t.Parallel()
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
		testwait.Start(t, "the first job runner", func() error { return tb.m.Jobs.Start(ctx) })
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
		testwait.Start(t, "the second job runner", func() error { return m2.Jobs.Start(ctx2) })
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

// hungReceiver is a webhook endpoint that never answers: each request is
// held until the test releases them all.
type hungReceiver struct {
	srv            *httptest.Server
	release        chan struct{}
	inFlight, most atomic.Int32
	got            atomic.Int32
}

func newHungReceiver(t testing.TB) *hungReceiver {
	h := &hungReceiver{release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: only then does the server notice a sender
		// that gives up (its timeout) and end the request's context.
		_, _ = io.Copy(io.Discard, r.Body)
		h.got.Add(1)
		n := h.inFlight.Add(1)
		defer h.inFlight.Add(-1)
		for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// otherApp creates an app of another account whose webhooks go to url and
// returns its test key.
func (tb *testBundle) otherApp(t testing.TB, url string) string {
	t.Helper()
	ctx := context.Background()
	acc, err := tb.m.Provision.CreateAccount(ctx, provision.AccountInput{Name: "Other partner", Email: "other@partner.example"})
	require.NoError(t, err)
	app, err := tb.m.Provision.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Other shop",
		RedirectDomains: []string{seed.DemoRedirectDomain}, WebhookURL: url})
	require.NoError(t, err)
	return app.TestKey
}

// TestWebhookFairness: app A's receiver never answers and A is sent a burst
// of 100 events (as 160 clicks on "Send test event" once did, taking every
// worker for 10 s at a time); app B, of another account, still receives
// each of its order.paid events, sent after A's burst, while A's queue is
// far from through: B does not wait its turn behind A. That holds however
// slow the machine (a queue served in order would attempt all of A's 100
// first); how soon B's arrive is logged, seconds on a quiet machine, and
// not a verdict. Deliveries go through the real River client with
// production job settings, on each database.
func TestWebhookFairness(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, func(c *Config) { c.AllowPrivateWebhooks = true })
		hung := newHungReceiver(t)
		tb.pointWebhooks(t, hung.srv.URL)
		rc := newReceiver(t, ok)
		keyB := tb.otherApp(t, rc.srv.URL)
		// "Never answers" holds for the whole test, however slow the machine.
		tb.m.Webhooks.Client.Timeout = 10 * time.Minute
		tb.startJobs(t)
		// Registered after startJobs, so it runs first: the runner's Stop
		// waits for running deliveries, which end once A's receiver answers.
		t.Cleanup(func() { close(hung.release) })

		ctx := context.Background()
		appA := tb.demo.App.App.ID
		burst := time.Now()
		for range 100 {
			_, err := tb.m.Webhooks.EmitTest(ctx, appA, store.EnvTest)
			require.NoError(t, err)
		}
		t.Logf("A's burst of 100 events took %v", time.Since(burst))
		perApp := tb.m.Webhooks.Slots.PerApp()
		waitFor(t, 10*time.Second, "A's receiver to hold A's share of the workers", func() bool {
			return int(hung.got.Load()) >= perApp
		})

		const rounds = 5
		var took []time.Duration
		for i := range rounds {
			start := time.Now()
			res := tb.checkout(t, keyB, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			ref := res.data()["order_reference"].(string)
			var at time.Time
			waitFor(t, 30*time.Second, "B's order.paid", func() bool {
				for _, d := range rc.deliveries() {
					if strings.Contains(string(d.Body), ref) {
						at = d.At
						return true
					}
				}
				return false
			})
			// Read after B's receipt, so at least what A had been sent then.
			attemptsA := hung.got.Load()
			require.Less(t, attemptsA, int32(100), "B's event %d came only after A's whole burst was attempted", i+1)
			require.Len(t, rc.deliveries(), i+1)
			took = append(took, at.Sub(start))
		}
		sorted := slices.Clone(took)
		slices.Sort(sorted)
		t.Logf("B's order.paid, checkout to receipt, while A's %d deliveries hang: %v (median %v)", hung.inFlight.Load(), took, sorted[rounds/2])

		events, _, err := store.RecentWebhookEvents(ctx, tb.db, appA, time.Time{}, "", 100)
		require.NoError(t, err)
		require.Len(t, events, 100)
		if time.Since(burst) >= jobs.JobTimeout {
			// River has cut A's first attempts (a slow machine): they are
			// recorded as failed, and A's share shrinks to one.
			t.Logf("the test outlasted the job timeout (%v); A's share is not checked", jobs.JobTimeout)
			return
		}
		require.EqualValues(t, perApp, hung.most.Load(), "A never held more than its share")
		require.EqualValues(t, perApp, hung.got.Load(), "A's other events wait for their turn without an attempt")
		for _, e := range events {
			require.Equal(t, store.WebhookPending, e.Status, "the delivery log shows A's events waiting")
			require.Zero(t, e.Attempts, "no attempt has ended yet")
		}
	})
}
