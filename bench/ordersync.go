package main

// ordersync.go: order sync at scale (issue 25, item 5): the bench app gets
// BENCH_ORDERS test orders by INSERT … SELECT generate_series (as
// cmd/boxoffice's TestOrderSyncAtScale seeds them), and pages of 100 of
// GET /api/v1/orders and GET /api/v1/order-changes are timed as server time:
// the latency_ms the server logs for each request, found by the
// X-Request-Id the bench sends.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// targetSyncP50 is a page of 100's server time at the median.
const targetSyncP50 = 20 * time.Millisecond

// syncPages is how many pages each chain follows; the first syncWarm of
// every chain warm the caches and are not counted.
const (
	syncPages = 60
	syncWarm  = 10
)

// The order sync routes, in report order.
const (
	syncList = "GET /api/v1/orders?limit=100 (pages by cursor)"
	syncFeed = "GET /api/v1/order-changes?limit=100 (pages by next_since)"
)

var syncOrder = []string{syncList, syncFeed}

// syncChain is one chain of pages: the server time and the client's
// latency of each counted page.
type syncChain struct {
	server, client []time.Duration
}

// syncResult is the order sync rows.
type syncResult struct {
	orders  int
	seeded  time.Duration
	chains  map[string][]syncChain // by route, one chain per round
	ran     bool
	missing int // counted pages whose log line was not found
}

// seedOrders gives the bench app n test orders over three dates of two
// events, five statuses, one a second back from now, one item each, in
// batches of 100,000 (one statement each: the order rows and their items;
// the change log's trigger runs as for any insert), then ANALYZEs.
func seedOrders(ctx context.Context, dbURL string, sd *seeded, n int) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	dates := []int64{sd.ids.EventDates["BEV-0004-D1"], sd.ids.EventDates["BEV-0005-D1"], sd.ids.EventDates["BEV-0005-D2"]}
	events := []int64{sd.ids.Events["BEV-0004"], sd.ids.Events["BEV-0005"], sd.ids.Events["BEV-0005"]}
	tickets := []int64{sd.ids.Tickets["BEV-0004-D1-REG"], sd.ids.Tickets["BEV-0005-D1-REG"], sd.ids.Tickets["BEV-0005-D2-REG"]}
	const batch = 100_000
	for from := 1; from <= n; from += batch {
		to := min(from+batch-1, n)
		_, err := conn.Exec(ctx, `WITH o AS (
				INSERT INTO orders (reference, app_id, environment, status, event_id, event_date_id,
					currency, total_amount, requires_payment, holds_stock, customer_name, customer_email, customer_phone,
					metadata, success_url, cancel_url, tickets_email_status, created_at, updated_at)
				SELECT 'sbx_bench' || lpad(g::text, 8, '0'), $1, 'test',
					(ARRAY['paid', 'pending', 'expired', 'failed', 'paid'])[1 + g % 5],
					($2::bigint[])[1 + g % 3], ($3::bigint[])[1 + g % 3],
					'GHS', 15000, true, false, 'Ama Mensah', 'ama@example.com', '+233241234567',
					'{"cart": "c-77"}', 'https://partner.example/done', 'https://partner.example/cancel', 'not_sent',
					now() - make_interval(secs => $4 - g), now() - make_interval(secs => $4 - g)
				FROM generate_series($5::int, $6::int) AS g
				RETURNING id, reference)
			INSERT INTO order_items (order_id, ticket_id, name, quantity, unit_price)
			SELECT id, ($7::bigint[])[1 + substr(reference, 10)::int % 3], 'Regular', 1, 15000 FROM o`,
			sd.appID, events, dates, n, from, to, tickets)
		if err != nil {
			return fmt.Errorf("seeding orders %d–%d: %w", from, to, err)
		}
	}
	for _, t := range []string{"orders", "order_items", "order_changes", "issued_tickets"} {
		if _, err := conn.Exec(ctx, "ANALYZE "+t); err != nil {
			return err
		}
	}
	return nil
}

// syncRound follows one chain of pages of route, sequentially, and returns
// the server and client times of the pages after the warm-up ones.
func syncRound(base, key, route, logPath string, round int) (syncChain, int, error) {
	path := "/api/v1/orders?limit=100"
	if route == syncFeed {
		path = "/api/v1/order-changes?limit=100"
	}
	first := path
	prefix := fmt.Sprintf("bench-sync-%d-%d-%s", time.Now().UnixNano(), round, map[string]string{syncList: "list", syncFeed: "feed"}[route])
	var ids []string
	var client []time.Duration
	for p := range syncPages {
		id := fmt.Sprintf("%s-%d", prefix, p)
		e := endpoint{name: "sync", method: http.MethodGet, want: http.StatusOK, target: func(_ uint64, t *vegeta.Target) {
			t.URL, t.Header = base+path, header("X-API-Key", key, "X-Request-Id", id)
		}}
		t0 := time.Now()
		code, body, _, err := do(e, 0)
		took := time.Since(t0)
		if err != nil || code != http.StatusOK {
			return syncChain{}, 0, fmt.Errorf("%s: %d %v %.300s", path, code, err, body)
		}
		var page struct {
			Data []json.RawMessage `json:"data"`
			Meta struct {
				NextCursor string `json:"next_cursor"`
				NextSince  string `json:"next_since"`
			} `json:"meta"`
		}
		if err := json.Unmarshal(body, &page); err != nil || len(page.Data) != 100 {
			return syncChain{}, 0, fmt.Errorf("%s: a page of %d orders, want 100: %.300s", path, len(page.Data), body)
		}
		if p >= syncWarm {
			ids = append(ids, id)
			client = append(client, took)
		}
		if route == syncFeed {
			path = strings.SplitN(first, "&since=", 2)[0] + "&since=" + page.Meta.NextSince
		} else {
			path = first + "&cursor=" + page.Meta.NextCursor
		}
	}
	server, missing, err := serverTimes(logPath, ids)
	return syncChain{server: server, client: client}, missing, err
}

// serverTimes reads the latency_ms of the requests ids from the server's
// JSON log, waiting briefly for the last lines to be written.
func serverTimes(logPath string, ids []string) ([]time.Duration, int, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var out []time.Duration
	for attempt := 0; attempt < 20; attempt++ {
		out = out[:0]
		f, err := os.Open(logPath)
		if err != nil {
			return nil, 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !strings.Contains(string(line), "bench-sync-") {
				continue
			}
			var l struct {
				RequestID string  `json:"request_id"`
				Latency   float64 `json:"latency_ms"`
			}
			if json.Unmarshal(line, &l) == nil && want[l.RequestID] {
				out = append(out, time.Duration(l.Latency*float64(time.Millisecond)))
			}
		}
		f.Close()
		if len(out) == len(ids) {
			return out, 0, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return out, len(ids) - len(out), nil
}

// syncFigures pools every counted page of route over the rounds: median and
// p95 of the server time, the client's median, and the spread of the
// rounds' server medians.
func (r syncResult) figures(route string) (p50, p95, client time.Duration, rounds spread) {
	var all, cl []time.Duration
	var meds []float64
	for _, c := range r.chains[route] {
		all = append(all, c.server...)
		cl = append(cl, c.client...)
		s := slices.Clone(c.server)
		slices.Sort(s)
		meds = append(meds, msf(percentile(s, 0.5)))
	}
	slices.Sort(all)
	slices.Sort(cl)
	return percentile(all, 0.5), percentile(all, 0.95), percentile(cl, 0.5), spreadOf(meds)
}
