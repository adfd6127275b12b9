package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestObservability(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t, "sqlite")
	logs := &syncBuffer{}
	cfg := DefaultConfig()
	clock := &testClock{t: time.Now()}
	cfg.ReadyClock = clock.Now
	m, err := New(cfg, db, slog.New(slog.NewJSONHandler(logs, nil)))
	require.NoError(t, err)
	require.NoError(t, m.Migrate(context.Background()))
	demo, err := seed.Demo(context.Background(), db, m.Provision, m.Now())
	require.NoError(t, err)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	admin := httptest.NewServer(m.AdminHandler())
	defer admin.Close()
	tb := &testBundle{m: m, db: db, srv: srv, demo: demo, testKey: demo.App.TestKey, liveKey: demo.App.LiveKey}

	t.Run("Health", func(t *testing.T) {
		res := tb.get(t, "/healthz", "")
		require.Equal(t, 200, res.Status)
		require.Equal(t, "ok", res.Body["status"])
		res = tb.get(t, "/readyz", "")
		require.Equal(t, 200, res.Status)
		require.Equal(t, "ready", res.Body["status"])
	})

	// Some traffic to observe.
	require.Equal(t, 200, tb.get(t, "/api/v1/events", tb.testKey).Status)
	require.Equal(t, 401, tb.get(t, "/api/v1/events", "").Status)
	require.Equal(t, 201, tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).Status)
	require.Equal(t, 409, tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)).Status)
	// Two tickets issued, one admitted at the door, then refused as inside,
	// with the code as printed.
	tickets := tb.freeTickets(t, tb.testKey, 2)
	scanner, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", "test")
	code := tickets[0]["code"].(string)
	require.Equal(t, "admitted", tb.checkIn(t, scanner, tb.scan(code, "DEMO-CHALEWOTE-1")).data()["result"])
	require.Equal(t, "already_checked_in", tb.checkIn(t, scanner, tb.scan(strings.ToLower(code[:4]+" "+code[4:]), "DEMO-CHALEWOTE-1")).data()["reason"])

	t.Run("Metrics", func(t *testing.T) {
		text := scrape(t, admin.URL)
		for _, want := range []string{
			`boxoffice_http_requests_total{method="GET",route="/api/v1/events",status="200"} 1`,
			`boxoffice_http_requests_total{method="GET",route="/api/v1/events",status="401"} 1`,
			`boxoffice_http_request_duration_seconds_bucket{method="POST",route="/api/v1/checkout-sessions",status="201",le="+Inf"} 2`,
			`boxoffice_checkout_outcomes_total{environment="test",outcome="created"} 2`,
			`boxoffice_checkout_outcomes_total{environment="test",outcome="sold_out"} 1`,
			`boxoffice_tickets_issued_total{environment="test"} 2`,
			`boxoffice_tickets_issued_total{environment="live"} 0`,
			`boxoffice_check_ins_total{reason="none",result="admitted"} 1`,
			`boxoffice_check_ins_total{reason="already_checked_in",result="rejected"} 1`,
			`boxoffice_check_ins_total{reason="void",result="rejected"} 0`,
			`boxoffice_jobs{state="available"} `,
			`boxoffice_jobs{state="completed"} `,
			`go_sql_max_open_connections{db_name="boxoffice"} 1`,
			`go_goroutines`,
		} {
			require.Contains(t, text, want)
		}
	})

	t.Run("RequestLogs", func(t *testing.T) {
		var lines []map[string]any
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var line map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &line), "logs are JSON: %s", sc.Text())
			if line["msg"] == "request" {
				lines = append(lines, line)
			}
		}
		var events, checkout map[string]any
		for _, l := range lines {
			if l["route"] == "/api/v1/events" && l["status"] == 200.0 {
				events = l
			}
			if l["route"] == "/api/v1/checkout-sessions" && l["status"] == 201.0 {
				checkout = l
			}
		}
		require.NotNil(t, events, "one line per request")
		require.NotEmpty(t, events["request_id"])
		require.Equal(t, "GET", events["method"])
		require.Contains(t, events, "latency_ms")
		require.Equal(t, float64(demo.App.App.ID), events["app_id"])
		require.Equal(t, "test", events["environment"])
		require.NotNil(t, checkout)
		for _, secret := range []string{demo.App.TestKey, demo.App.LiveKey, demo.App.WebhookSecret, "ama@example.com", "Ama Mensah", "024 123 4567"} {
			require.NotContains(t, logs.String(), secret, "logs never carry keys, secrets or personal data")
		}
	})

	t.Run("ErrNotReady", func(t *testing.T) {
		require.NoError(t, db.Close())
		clock.Add(time.Second) // /readyz answers from a state at most a second old
		res := tb.get(t, "/readyz", "")
		require.Equal(t, 503, res.Status)
		require.Equal(t, "not_ready", res.Body["status"])
		require.Equal(t, 200, tb.get(t, "/healthz", "").Status, "the process is still up")
	})
}

// scrape returns the metrics page of an admin listener.
func scrape(t testing.TB, adminURL string) string {
	t.Helper()
	res, err := http.Get(adminURL + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(body)
}

// send makes a request outside the REST contract check (odd methods,
// HEAD) and returns the answer with its body read.
func send(t testing.TB, method, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, body
}

func TestMetricsAreBounded(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	admin := httptest.NewServer(tb.m.AdminHandler())
	t.Cleanup(admin.Close)
	series := func() int {
		mfs, err := tb.m.Metrics.Registry.Gather()
		require.NoError(t, err)
		n := 0
		for _, mf := range mfs {
			n += len(mf.GetMetric())
		}
		return n
	}

	t.Run("KnownSeriesStartAtZero", func(t *testing.T) {
		text := scrape(t, admin.URL)
		for _, want := range []string{
			`boxoffice_webhook_deliveries_total{outcome="delivered"} 0`,
			`boxoffice_webhook_deliveries_total{outcome="retry"} 0`,
			`boxoffice_webhook_deliveries_total{outcome="failed"} 0`,
			`boxoffice_webhook_deliveries_total{outcome="listen_only"} 0`,
			`boxoffice_ticket_emails_total{outcome="sent"} 0`,
			`boxoffice_ticket_emails_total{outcome="retry"} 0`,
			`boxoffice_ticket_emails_total{outcome="failed"} 0`,
			`boxoffice_tickets_issued_total{environment="live"} 0`,
			`boxoffice_check_ins_total{reason="none",result="admitted"} 0`,
			`boxoffice_check_ins_total{reason="unknown_code",result="rejected"} 0`,
			`boxoffice_checkout_outcomes_total{environment="live",outcome="created"} 0`,
			`boxoffice_checkout_outcomes_total{environment="test",outcome="sold_out"} 0`,
			`boxoffice_checkout_outcomes_total{environment="live",outcome="rate_limit_exceeded"} 0`,
		} {
			require.Contains(t, text, want+"\n")
		}
	})
	t.Run("MadeUpMethods", func(t *testing.T) {
		// A request is counted just after its answer is sent: wait for it.
		counted := func(n int) {
			want := fmt.Sprintf(`boxoffice_http_requests_total{method="OTHER",route="unmatched",status="405"} %d`+"\n", n)
			waitFor(t, 5*time.Second, want, func() bool { return strings.Contains(scrape(t, admin.URL), want) })
		}
		res, _ := send(t, "BREW", tb.srv.URL+"/api/v1/events")
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
		counted(1)
		before := series()
		for i := range 500 {
			path := []string{"/api/v1/events", "/graphql", fmt.Sprintf("/made/up/%d", i)}[i%3]
			res, _ := send(t, fmt.Sprintf("M%dX", i), tb.srv.URL+path)
			require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
		}
		counted(501)
		require.Equal(t, before, series(), "made-up methods and paths add no series")
	})
	t.Run("NotOnPublicPort", func(t *testing.T) {
		res := tb.get(t, "/metrics", "")
		require.Equal(t, http.StatusNotFound, res.Status)
		require.Equal(t, "not_found", res.errorCode())
		require.NotContains(t, string(res.Raw), "boxoffice_")
		for _, path := range []string{"/healthz", "/readyz"} {
			require.Equal(t, http.StatusOK, tb.get(t, path, "").Status, "%s stays on the public port", path)
			res, _ := send(t, "GET", admin.URL+path)
			require.Equal(t, http.StatusOK, res.StatusCode, "%s is on the admin listener too", path)
		}
	})
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	m, err := New(DefaultConfig(), storetest.MustOpen(t, "sqlite"), slog.New(slog.NewJSONHandler(logs, nil)))
	require.NoError(t, err)
	t.Cleanup(m.Listener.Close)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	// requestIDs returns the request_id of every request line logged so far.
	requestIDs := func() []string {
		var ids []string
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var line map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
			if line["msg"] == "request" {
				ids = append(ids, line["request_id"].(string))
			}
		}
		return ids
	}
	tests := []struct {
		name, header string
		kept         bool
	}{
		{"OK", "req-7f3a.B_9", true},
		{"OKLongest", strings.Repeat("a", 128), true},
		{"ErrTooLong", strings.Repeat("a", 129), false},
		{"ErrHuge", strings.Repeat("x", 900<<10), false},
		{"ErrBadCharacters", "id with spaces<script>", false},
		{"ErrTab", "id\ttab", false},
		{"ErrUnicode", "idé", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := send(t, "GET", srv.URL+"/healthz", "X-Request-Id", tt.header)
			require.Equal(t, http.StatusOK, res.StatusCode)
			// The line is written just after the answer.
			waitFor(t, 5*time.Second, "the request line", func() bool { return len(requestIDs()) == i+1 })
			got := requestIDs()[i]
			if tt.kept {
				require.Equal(t, tt.header, got)
				return
			}
			require.NotEqual(t, tt.header, got)
			require.Regexp(t, `^[A-Za-z0-9._-]{1,128}$`, got, "a fresh id replaces it")
		})
	}
	require.NotContains(t, logs.String(), strings.Repeat("x", 129), "nothing of the huge header reaches the log")
}
