package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// testBundle is a running server over a fresh database seeded with the demo.
type testBundle struct {
	m       *Main
	db      *store.DB
	srv     *httptest.Server
	queries *storetest.Counter
	demo    *seed.Result
	testKey string
	liveKey string
}

func setup(t testing.TB, db *store.DB, opts ...func(*Config)) *testBundle {
	t.Helper()
	cfg := DefaultConfig()
	cfg.PublicBaseURL = "http://boxoffice.test"
	cfg.PaymentProvider = "dev"
	// Limits have tests of their own; elsewhere they stay out of the way.
	cfg.RateLimits = ratelimit.Config{FailedAuth: 1 << 20, LiveApp: 1 << 20, TestApp: 1 << 20, Checkout: 1 << 20,
		ScannerUnknownCodes: 1 << 20, Window: time.Minute}
	cfg.RateLimitDelay = 0
	// Portal passwords hashed at production cost would slow every setup
	// (the demo account has one); the format and checks are the same.
	cfg.Password = auth.PasswordParams{Memory: 256, Time: 1, Threads: 1}
	for _, o := range opts {
		o(&cfg)
	}
	m, err := New(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(m.Listener.Close)
	t.Cleanup(m.Live.Close)
	require.NoError(t, m.Migrate(context.Background()))
	demo, err := seed.Demo(context.Background(), db, m.Provision, m.Now())
	require.NoError(t, err)
	// The query hook is in place before the server starts: a client in
	// another process (node, Chromium) gives the race detector no
	// happens-before edge between this goroutine and the server's.
	queries := storetest.Count(db)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	// Before srv.Close, which waits for every request: event streams
	// only end when told to.
	t.Cleanup(m.Streams.Close)
	return &testBundle{
		m: m, db: db, srv: srv, queries: queries, demo: demo,
		testKey: demo.App.TestKey, liveKey: demo.App.LiveKey,
	}
}

// testClock is a clock a test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// newTestClock returns a clock a test moves, starting at the real time.
func newTestClock() *testClock { return &testClock{t: time.Now().UTC()} }

// withClock makes every service of the bundle read c.
func withClock(c *testClock) func(*Config) {
	return func(cfg *Config) { cfg.Clock = c.Now }
}

// changeCatalog runs write, a change to the catalog tables, and waits
// until the server's catalog watch has seen it. On PostgreSQL the news
// arrives by NOTIFY a moment after the commit, as it does for every server
// of a deployment; on SQLite at once.
func (tb *testBundle) changeCatalog(t testing.TB, write func()) {
	t.Helper()
	ctx := context.Background()
	before, _ := tb.m.CatalogWatch.Version(ctx)
	write()
	waitFor(t, 10*time.Second, "the catalog watch to see the change", func() bool {
		v, ok := tb.m.CatalogWatch.Version(ctx)
		return ok && v != before
	})
}

// keyStatements is what an admitted request spends on its key once the
// key was seen: nothing on PostgreSQL (the tenant cache, invalidated by
// NOTIFY), one read of the tenant tables' version on SQLite.
func keyStatements(db *store.DB) int {
	if db.Postgres() {
		return 0
	}
	return 1
}

// changeTenants runs write, a change to accounts, apps, keys or scanners
// made outside the server's provision service (which tells its watch at
// once), and waits until the server's tenant watch has seen it.
func (tb *testBundle) changeTenants(t testing.TB, write func()) {
	t.Helper()
	ctx := context.Background()
	before, _ := tb.m.TenantWatch.Version(ctx)
	write()
	waitFor(t, 10*time.Second, "the tenant watch to see the change", func() bool {
		v, ok := tb.m.TenantWatch.Version(ctx)
		return ok && v != before
	})
}

// catalogWatched waits until the catalog watch can tell changes, so reads
// from then on are kept by the catalog cache.
func (tb *testBundle) catalogWatched(t testing.TB) {
	t.Helper()
	waitFor(t, 10*time.Second, "the catalog watch to listen", func() bool {
		_, ok := tb.m.CatalogWatch.Version(context.Background())
		return ok
	})
	// The listing index (PostgreSQL) reads the catalog on its own; until it
	// has, listings read the database, and statement counts would depend
	// on which way a request went.
	if ix := tb.m.Catalog.Index; ix != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ix.Warm(ctx); err != nil {
			t.Fatalf("warming the listing index: %v", err)
		}
	}
}

// response is a decoded HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// errorCode returns error.code of a REST error body.
func (r *response) errorCode() string {
	e, _ := r.Body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func (r *response) errorMessage() string {
	e, _ := r.Body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

func (tb *testBundle) do(t testing.TB, method, path, key string, body []byte, headers ...string) *response {
	t.Helper()
	req, err := http.NewRequest(method, tb.srv.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := tb.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	contractCheck(t, req, res, raw)
	out := &response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(raw, &out.Body), "body: %s", raw)
	}
	return out
}

func (tb *testBundle) get(t testing.TB, path, key string) *response {
	t.Helper()
	return tb.do(t, http.MethodGet, path, key, nil)
}

// graphql posts a query and returns the decoded response.
func (tb *testBundle) graphql(t testing.TB, key, query string, vars map[string]any) *response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	return tb.do(t, http.MethodPost, "/graphql", key, body)
}

// gqlErrorExt returns the extensions of the first GraphQL error.
func (r *response) gqlErrorExt(t testing.TB) map[string]any {
	t.Helper()
	errs, ok := r.Body["errors"].([]any)
	require.True(t, ok, "no errors in %s", r.Raw)
	require.NotEmpty(t, errs)
	ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
	return ext
}

func TestMain_Serve(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t, "sqlite")
	m, err := New(DefaultConfig(), db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NoError(t, m.Migrate(context.Background()))
	ln, err := newLocalListener()
	require.NoError(t, err)
	admin, err := newLocalListener()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, ln, admin) }()
	get := func(l net.Listener, path string) int {
		res, err := http.Get("http://" + l.Addr().String() + path)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, get(ln, "/api/v1/events"))
	require.Equal(t, http.StatusNotFound, get(ln, "/metrics"), "metrics are never on the public port")
	// Both read the database with a 2 s budget, and the job runner starting
	// beside them (River's first fetches, sweep and purge) holds SQLite's
	// one connection: with the suite's other tests on the CPU that can take
	// longer, and /metrics answers 500, /readyz 503, until it is done.
	waitFor(t, 30*time.Second, "the admin port's /metrics", func() bool { return get(admin, "/metrics") == http.StatusOK })
	waitFor(t, 30*time.Second, "the admin port's /readyz", func() bool { return get(admin, "/readyz") == http.StatusOK })
	cancel()
	require.NoError(t, <-done)
	// Asked of the listener itself, not over the network: once closed, its
	// port may go to a server of a test running beside this one.
	require.ErrorIs(t, admin.(*net.TCPListener).SetDeadline(time.Now()), net.ErrClosed, "the admin listener stops with the server")
}

// checkout posts a checkout request; body is marshalled unless it is []byte.
func (tb *testBundle) checkout(t testing.TB, apiKey, idemKey string, body any) *response {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	return tb.do(t, http.MethodPost, "/api/v1/checkout-sessions", apiKey, raw, "Idempotency-Key", idemKey)
}
