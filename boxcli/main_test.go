package boxcli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/stretchr/testify/require"
)

// served is the program serving HTTP over a test database seeded with the
// demo: what the commands that read a running service's work (orders,
// tickets, listen, healthcheck) run beside.
type served struct {
	m       *server.Main
	db      *store.DB
	srv     *httptest.Server
	demo    *seed.Result
	testKey string
	liveKey string
}

// serve starts the program over db, as the end-to-end tests do, with cfg
// changed by opts.
func serve(t testing.TB, db *store.DB, opts ...func(*server.Config)) *served {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.PublicBaseURL = "http://boxoffice.test"
	cfg.PaymentProvider = "dev"
	// Limits have tests of their own; here they stay out of the way.
	cfg.RateLimits = ratelimit.Config{FailedAuth: 1 << 20, LiveApp: 1 << 20, TestApp: 1 << 20, Checkout: 1 << 20, Window: time.Minute}
	cfg.RateLimitDelay = 0
	// The demo account's portal password, hashed at a test's cost.
	cfg.Password = auth.PasswordParams{Memory: 256, Time: 1, Threads: 1}
	for _, o := range opts {
		o(&cfg)
	}
	m, err := server.New(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(m.Listener.Close)
	t.Cleanup(m.Live.Close)
	require.NoError(t, m.Migrate(context.Background()))
	demo, err := seed.Demo(context.Background(), db, m.Provision, m.Now())
	require.NoError(t, err)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	// Before srv.Close, which waits for every request: event streams
	// only end when told to.
	t.Cleanup(m.Streams.Close)
	return &served{m: m, db: db, srv: srv, demo: demo, testKey: demo.App.TestKey, liveKey: demo.App.LiveKey}
}

// fastJobs makes background work quick enough for tests and lets webhooks
// reach a local receiver. River polls at production's interval: faster
// polls cost the suite more CPU than they save (docs/testing.md).
func fastJobs(c *server.Config) {
	c.AllowPrivateWebhooks = true
	c.WebhookRetryBase = 5 * time.Millisecond
	c.Jobs.PollInterval = 250 * time.Millisecond
	c.Jobs.SweepInterval = 500 * time.Millisecond
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// delivery is one request a receiver got.
type delivery struct {
	Header http.Header
	Body   []byte
}

// receiver is a partner's webhook endpoint, or the laptop's URL `listen`
// forwards to; it answers 204 No Content.
type receiver struct {
	mu  sync.Mutex
	got []delivery
	srv *httptest.Server
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{Header: r.Header.Clone(), Body: body})
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// waitType waits for a delivery of event type typ and returns it.
func (rc *receiver) waitType(t testing.TB, typ string) delivery {
	t.Helper()
	var found delivery
	waitFor(t, 10*time.Second, "a "+typ+" delivery", func() bool {
		for _, d := range rc.deliveries() {
			if d.Header.Get("X-SVC-Event-Type") == typ {
				found = d
				return true
			}
		}
		return false
	})
	return found
}
