package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

const checkInsSub = `subscription($d: Int!) { checkIns(eventDateId: $d) { ` + checkInFields + ` } }`

// feedWait bounds each wait for a pushed scan: on PostgreSQL a scan waits
// for every older writing transaction of the cluster to end, another
// test's or another process's included, which on a loaded machine takes
// seconds.
const feedWait = time.Minute

// pushedScan is a checkIns result in REST's names.
func pushedScan(t testing.TB, data map[string]any) map[string]any {
	t.Helper()
	return gqlToREST(data["checkIns"]).(map[string]any)
}

// noMore fails if operation id of c receives anything within d.
func (c *liveClient) noMore(id string, d time.Duration) {
	c.t.Helper()
	deadline := time.After(d)
	for {
		if q := c.pending[id]; len(q) > 0 {
			c.t.Fatalf("unexpected message for %s: %s %s", id, q[0].Type, q[0].Payload)
		}
		select {
		case m := <-c.msgs:
			c.pending[m.ID] = append(c.pending[m.ID], m)
		case <-deadline:
			return
		}
	}
}

// TestCheckInSubscriptionTwoInstances: a subscriber of checkIns on
// instance B gets every scan of the date made through A and B, many at
// once and concurrently, each once, as its door got it, and none made
// before it subscribed (PostgreSQL: B's listener hears A's commits, and
// the feed holds a scan back while an older one may still commit; SQLite:
// B polls the file A writes).
func TestCheckInSubscriptionTwoInstances(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			rawURL := storetest.FreshURL(t, kind)
			a := liveSetup(t, storetest.OpenURL(t, rawURL))
			b := a.peer(t, rawURL)
			door, _ := a.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
			const day1 = "DEMO-CHALEWOTE-1"
			var codes []string
			for _, tk := range a.freeTickets(t, a.testKey, 4) {
				codes = append(codes, tk["code"].(string))
			}
			before, err := postScan(t, a.srv.URL, door, a.scan(codes[0], day1, "gate", "Before"))
			require.NoError(t, err)

			onB, err := dialLive(t, b.srv.URL, map[string]any{"X-API-Key": door})
			require.NoError(t, err)
			onB.wait = feedWait
			onB.subscribe("scans", checkInsSub, map[string]any{"d": a.demo.Catalog.EventDates[day1]})
			waitFor(t, liveWait, "B's subscription", func() bool { return b.m.Live.Stats().Subscriptions == 1 })

			// 40 scans at once, half through each instance: entries and
			// exits of four tickets, and unknown codes.
			const n = 40
			answers := make([]map[string]any, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					base, gate := a.srv.URL, fmt.Sprintf("A%d", i)
					if i%2 == 1 {
						base, gate = b.srv.URL, fmt.Sprintf("B%d", i)
					}
					body := a.scan(codes[i%4], day1, "gate", gate)
					switch i % 5 {
					case 3:
						body["direction"] = "exit"
					case 4:
						body["code"] = fmt.Sprintf("TESTUNKNOWN%022d", i)
					}
					v, err := postScan(t, base, door, body)
					if err != nil {
						t.Errorf("scan %d: %v", i, err)
					}
					answers[i] = v
				})
			}
			wg.Wait()

			byID := map[string]map[string]any{}
			for _, v := range answers {
				require.NotNil(t, v)
				byID[v["id"].(string)] = v
			}
			pushed := map[string]bool{}
			for range n {
				got := pushedScan(t, onB.next("scans"))
				id := got["id"].(string)
				require.NotEqual(t, before["id"], id, "a scan made before the subscription is not sent")
				require.False(t, pushed[id], "scan %s sent twice", id)
				pushed[id] = true
				want, ok := byID[id]
				require.True(t, ok, "scan %s was made by this test", id)
				for _, k := range []string{"result", "reason", "direction", "gate", "scanned_at"} {
					require.Equal(t, want[k], got[k], "%s of %s", k, id)
				}
				if want["ticket"] == nil {
					require.Nil(t, got["ticket"])
				} else {
					require.Equal(t, want["ticket"].(map[string]any)["code"], got["ticket"].(map[string]any)["code"])
				}
			}
			onB.noMore("scans", 300*time.Millisecond)

			// One more scan, through A, reaches B on its own.
			last, err := postScan(t, a.srv.URL, door, a.scan(codes[1], day1, "direction", "exit", "gate", "Last"))
			require.NoError(t, err)
			got := pushedScan(t, onB.next("scans"))
			require.Equal(t, last["id"], got["id"])
			require.Equal(t, "Last", got["gate"])
			onB.complete("scans")
			require.Equal(t, "complete", onB.recv("scans").Type)
		})
	}
}

// TestCheckInSubscriptionRefusals: checkIns is a scanner key's, for a date
// of its event; a scanner key subscribes to nothing else.
func TestCheckInSubscriptionRefusals(t *testing.T) {
	t.Parallel()
	tb := liveSetup(t, storetest.MustOpen(t, "sqlite"))
	door, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
	ids := tb.demo.Catalog
	app, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
	require.NoError(t, err)
	scanner, err := dialLive(t, tb.srv.URL, map[string]any{"apiKey": door})
	require.NoError(t, err)
	scanner.wait = feedWait
	for _, tc := range []struct {
		name      string
		c         *liveClient
		query     string
		vars      map[string]any
		code, msg string
	}{
		{"ErrAppKey", app, checkInsSub, map[string]any{"d": ids.EventDates["DEMO-CHALEWOTE-1"]},
			"scanner_key_required", "Check-in takes a scanner key (svc_scan_…), not an app's API key."},
		{"ErrOtherEventsDate", scanner, checkInsSub, map[string]any{"d": ids.EventDates["DEMO-HIGHLIFE-1"]},
			"event_date_not_found", fmt.Sprintf("Event date %d is not a date of this scanner's event.", ids.EventDates["DEMO-HIGHLIFE-1"])},
		{"ErrScannerKeyAvailability", scanner, availabilitySub, map[string]any{"d": ids.EventDates["DEMO-CHALEWOTE-1"]},
			"scanner_key_not_allowed", "A scanner key opens only check-in; use the app's API key here."},
		{"ErrScannerKeyOrder", scanner, orderSub, map[string]any{"r": "sbx_nope"},
			"scanner_key_not_allowed", "A scanner key opens only check-in; use the app's API key here."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.subscribe(tc.name, tc.query, tc.vars)
			e := tc.c.refused(tc.name)
			require.Equal(t, tc.code, e["extensions"].(map[string]any)["code"], "%v", e)
			require.Equal(t, tc.msg, e["message"])
		})
	}
	// Both sockets still serve.
	scanner.subscribe("ok", checkInsSub, map[string]any{"d": ids.EventDates["DEMO-CHALEWOTE-1"]})
	app.subscribe("ok", availabilitySub, map[string]any{"d": ids.EventDates["DEMO-HIGHLIFE-1"]})
	app.next("ok")
	code := tb.freeTickets(t, tb.testKey, 1)[0]["code"].(string)
	v := tb.checkIn(t, door, tb.scan(code, "DEMO-CHALEWOTE-1")).data()
	require.Equal(t, v["id"], pushedScan(t, scanner.next("ok"))["id"])
}

// TestScannerLiveBudgets: each scanner key has its own budget of sockets
// and subscriptions on an instance: one scanner that holds all of its own
// refuses no other scanner, and no app.
func TestScannerLiveBudgets(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		tb := liveSetup(t, db, func(c *Config) { c.Live.MaxConnections, c.Live.MaxSubscriptions = 2, 3 })
		busy, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
		other, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
		date := tb.demo.Catalog.EventDates["DEMO-CHALEWOTE-1"]

		first, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": busy})
		require.NoError(t, err)
		first.wait = feedWait
		_, err = dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": busy})
		require.NoError(t, err)
		_, err = dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": busy})
		var ce websocket.CloseError
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, websocket.StatusCode(4429), ce.Code)
		require.True(t, strings.HasPrefix(ce.Reason, "subscription_limit_reached: This scanner key already has 2 live connections open"), ce.Reason)

		for i := range 3 {
			first.subscribe(fmt.Sprint(i), checkInsSub, map[string]any{"d": date})
		}
		waitFor(t, liveWait, "the busy scanner's subscriptions", func() bool { return tb.m.Live.Stats().Subscriptions == 3 })
		first.subscribe("3", checkInsSub, map[string]any{"d": date})
		e := first.refused("3")
		require.Equal(t, "subscription_limit_reached", e["extensions"].(map[string]any)["code"])
		require.Equal(t, "This scanner key already has 3 live subscriptions open on this server; complete one first.", e["message"])

		// The other scanner, and the app, have budgets of their own.
		c, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": other})
		require.NoError(t, err, "another scanner's socket")
		c.wait = feedWait
		_, err = dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": other})
		require.NoError(t, err)
		for i := range 3 {
			c.subscribe(fmt.Sprint(i), checkInsSub, map[string]any{"d": date})
		}
		waitFor(t, liveWait, "the other scanner's subscriptions", func() bool { return tb.m.Live.Stats().Subscriptions == 6 })
		app, err := dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": tb.testKey})
		require.NoError(t, err, "an app's socket")
		app.subscribe("a", availabilitySub, map[string]any{"d": tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]})
		app.next("a")

		// Each of the other scanner's subscriptions gets every scan.
		code := tb.freeTickets(t, tb.testKey, 1)[0]["code"].(string)
		res := tb.checkIn(t, other, tb.scan(code, "DEMO-CHALEWOTE-1"))
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		for i := range 3 {
			require.Equal(t, res.data()["id"], pushedScan(t, c.next(fmt.Sprint(i)))["id"])
			require.Equal(t, res.data()["id"], pushedScan(t, first.next(fmt.Sprint(i)))["id"])
		}
	})
}
