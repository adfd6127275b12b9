package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// scaleOrders is how many orders TestOrderSyncAtScale gives one app.
const scaleOrders = 1_000_000

// TestOrderSyncAtScale (BOXOFFICE_SCALE_TEST=1, PostgreSQL): with a
// million orders for one app, a page of 100 of the order list (with and
// without filters) and of the changes feed takes under 20 ms of server
// time (the handler, from request to the last byte written, without the
// network). Seeding takes a few minutes, so it runs only when asked:
//
//	BOXOFFICE_SCALE_TEST=1 TEST_DATABASE_URL=postgres://… go test -run TestOrderSyncAtScale -v ./cmd/boxoffice/
//
// It logs each page's median and 95th percentile and the plans
// (EXPLAIN ANALYZE) of the list at a deep cursor and of the feed.
func TestOrderSyncAtScale(t *testing.T) {
	if os.Getenv("BOXOFFICE_SCALE_TEST") != "1" {
		t.Skip("set BOXOFFICE_SCALE_TEST=1 (and TEST_DATABASE_URL) to seed a million orders and time their pages")
	}
	if !slices.Contains(storetest.Kinds(), "postgres") {
		t.Fatal("BOXOFFICE_SCALE_TEST needs TEST_DATABASE_URL: the figure is PostgreSQL's")
	}
	db := storetest.MustOpen(t, "postgres")
	tb := setup(t, db)
	ctx := context.Background()
	ids := tb.demo.Catalog
	app := tb.demo.App.App.ID

	// A million test orders of the demo app over three dates of two
	// events, five statuses, one a second back from now, each with one
	// item; the triggers log each insert as a change, as for any write.
	t0 := time.Now()
	dates := []int64{ids.EventDates["DEMO-HIGHLIFE-1"], ids.EventDates["DEMO-MOVIES-1"], ids.EventDates["DEMO-MOVIES-2"]}
	events := []int64{ids.Events["DEMO-HIGHLIFE"], ids.Events["DEMO-MOVIES"], ids.Events["DEMO-MOVIES"]}
	tickets := []int64{ids.Tickets["DEMO-HIGHLIFE-REG"], ids.Tickets["DEMO-MOVIES-1-SEAT"], ids.Tickets["DEMO-MOVIES-2-SEAT"]}
	const batch = 100_000
	for from := 1; from <= scaleOrders; from += batch {
		_, err := db.ExecContext(ctx, `INSERT INTO orders (reference, app_id, environment, status, event_id, event_date_id,
				currency, total_amount, requires_payment, holds_stock, customer_name, customer_email, customer_phone,
				metadata, success_url, cancel_url, tickets_email_status, created_at, updated_at)
			SELECT 'sbx_scale' || lpad(g::text, 8, '0'), ?, 'test',
				(ARRAY['paid', 'pending', 'expired', 'failed', 'paid'])[1 + g % 5],
				(ARRAY[?, ?, ?]::bigint[])[1 + g % 3], (ARRAY[?, ?, ?]::bigint[])[1 + g % 3],
				'GHS', 15000, true, false, 'Ama Mensah', 'ama@example.com', '+233241234567',
				'{"cart": "c-77"}', 'https://partner.example/done', 'https://partner.example/cancel', 'not_sent',
				now() - make_interval(secs => ? - g), now() - make_interval(secs => ? - g)
			FROM generate_series(?::int, ?::int) AS g`,
			app, events[0], events[1], events[2], dates[0], dates[1], dates[2], scaleOrders, scaleOrders, from, from+batch-1)
		require.NoError(t, err)
	}
	_, err := db.ExecContext(ctx, `INSERT INTO order_items (order_id, ticket_id, name, quantity, unit_price)
		SELECT id, (ARRAY[?, ?, ?]::bigint[])[1 + substr(reference, 10)::int % 3], 'Regular', 1, 15000
		FROM orders WHERE reference LIKE 'sbx_scale%'`, tickets[0], tickets[1], tickets[2])
	require.NoError(t, err)
	for _, table := range []string{"orders", "order_items", "order_changes", "issued_tickets"} {
		_, err := db.ExecContext(ctx, "ANALYZE "+table)
		require.NoError(t, err)
	}
	t.Logf("seeded %d orders with their items and changes in %s", scaleOrders, time.Since(t0).Round(time.Second))
	storetest.ChangesSettled(t, db)

	h := tb.m.Handler()
	serve := func(path string) (time.Duration, map[string]any) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("X-API-Key", tb.testKey)
		w := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(w, req)
		took := time.Since(start)
		require.Equal(t, http.StatusOK, w.Code, "%s", w.Body)
		var body map[string]any
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
		require.Len(t, body["data"], 100, path)
		return took, body
	}
	// time follows a chain of pages: first, then what next(body) names.
	timeChain := func(name, first string, next func(map[string]any) string) {
		t.Helper()
		const pages = 60
		var took []time.Duration
		path := first
		for range pages {
			d, body := serve(path)
			took = append(took, d)
			path = next(body)
		}
		slices.Sort(took[10:]) // the first ten warm the caches of both sides
		took = took[10:]
		p50, p95 := took[len(took)/2], took[len(took)*95/100]
		t.Logf("%-58s median %6.2f ms   p95 %6.2f ms", name, ms(p50), ms(p95))
		require.Less(t, p50, 20*time.Millisecond, "%s: a page of 100 under 20 ms", name)
	}
	cursor := func(base string) func(map[string]any) string {
		return func(b map[string]any) string {
			return base + "&cursor=" + b["meta"].(map[string]any)["next_cursor"].(string)
		}
	}
	for _, q := range []string{
		"limit=100",
		"limit=100&status=failed",
		fmt.Sprintf("limit=100&event_id=%d", events[1]),
		fmt.Sprintf("limit=100&eventdate_id=%d&status=pending", dates[2]),
	} {
		base := "/api/v1/orders?" + q
		timeChain("GET "+base, base, cursor(base))
	}
	timeChain("GET /api/v1/order-changes?limit=100", "/api/v1/order-changes?limit=100", func(b map[string]any) string {
		return "/api/v1/order-changes?limit=100&since=" + b["meta"].(map[string]any)["next_since"].(string)
	})

	// The plans, at a key half a million orders deep.
	var deep store.Order
	require.NoError(t, db.NewSelect().Model(&deep).Where("reference = ?", fmt.Sprintf("sbx_scale%08d", scaleOrders/2)).Scan(ctx))
	explain := func(name, query string, args ...any) {
		t.Helper()
		var lines []string
		require.NoError(t, db.NewRaw("EXPLAIN (ANALYZE, BUFFERS) "+query, args...).Scan(ctx, &lines))
		t.Logf("%s:\n    %s", name, strings.Join(lines, "\n    "))
	}
	explain("the list, 500,000 orders deep", `SELECT o.* FROM orders AS o
		WHERE o.app_id = ? AND o.environment = 'test' AND (o.created_at, o.reference) < (?, ?)
		ORDER BY o.created_at DESC, o.reference DESC LIMIT 101`, app, deep.CreatedAt, deep.Reference)
	explain("the list by date and status, 500,000 orders deep", `SELECT o.* FROM orders AS o
		WHERE o.app_id = ? AND o.environment = 'test' AND o.event_date_id = ? AND o.status = 'pending'
			AND (o.created_at, o.reference) < (?, ?)
		ORDER BY o.created_at DESC, o.reference DESC LIMIT 101`, app, dates[2], deep.CreatedAt, deep.Reference)
	var mid struct {
		Tx  string `bun:"tx"`
		Seq int64  `bun:"seq"`
	}
	require.NoError(t, db.NewRaw("SELECT tx::text AS tx, seq FROM order_changes WHERE order_id = ?", deep.ID).Scan(ctx, &mid))
	explain("the feed, from the middle", `SELECT o.*, c.tx::text AS change_tx, c.seq AS change_seq
		FROM orders AS o JOIN order_changes AS c ON c.order_id = o.id
		WHERE c.app_id = ? AND c.environment = 'test' AND (c.tx, c.seq) > (?::xid8, ?)
			AND c.tx < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY c.tx, c.seq LIMIT 101`, app, mid.Tx, mid.Seq)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
