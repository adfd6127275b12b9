package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/live"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/require"
)

// liveWait is the longest a message takes on a quiet machine: PostgreSQL's
// NOTIFY or SQLite's poll. Waits give up only at testwait's deadline for
// it, minutes away, so a loaded machine never changes a verdict.
const liveWait = 15 * time.Second

// liveMsg is one graphql-transport-ws message.
type liveMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// liveClient is a graphql-transport-ws client over a real socket: a
// reader goroutine answers pings and queues every other message.
type liveClient struct {
	t       testing.TB
	conn    *websocket.Conn
	msgs    chan liveMsg
	done    chan struct{} // the reader ended; err says why
	err     error
	pending map[string][]liveMsg
	// wait bounds each wait for a message; liveWait unless a test says.
	wait time.Duration
}

// dialLive opens a socket to srv's /graphql and sends connection_init
// with payload. It returns the server's close error when the server
// refuses the connection.
func dialLive(t testing.TB, srvURL string, payload any) (*liveClient, error) {
	t.Helper()
	ctx, cancel := testwait.Context(t, liveWait)
	defer cancel()
	conn, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srvURL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	require.NoError(t, err)
	require.Equal(t, "graphql-transport-ws", res.Header.Get("Sec-WebSocket-Protocol"))
	c := &liveClient{t: t, conn: conn, msgs: make(chan liveMsg, 64), done: make(chan struct{}), pending: map[string][]liveMsg{}, wait: liveWait}
	t.Cleanup(func() { c.close() })
	go c.read()
	c.send(liveMsg{Type: "connection_init", Payload: rawJSON(t, payload)})
	select {
	case m := <-c.msgs:
		require.Equal(t, "connection_ack", m.Type, "%s", m.Payload)
		return c, nil
	case <-c.done:
		return nil, c.err
	case <-testwait.After(t, liveWait):
		t.Fatal("no connection_ack")
		return nil, nil
	}
}

func rawJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func (c *liveClient) read() {
	defer close(c.done)
	for {
		var m liveMsg
		if err := wsjson.Read(context.Background(), c.conn, &m); err != nil {
			c.err = err
			return
		}
		if m.Type == "ping" {
			_ = wsjson.Write(context.Background(), c.conn, liveMsg{Type: "pong"})
			continue
		}
		c.msgs <- m
	}
}

func (c *liveClient) send(m liveMsg) {
	c.t.Helper()
	require.NoError(c.t, wsjson.Write(context.Background(), c.conn, m))
}

// subscribe starts operation id.
func (c *liveClient) subscribe(id, query string, vars map[string]any) {
	c.t.Helper()
	c.send(liveMsg{ID: id, Type: "subscribe", Payload: rawJSON(c.t, map[string]any{"query": query, "variables": vars})})
}

// complete stops operation id.
func (c *liveClient) complete(id string) {
	c.t.Helper()
	c.send(liveMsg{ID: id, Type: "complete"})
}

// recv returns the next message of operation id.
func (c *liveClient) recv(id string) liveMsg {
	c.t.Helper()
	for {
		if q := c.pending[id]; len(q) > 0 {
			c.pending[id] = q[1:]
			return q[0]
		}
		select {
		case m := <-c.msgs:
			c.pending[m.ID] = append(c.pending[m.ID], m)
		case <-c.done:
			c.t.Fatalf("socket closed waiting for %s: %v", id, c.err)
		case <-testwait.After(c.t, c.wait):
			c.t.Fatalf("no message for %s (on a quiet machine within %s)", id, c.wait)
		}
	}
}

// next returns the data of the next result of operation id, which must
// have no errors.
func (c *liveClient) next(id string) map[string]any {
	c.t.Helper()
	m := c.recv(id)
	require.Equal(c.t, "next", m.Type, "%s", m.Payload)
	var res struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	require.NoError(c.t, json.Unmarshal(m.Payload, &res))
	require.Empty(c.t, res.Errors, "%s", m.Payload)
	return res.Data
}

// refused reads the answer to an operation the server refuses: its
// errors (a next carrying them, or an error message), then complete.
func (c *liveClient) refused(id string) map[string]any {
	c.t.Helper()
	m := c.recv(id)
	var errs []map[string]any
	switch m.Type {
	case "next":
		var res struct {
			Errors []map[string]any `json:"errors"`
		}
		require.NoError(c.t, json.Unmarshal(m.Payload, &res))
		errs = res.Errors
		require.Equal(c.t, "complete", c.recv(id).Type)
	case "error":
		require.NoError(c.t, json.Unmarshal(m.Payload, &errs))
	default:
		c.t.Fatalf("want errors for %s, got %s %s", id, m.Type, m.Payload)
	}
	require.Len(c.t, errs, 1)
	return errs[0]
}

func (c *liveClient) close() {
	_ = c.conn.Close(websocket.StatusNormalClosure, "")
	<-c.done
}

const (
	availabilitySub = `subscription($d: Int!) { availabilityChanged(eventDateId: $d) { eventDateId tickets { ticketId quantityAvailable } } }`
	orderSub        = `subscription($r: String!) { orderUpdated(reference: $r) { reference status statusCode paymentReference } }`
)

// availability is each ticket's quantityAvailable in an availabilityChanged result.
func availability(t testing.TB, data map[string]any) map[int64]float64 {
	t.Helper()
	out := map[int64]float64{}
	for _, tk := range data["availabilityChanged"].(map[string]any)["tickets"].([]any) {
		m := tk.(map[string]any)
		out[int64(m["ticketId"].(float64))] = m["quantityAvailable"].(float64)
	}
	return out
}

// liveSetup is setup with SQLite polled briskly.
func liveSetup(t testing.TB, db *store.DB, opts ...func(*Config)) *testBundle {
	return setup(t, db, append([]func(*Config){func(c *Config) { c.Live.PollInterval = 20 * time.Millisecond }}, opts...)...)
}

// TestSubscriptions runs both subscriptions over real sockets: the
// current value first, then each change made through the API.
func TestSubscriptions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := liveSetup(t, db)
		ids := tb.demo.Catalog
		date, reg, vip := ids.EventDates["DEMO-HIGHLIFE-1"], ids.Tickets["DEMO-HIGHLIFE-REG"], ids.Tickets["DEMO-HIGHLIFE-VIP"]

		t.Run("AvailabilityChanged", func(t *testing.T) {
			c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
			require.NoError(t, err)
			c.subscribe("a", availabilitySub, map[string]any{"d": date})
			first := c.next("a")
			require.Equal(t, float64(date), first["availabilityChanged"].(map[string]any)["eventDateId"])
			require.Equal(t, map[int64]float64{reg: 800 - 214, vip: 60 - 12}, availability(t, first))

			// A live checkout holds 3 regular tickets.
			res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(3))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Equal(t, map[int64]float64{reg: 800 - 214 - 3, vip: 48}, availability(t, c.next("a")))

			// So does a catalog change of the quantity, by any writer.
			_, err = db.NewUpdate().Model((*store.Ticket)(nil)).Set("quantity = quantity + 10").Where("id = ?", vip).Exec(context.Background())
			require.NoError(t, err)
			require.Equal(t, map[int64]float64{reg: 583, vip: 58}, availability(t, c.next("a")))

			c.complete("a")
			require.Equal(t, "complete", c.recv("a").Type)
		})

		t.Run("OrderUpdated", func(t *testing.T) {
			sess := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).data()
			ref := sess["order_reference"].(string)
			c, err := dialLive(t, tb.srv.URL, map[string]any{"apiKey": tb.testKey})
			require.NoError(t, err)
			c.subscribe("o", orderSub, map[string]any{"r": ref})
			require.Equal(t, map[string]any{"reference": ref, "status": "PENDING", "statusCode": 1.0, "paymentReference": nil},
				c.next("o")["orderUpdated"], "statuses are GraphQL enums")
			require.Equal(t, http.StatusSeeOther, tb.submitOutcome(t, sess["checkout_url"].(string), "paid").StatusCode)
			got := c.next("o")["orderUpdated"].(map[string]any)
			require.Equal(t, "PAID", got["status"])
			require.Equal(t, 2.0, got["statusCode"])
		})

		t.Run("Errors", func(t *testing.T) {
			live := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).data()["order_reference"].(string)
			c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
			require.NoError(t, err)
			for _, tc := range []struct {
				id, query, code string
				vars            map[string]any
				status          float64
			}{
				{"mismatch", orderSub, "environment_mismatch", map[string]any{"r": live}, 403},
				{"unknown", orderSub, "order_not_found", map[string]any{"r": "sbx_nope"}, 404},
				{"nodate", availabilitySub, "event_date_not_found", map[string]any{"d": 999999}, 404},
				{"hidden", availabilitySub, "event_date_not_found", map[string]any{"d": ids.EventDates["DEMO-HIDDEN-1"]}, 404},
				{"query", `{ events { nodes { id } } }`, "validation_failed", nil, 422},
			} {
				t.Run(tc.id, func(t *testing.T) {
					c.subscribe(tc.id, tc.query, tc.vars)
					e := c.refused(tc.id)
					ext := e["extensions"].(map[string]any)
					require.Equal(t, tc.code, ext["code"], "%v", e)
					// No HTTP status travels over the socket: extensions.status
					// is sent only with the HTTP status it equals.
					require.NotContains(t, ext, "status", "%v (REST would answer %v)", e, tc.status)
				})
			}
			// The socket still serves.
			c.subscribe("ok", availabilitySub, map[string]any{"d": date})
			c.next("ok")
		})

		t.Run("ErrSubscriptionOverHTTP", func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, orderSub, map[string]any{"r": "sbx_x"})
			ext := res.gqlErrorExt(t)
			require.Equal(t, "validation_failed", ext["code"], "%s", res.Raw)
			require.Contains(t, string(res.Raw), "WebSocket")
		})
	})
}

// TestSubscriptionAdmission: connection_init is admitted like a request (key,
// failed-auth bucket) and refusals close the socket with
// graphql-transport-ws close codes; each app's connections and
// subscriptions are bounded.
func TestSubscriptionAdmission(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := liveSetup(t, db, limits(4, 1<<20, 1<<20, 1<<20), func(c *Config) {
			c.Live.MaxConnections, c.Live.MaxSubscriptions = 2, 3
		})
		closed := func(t *testing.T, err error, code websocket.StatusCode, reason string) {
			t.Helper()
			var ce websocket.CloseError
			require.True(t, errors.As(err, &ce), "want a close, got %v", err)
			require.Equal(t, code, ce.Code)
			require.Equal(t, reason, ce.Reason)
		}

		t.Run("ErrNoInit", func(t *testing.T) {
			// A server of its own that waits 200 ms for connection_init.
			// The others keep the default: beside the rest of the suite a
			// client's init has taken longer than 200 ms to be read, and
			// ErrRefused got this test's close (1002) instead of 4401.
			quick := liveSetup(t, storetest.MustOpen(t, dbKind(db)), func(c *Config) { c.LiveInitTimeout = 200 * time.Millisecond })
			ctx, cancel := testwait.Context(t, liveWait)
			defer cancel()
			conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(quick.srv.URL, "http")+"/graphql",
				&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			require.NoError(t, err)
			defer conn.CloseNow()
			_, _, err = conn.Read(ctx)
			require.Equal(t, websocket.StatusProtocolError, websocket.CloseStatus(err), "%v", err)
		})
		t.Run("ErrKeyRevokedSinceInit", func(t *testing.T) {
			ctx := context.Background()
			acc, err := tb.m.Provision.CreateAccount(ctx, provisionAccount("live@example.com"))
			require.NoError(t, err)
			app, err := tb.m.Provision.CreateApp(ctx, provisionApp(acc.ID))
			require.NoError(t, err)
			c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": app.TestKey})
			require.NoError(t, err)
			require.NoError(t, tb.m.Provision.RevokeKey(ctx, app.App.ID, "test"))
			c.subscribe("a", availabilitySub, map[string]any{"d": tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]})
			require.Equal(t, "invalid_api_key", c.refused("a")["extensions"].(map[string]any)["code"])
		})
		t.Run("ErrRefused", func(t *testing.T) {
			_, err := dialLive(t, tb.srv.URL, map[string]any{})
			closed(t, err, 4401, "missing_api_key: The X-API-Key header is required.")
			_, err = dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": "svc_test_nope"})
			closed(t, err, 4401, "invalid_api_key: The API key is invalid or has been revoked.")
			_, err = dialLive(t, tb.srv.URL, nil)
			closed(t, err, 4401, "missing_api_key: The X-API-Key header is required.")
			// The failed-auth bucket (4 per window, one spent by the revoked
			// key) is now empty: even a valid key from this address is
			// refused before any lookup.
			_, err = dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
			var ce websocket.CloseError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.Equal(t, websocket.StatusCode(4429), ce.Code)
			require.Regexp(t, `^rate_limit_exceeded: retry after \d+ s$`, ce.Reason)
		})
	})
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := liveSetup(t, db, func(c *Config) { c.Live.MaxConnections, c.Live.MaxSubscriptions = 2, 3 })
		date := tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]

		t.Run("ConnectionLimit", func(t *testing.T) {
			a, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
			require.NoError(t, err)
			_, err = dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
			require.NoError(t, err)
			_, err = dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
			var ce websocket.CloseError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.Equal(t, websocket.StatusCode(4429), ce.Code)
			require.True(t, strings.HasPrefix(ce.Reason, "subscription_limit_reached: This app already has 2 live connections open"), ce.Reason)
			// The live key is another tenant.
			_, err = dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.liveKey})
			require.NoError(t, err)
			// A closed socket frees its place.
			a.close()
			waitFor(t, liveWait, "the connection to be released", func() bool {
				_, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
				return err == nil
			})
		})
		t.Run("SubscriptionLimit", func(t *testing.T) {
			waitFor(t, liveWait, "sockets of the last test to close", func() bool { return tb.m.Live.Stats().Connections == 0 })
			c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
			require.NoError(t, err)
			for i := range 3 {
				id := fmt.Sprint(i)
				c.subscribe(id, availabilitySub, map[string]any{"d": date})
				c.next(id)
			}
			c.subscribe("3", availabilitySub, map[string]any{"d": date})
			e := c.refused("3")
			require.Equal(t, "subscription_limit_reached", e["extensions"].(map[string]any)["code"])
			require.NotContains(t, e["extensions"], "status", "no HTTP status travels over the socket")
			require.Equal(t, "This app already has 3 live subscriptions open on this server; complete one first.", e["message"])
			c.complete("0")
			require.Equal(t, "complete", c.recv("0").Type)
			waitFor(t, liveWait, "the subscription to be released", func() bool { return tb.m.Live.Stats().Subscriptions == 2 })
			c.subscribe("4", availabilitySub, map[string]any{"d": date})
			c.next("4")
		})
		t.Run("SocketsHoldNoExecutionSlot", func(t *testing.T) {
			// More open subscriptions than GraphQL has execution slots
			// (max(4, 2·GOMAXPROCS)): queries over HTTP still run.
			tb := liveSetup(t, db, func(c *Config) { c.Live.MaxConnections = 1 << 10 })
			for i := range 2*runtime.GOMAXPROCS(0) + 4 {
				c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
				require.NoError(t, err, "socket %d", i)
				c.subscribe("a", availabilitySub, map[string]any{"d": date})
				c.next("a")
			}
			res := tb.graphql(t, tb.testKey, `{ events(perPage: 1) { nodes { id } } }`, nil)
			require.Nil(t, res.Body["errors"], "%s", res.Raw)
		})
	})
}

// liveGoroutines counts the goroutines running WebSocket or live code.
func liveGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "boxoffice/live.") || strings.Contains(g, "handler/transport.") || strings.Contains(g, "coder/websocket") {
			n++
		}
	}
	return n
}

// listeners counts the LISTEN connections of this test's PostgreSQL schema.
func listeners(t testing.TB, db *store.DB) int {
	t.Helper()
	var n int
	require.NoError(t, db.NewRaw(`SELECT count(*) FROM pg_stat_activity
		WHERE application_name = current_setting('application_name') AND query LIKE 'LISTEN %'`).Scan(context.Background(), &n))
	return n
}

// TestSubscriptionsNoLeak: closed sockets free everything (subscriptions, topics,
// tenants' counters, the SQLite poller, their goroutines); on PostgreSQL
// the process keeps its one listening connection, however many subscribe.
func TestSubscriptionsNoLeak(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := liveSetup(t, db, func(c *Config) { c.Live.MaxConnections = 50 })
		ids := tb.demo.Catalog
		open := func(n int) []*liveClient {
			var cs []*liveClient
			for i := range n {
				c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
				require.NoError(t, err)
				c.subscribe("a", availabilitySub, map[string]any{"d": ids.EventDates["DEMO-HIGHLIFE-1"]})
				c.subscribe("b", availabilitySub, map[string]any{"d": ids.EventDates[[]string{"DEMO-MOVIES-1", "DEMO-MOVIES-2"}[i%2]]})
				c.next("a")
				c.next("b")
				cs = append(cs, c)
			}
			return cs
		}
		idle := func() {
			waitFor(t, liveWait, "the hub to be empty", func() bool { return tb.m.Live.Stats() == live.Stats{} })
		}
		for _, c := range open(1) { // starts PostgreSQL's listener
			c.close()
		}
		idle()
		if db.Postgres() {
			tb.catalogWatched(t) // the listener is connected and listening
			require.Equal(t, 1, listeners(t, db))
		}
		before := liveGoroutines()

		cs := open(10)
		s := tb.m.Live.Stats()
		require.Equal(t, live.Stats{Topics: 3, Subscriptions: 20, Connections: 10, Tenants: 1, Polling: !db.Postgres()}, s)
		if db.Postgres() {
			require.Equal(t, 1, listeners(t, db), "one listening connection per process")
		}
		for _, c := range cs {
			c.close()
		}
		idle()
		waitFor(t, liveWait, "live goroutines to end", func() bool { return liveGoroutines() <= before })
		if db.Postgres() {
			require.Equal(t, 1, listeners(t, db))
		}
	})
}

// peer starts a second instance beside tb: its own Main, server and
// database handle, on tb's database, with tb's configuration.
func (tb *testBundle) peer(t testing.TB, rawURL string) *testBundle {
	t.Helper()
	db := storetest.OpenURL(t, rawURL)
	m, err := New(tb.m.Config, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(m.Listener.Close)
	t.Cleanup(m.Live.Close)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return &testBundle{m: m, db: db, srv: srv, demo: tb.demo, testKey: tb.testKey, liveKey: tb.liveKey}
}

// TestSubscriptionsTwoInstances: a change made through instance A reaches a
// subscriber of instance B, each with its own database connections
// (PostgreSQL: B's listener hears A's transaction; SQLite: B polls the
// file A writes).
func TestSubscriptionsTwoInstances(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			rawURL := storetest.MigratedURL(t, kind)
			a := liveSetup(t, storetest.OpenURL(t, rawURL))
			b := a.peer(t, rawURL)
			ids := a.demo.Catalog
			date, reg := ids.EventDates["DEMO-HIGHLIFE-1"], ids.Tickets["DEMO-HIGHLIFE-REG"]

			onB, err := dialLive(t, b.srv.URL, map[string]any{"X-API-Key": a.testKey})
			require.NoError(t, err)
			onB.subscribe("stock", availabilitySub, map[string]any{"d": date})
			require.Equal(t, 586.0, availability(t, onB.next("stock"))[reg])
			sess := a.checkout(t, a.testKey, newIdemKey(), a.highlife(1)).data()
			onB.subscribe("order", orderSub, map[string]any{"r": sess["order_reference"]})
			require.Equal(t, "PENDING", onB.next("order")["orderUpdated"].(map[string]any)["status"])

			// Through A: a live checkout holds 4 tickets; the sandbox
			// order is paid on A's page.
			require.Equal(t, http.StatusCreated, a.checkout(t, a.liveKey, newIdemKey(), a.highlife(4)).Status)
			require.Equal(t, 582.0, availability(t, onB.next("stock"))[reg])
			a.submitOutcome(t, sess["checkout_url"].(string), "paid")
			require.Equal(t, "PAID", onB.next("order")["orderUpdated"].(map[string]any)["status"])

			// A refund through A reaches B's subscriber of the order.
			onB.subscribe("refund", `subscription($r: String!) { orderUpdated(reference: $r) { refundStatus refundedAmount } }`,
				map[string]any{"r": sess["order_reference"]})
			require.Equal(t, "NONE", onB.next("refund")["orderUpdated"].(map[string]any)["refundStatus"])
			res := a.do(t, http.MethodPost, "/api/v1/orders/"+sess["order_reference"].(string)+"/refunds", a.testKey, []byte(`{}`),
				"Idempotency-Key", newIdemKey())
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			refunded := onB.next("refund")["orderUpdated"].(map[string]any)
			for refunded["refundStatus"] == "NONE" {
				// A change of the order before the refund, sent late.
				refunded = onB.next("refund")["orderUpdated"].(map[string]any)
			}
			require.Equal(t, "FULL", refunded["refundStatus"])
			require.Equal(t, "120.00", refunded["refundedAmount"])
		})
	}
}

// TestSubscriptionsShutdown: Serve's graceful shutdown closes the sockets it
// cannot wait for (hijacked connections), and frees what they held.
func TestSubscriptionsShutdown(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t, "sqlite")
	tb := liveSetup(t, db)
	ln, err := newLocalListener()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		require.NoError(t, tb.m.Serve(ctx, ln, nil))
	}()
	c, err := dialLive(t, "http://"+ln.Addr().String(), map[string]any{"X-API-Key": tb.testKey})
	require.NoError(t, err)
	c.subscribe("a", availabilitySub, map[string]any{"d": tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]})
	c.next("a")
	cancel()
	select {
	case <-c.done:
	case <-testwait.After(t, liveWait):
		t.Fatal("the socket stayed open after shutdown")
	}
	wg.Wait()
	waitFor(t, liveWait, "the hub to be empty", func() bool { return tb.m.Live.Stats() == live.Stats{} })
}

// TestSubscriptionDocumentBounds: a subscription's document meets the
// limits and the linear validation of HTTP's. 1,000 availabilityChanged
// of different dates (53 KB) once cost seconds and were answered with
// half a million errors in one 64 MB message; now one error in one
// small message, and the socket still serves.
func TestSubscriptionDocumentBounds(t *testing.T) {
	t.Parallel()
	rep := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i) + " ")
		}
		return b.String()
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := liveSetup(t, db)
		date := tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]
		for _, tc := range []struct {
			name, query string
			codes       map[string]int
		}{
			{"ErrSameNameDifferentArguments", "subscription { " + rep(1_000, func(i int) string {
				return fmt.Sprintf("availabilityChanged(eventDateId: %d) { eventDateId }", i+1)
			}) + "}", map[string]int{"validation_failed": 1}},
			{"ErrDocumentTooLarge", "subscription { availabilityChanged(eventDateId: 1) { " +
				rep(2_500, func(int) string { return "eventDateId" }) + "} }", map[string]int{"document_too_large": 1}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
				require.NoError(t, err)
				c.subscribe("a", tc.query, nil)
				// Errors in a next message (then complete) or in an error
				// message, as the refused helper reads them.
				m := c.recv("a")
				var errs []map[string]any
				switch m.Type {
				case "next":
					var res struct {
						Errors []map[string]any `json:"errors"`
					}
					require.NoError(t, json.Unmarshal(m.Payload, &res))
					errs = res.Errors
					require.Equal(t, "complete", c.recv("a").Type)
				case "error":
					require.NoError(t, json.Unmarshal(m.Payload, &errs))
				default:
					t.Fatalf("want errors, got %s %.300s", m.Type, m.Payload)
				}
				codes := map[string]int{}
				for _, e := range errs {
					codes[e["extensions"].(map[string]any)["code"].(string)]++
				}
				require.Equal(t, tc.codes, codes)
				require.Less(t, len(m.Payload), 1<<10)
				// The socket still serves.
				c.subscribe("ok", availabilitySub, map[string]any{"d": date})
				c.next("ok")
			})
		}
	})
}
