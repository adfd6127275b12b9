package boxcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary play the boxoffice command, as main does,
// so a test can run the real program as a process.
func TestMain(m *testing.M) {
	if os.Getenv("BOXOFFICE_RUN_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := Run(ctx, append([]string{"boxoffice"}, os.Args[1:]...), os.Stdout, os.Stderr)
		stop()
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

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

// waitFor polls cond until it holds. timeout is what it takes on a quiet
// machine at most; the test gives up only after testwait's patience, so a
// loaded machine changes how long it takes, never the verdict.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, timeout, what, cond)
}

// delivery is one request a receiver got.
type delivery struct {
	Header http.Header
	Body   []byte
}

// event is the delivered event, decoded.
func (d delivery) event(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(d.Body, &v))
	return v
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

// startJobs starts the program's job runner until the test ends.
func (s *served) startJobs(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	testwait.Start(t, "the job runner", func() error { return s.m.Jobs.Start(ctx) })
	t.Cleanup(func() {
		stop, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = s.m.Jobs.Stop(stop)
		cancel()
	})
}

// pointWebhooks sets the demo app's webhook URL.
func (s *served) pointWebhooks(t testing.TB, u string) {
	t.Helper()
	_, err := s.m.Provision.UpdateApp(context.Background(), s.demo.App.App.ID, provision.AppUpdate{WebhookURL: &u})
	require.NoError(t, err)
}

// answer is an answer of the API, its body decoded when it is JSON.
type answer struct {
	Status int
	Body   map[string]any
	Raw    []byte
}

// data is the answer's data object.
func (a *answer) data() map[string]any {
	d, _ := a.Body["data"].(map[string]any)
	return d
}

// errorCode is error.code of the answer.
func (a *answer) errorCode() string {
	e, _ := a.Body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// do sends a request to the API with key; body is marshalled unless it
// is []byte or nil.
func (s *served) do(t testing.TB, method, path, key string, body any, headers ...string) *answer {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		raw, err = json.Marshal(b)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, bytes.NewReader(raw))
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	a := &answer{Status: res.StatusCode}
	a.Raw, err = io.ReadAll(res.Body)
	require.NoError(t, err)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(a.Raw, &a.Body), "body: %s", a.Raw)
	}
	return a
}

var idemSeq atomic.Int64

// checkout creates a checkout session with key for body.
func (s *served) checkout(t testing.TB, key string, body map[string]any) *answer {
	t.Helper()
	idem := fmt.Sprintf("test-key-%d", idemSeq.Add(1))
	return s.do(t, http.MethodPost, "/api/v1/checkout-sessions", key, body, "Idempotency-Key", idem)
}

// cartFor is a valid checkout body for qty of one ticket of a demo date.
func (s *served) cartFor(event, date, ticket string, qty int) map[string]any {
	ids := s.demo.Catalog
	return map[string]any{
		"event_id": ids.Events[event], "eventdate_id": ids.EventDates[date],
		"items":       []any{map[string]any{"ticket_id": ids.Tickets[ticket], "quantity": qty}},
		"customer":    map[string]any{"name": "Ama Mensah", "email": "ama@example.com", "phone": "024 123 4567"},
		"success_url": "https://partner.example/done", "cancel_url": "https://partner.example/cancel",
		"metadata": map[string]any{"partner_cart": "cart-77"},
	}
}

// highlife is a cart of qty regular Highlife Night tickets (paid).
func (s *served) highlife(qty int) map[string]any {
	return s.cartFor("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", qty)
}

// pending checks body out with key and returns the order's reference
// and checkout_url: a paid cart's order waits for its payment there; a free
// one is paid at once and has none.
func (s *served) pending(t testing.TB, key string, body map[string]any) (ref, checkoutURL string) {
	t.Helper()
	res := s.checkout(t, key, body)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	checkoutURL, _ = res.data()["checkout_url"].(string)
	return res.data()["order_reference"].(string), checkoutURL
}

// emitFree makes a sandbox free order, whose order.paid is emitted at once.
func (s *served) emitFree(t testing.TB) string {
	t.Helper()
	ref, _ := s.pending(t, s.testKey, s.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
	return ref
}

// freeTickets checks out qty free wristbands of Chale Wote's first day
// with an app key and returns the order's tickets.
func (s *served) freeTickets(t testing.TB, key string, qty int) []map[string]any {
	t.Helper()
	ref, _ := s.pending(t, key, s.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", qty))
	order := s.do(t, http.MethodGet, "/api/v1/orders/"+ref, key, nil)
	require.Equal(t, http.StatusOK, order.Status, "%s", order.Raw)
	var out []map[string]any
	for _, tk := range order.data()["tickets"].([]any) {
		out = append(out, tk.(map[string]any))
	}
	require.Len(t, out, qty)
	return out
}

// scan is a check-in body for a code at a demo date.
func (s *served) scan(code, date string, more ...any) map[string]any {
	b := map[string]any{"code": code, "eventdate_id": s.demo.Catalog.EventDates[date]}
	for i := 0; i+1 < len(more); i += 2 {
		b[more[i].(string)] = more[i+1]
	}
	return b
}

// checkIn posts a scan with a scanner key.
func (s *served) checkIn(t testing.TB, key string, body map[string]any) *answer {
	t.Helper()
	return s.do(t, http.MethodPost, "/api/v1/check-ins", key, body)
}

// orderStatus is an order's status as its app reads it from the API.
func (s *served) orderStatus(t testing.TB, ref string) string {
	t.Helper()
	key := s.testKey
	if strings.HasPrefix(ref, "ord_") {
		key = s.liveKey
	}
	return s.do(t, http.MethodGet, "/api/v1/orders/"+ref, key, nil).data()["status"].(string)
}

// ticket reads a demo ticket's stock row.
func (s *served) ticket(t testing.TB, ref string) store.Ticket {
	t.Helper()
	var tk store.Ticket
	require.NoError(t, s.db.NewSelect().Model(&tk).Where("id = ?", s.demo.Catalog.Tickets[ref]).Scan(context.Background()))
	return tk
}

// noRedirects is an HTTP client that shows redirects instead of following
// them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// local turns a URL the service handed out (PUBLIC_BASE_URL is
// http://boxoffice.test here) into one of the test server.
func (s *served) local(u string) string {
	return strings.Replace(u, "http://boxoffice.test", s.srv.URL, 1)
}

// press submits a page's form and returns where it redirects.
func (s *served) press(t testing.TB, u string, form url.Values) string {
	t.Helper()
	res, err := noRedirects.PostForm(s.local(u), form)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "POST %s", u)
	return res.Header.Get("Location")
}

// browse GETs a page and returns its text.
func (s *served) browse(t testing.TB, u string) string {
	t.Helper()
	res, err := noRedirects.Get(s.local(u))
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}

// emitTest emits a webhook.test event of the demo app and returns its id.
func (s *served) emitTest(t testing.TB, env string) string {
	t.Helper()
	// A test event needs a webhook URL (webhook.Service.EmitTest); the
	// demo app has none. No delivery job runs unless a test starts them,
	// and then it points the app elsewhere.
	_, err := s.db.NewUpdate().Model((*store.App)(nil)).Set("webhook_url = ?", "https://hooks.partner.example/in").
		Where("id = ? AND (webhook_url IS NULL OR webhook_url = '')", s.demo.App.App.ID).Exec(context.Background())
	require.NoError(t, err)
	id, err := s.m.Webhooks.EmitTest(context.Background(), s.demo.App.App.ID, env)
	require.NoError(t, err)
	return id
}

// eventOf is the webhook event whose payload names ref.
func (s *served) eventOf(t testing.TB, ref string) *store.WebhookEvent {
	t.Helper()
	var e store.WebhookEvent
	require.NoError(t, s.db.NewSelect().Model(&e).Where("payload LIKE ?", "%"+ref+"%").Scan(context.Background()))
	return &e
}

// streamsClosed waits until the server has noticed that every event
// stream of the demo app is closed, so the next ones count from zero.
func (s *served) streamsClosed(t testing.TB) {
	t.Helper()
	waitFor(t, 10*time.Second, "the demo app's streams to close", func() bool {
		return s.m.Streams.Open(s.demo.App.App.ID) == 0
	})
}

// syncBuffer is a buffer a command writes to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
