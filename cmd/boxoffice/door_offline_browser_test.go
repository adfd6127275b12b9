package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// venueNetwork stands between the door page and the server: unplugged,
// it drops every connection without an answer (as a venue's dead Wi-Fi
// does), and it records the batches of queued scans that reach the
// server.
type venueNetwork struct {
	mu        sync.Mutex
	unplugged bool
	batches   [][]map[string]any
}

func (n *venueNetwork) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		down := n.unplugged
		n.mu.Unlock()
		if down {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/check-ins/batch" {
			raw, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(raw))
			var body struct {
				Scans []map[string]any `json:"scans"`
			}
			_ = json.Unmarshal(raw, &body)
			n.mu.Lock()
			n.batches = append(n.batches, body.Scans)
			n.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func (n *venueNetwork) plug(up bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.unplugged = !up
}

func (n *venueNetwork) sent() [][]map[string]any {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([][]map[string]any(nil), n.batches...)
}

// waitJS runs an async JavaScript predicate in the page until it returns
// true, or fails the step after testwait.Patience.
func waitJS(predicate string) chromedp.Action {
	js := `(async function () {
  var until = Date.now() + ` + strconv.FormatInt(testwait.Patience.Milliseconds(), 10) + `;
  var ok = ` + predicate + `;
  while (Date.now() < until) {
    if (await ok()) { return true; }
    await new Promise(function (r) { setTimeout(r, 100); });
  }
  return false;
})()`
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var ok bool
		if err := chromedp.Evaluate(js, &ok, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}).Do(ctx); err != nil {
			return err
		}
		if !ok {
			return context.DeadlineExceeded
		}
		return nil
	})
}

// storedManifest is a JavaScript function resolving to the door page's
// stored manifest of the date (or null).
const storedManifest = `function (id) { return new Promise(function (ok) {
  var rq = indexedDB.open("boxoffice-door", 1);
  rq.onsuccess = function () {
    var db = rq.result;
    if (!db.objectStoreNames.contains("manifests")) { ok(null); return; }
    var g = db.transaction("manifests").objectStore("manifests").get(id);
    g.onsuccess = function () { ok(g.result || null); };
    g.onerror = function () { ok(null); };
  };
  rq.onerror = function () { ok(null); };
}); }`

// TestDoorOfflineInBrowser works the door page in headless Chromium
// through a network failure: online, the camera admits a ticket and the
// page downloads the date's manifest; then the network goes (DevTools
// network emulation offline, and the server's side of the venue network
// drops every connection), and the page keeps deciding from the manifest:
// typed tickets admitted, a second entry and an unknown code refused, the
// camera's ticket let out and, after a reload that the service worker
// serves without a network, let in again; another door admits one of the
// tickets meanwhile. The page says it is offline and how many scans wait;
// the queue survives the reload. When the network returns the page sends
// the queue with the batch route and shows the conflict, and the server
// has every scan exactly once. Screenshots door-offline-{390,1280}.png
// and door-conflict-390.png (BOXOFFICE_SCREENSHOTS=DIR keeps them).
func TestDoorOfflineInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	door, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
	otherDoor, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
	const day1 = "DEMO-CHALEWOTE-1"
	dateID := tb.demo.Catalog.EventDates[day1]
	date := strconv.FormatInt(dateID, 10)

	res := tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", day1, "DEMO-CHALEWOTE-1-GA", 3))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	order := tb.get(t, "/api/v1/orders/"+res.data()["order_reference"].(string), tb.testKey).data()
	camera := order["tickets"].([]any)[1].(map[string]any)
	cameraCode := camera["code"].(string)
	cameraLine := camera["ticket_name"].(string) + " · Ticket 2 of 3"
	free := tb.freeTickets(t, tb.testKey, 3)
	typed, later, raced := free[0]["code"].(string), free[1]["code"].(string), free[2]["code"].(string)
	const unknown = "TESTAAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH"

	venue := &venueNetwork{}
	srv := httptest.NewServer(venue.wrap(tb.m.Handler()))
	t.Cleanup(srv.Close)
	ticketsURL := srv.URL + strings.TrimPrefix(order["tickets_url"].(string), "http://boxoffice.test")
	video := writeY4M(t, ticketQR(t, execPath, ticketsURL, 2))
	ctx := newChromium(t, execPath,
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-video-capture", video))
	shots := t.TempDir()

	var mu sync.Mutex
	var exceptions []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if ev, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			exceptions = append(exceptions, ev.ExceptionDetails.Error())
			mu.Unlock()
		}
	})
	run := browserSteps(t, ctx)
	run("watch the page", network.Enable(), runtime.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(doorWatch).Do(ctx)
		return err
	}))
	ds := doorSteps{t: t, run: run, shots: shots}
	shoot, text, results, nextResult, dismiss, typeCode := ds.shoot, ds.text, ds.results, ds.nextResult, ds.dismiss, ds.typeCode
	offlineNote := "Offline — sent when the network is back"

	// Online: the key, the date, the camera's ticket admitted; the
	// service worker takes the page and the manifest arrives with the
	// camera's ticket inside.
	run("open the door page on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(srv.URL+"/door"),
		chromedp.WaitVisible(`#key`, chromedp.ByQuery),
		chromedp.SendKeys(`#key`, door, chromedp.ByQuery), chromedp.Click(`#key-go`, chromedp.ByQuery),
		chromedp.WaitVisible(`#date-`+date, chromedp.ByQuery),
		chromedp.Click(`#date-`+date, chromedp.ByQuery))
	require.Equal(t, shown{Kind: "admitted", Word: "ADMITTED", Ticket: cameraLine}, nextResult(0))
	run("wait for the service worker and the manifest",
		waitJS(`function () { return !!navigator.serviceWorker.controller; }`),
		waitJS(`function () { return (`+storedManifest+`)("test:`+date+`").then(function (m) {
			if (!m) { return false; }
			var all = Object.keys(m.tickets).map(function (h) { return m.tickets[h]; });
			return all.length === 6 && all.filter(function (t) { return t.inside; }).length === 1;
		}); }`),
		chromedp.Poll(`document.getElementById("result").hidden`, nil, browserPoll))
	var barHidden bool
	run("look at the bar", chromedp.Evaluate(`document.getElementById("offline").hidden`, &barHidden))
	require.True(t, barHidden, "online with nothing waiting: no offline bar")

	// The network goes.
	venue.plug(false)
	run("take the network away", network.EmulateNetworkConditions(true, 0, -1, -1))
	got := typeCode(typed)
	require.Equal(t, shown{Kind: "admitted", Word: "ADMITTED", Reason: offlineNote, Ticket: free[0]["ticket_name"].(string) + " · Ticket 1 of 3"}, got)
	dismiss()
	run("see the page offline", chromedp.Poll(`!document.getElementById("offline").hidden`, nil, browserPoll))
	require.Contains(t, text(`#offline`), "OFFLINE")
	require.Contains(t, text(`#offline`), "1 scan waits to be sent.")
	got = typeCode(typed)
	require.Equal(t, "REJECTED", got.Word)
	require.Equal(t, "Already checked in (offline)", got.Reason)
	dismiss()
	got = typeCode(unknown)
	require.Equal(t, shown{Kind: "rejected", Word: "REJECTED", Reason: "Unknown ticket (offline)"}, got)
	dismiss()
	// Another door, still online, admits this one first.
	require.Equal(t, "admitted", tb.checkIn(t, otherDoor, tb.scan(raced, day1)).data()["result"])
	got = typeCode(raced)
	racedAt := time.Now() // after the page's scanned_at
	require.Equal(t, "ADMITTED", got.Word, "this phone cannot know yet")
	dismiss()

	// The camera's ticket, let out: the camera sees it again once the
	// scan screen is back after more than the page's three seconds away.
	run("switch to exit and leave the scan screen", chromedp.Click(`#dir-exit`, chromedp.ByQuery),
		chromedp.Click(`#change`, chromedp.ByQuery), chromedp.WaitVisible(`#dates`, chromedp.ByQuery),
		chromedp.Sleep(3500*time.Millisecond))
	n := len(results())
	run("back to the scan screen", chromedp.Click(`#date-`+date, chromedp.ByQuery))
	require.Equal(t, shown{Kind: "admitted", Word: "EXIT OK", Reason: offlineNote, Ticket: cameraLine}, nextResult(n))
	run("switch to entry", chromedp.Poll(`document.getElementById("result").hidden`, nil, browserPoll), chromedp.Click(`#dir-entry`, chromedp.ByQuery))
	require.Contains(t, text(`#offline`), "5 scans wait to be sent.")

	// A reload without any network: the service worker serves the page,
	// the tab still has the key, the stored manifest and queue decide,
	// and the camera's ticket comes back in.
	run("reload offline", chromedp.Navigate(srv.URL+"/door"))
	require.Equal(t, shown{Kind: "admitted", Word: "ADMITTED", Reason: offlineNote, Ticket: cameraLine}, nextResult(0))
	dismiss()
	got = typeCode(later)
	require.Equal(t, "ADMITTED", got.Word)
	require.Equal(t, offlineNote, got.Reason)
	dismiss()
	require.Contains(t, text(`#offline`), "7 scans wait to be sent.")
	require.Equal(t, "4", text(`#n-inside`), "this phone's count: the camera's ticket and three typed ones")
	shoot("door-offline-390.png")
	run("a desktop", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))
	requireFits(t, run, "the offline scan screen", 1280)
	shoot("door-offline-1280.png")
	run("a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	requireFits(t, run, "the offline scan screen", 390)
	require.Empty(t, venue.sent(), "nothing reached the server offline")

	// The server counts a scan as offline when it is more than 30 s old
	// on arrival: the network stays away that long after the raced scan.
	if wait := 31*time.Second - time.Since(racedAt); wait > 0 {
		run("stay offline past the 30 s mark", chromedp.Sleep(wait))
	}
	venue.plug(true)
	run("bring the network back", network.EmulateNetworkConditions(false, 0, -1, -1),
		chromedp.Poll(`document.getElementById("offline").hidden`, nil, browserPoll),
		chromedp.Poll(`!document.getElementById("conflicts").hidden`, nil, browserPoll))
	conflict := text(`#conflict-list`)
	require.Contains(t, conflict, free[2]["ticket_name"].(string)+" · Ticket 3 of 3, admitted here offline at ")
	require.Contains(t, conflict, "Two people may have entered on one ticket.")
	shoot("door-conflict-390.png")

	// Every queued scan reached the server once, with its own key.
	keys := map[string]bool{}
	for _, b := range venue.sent() {
		for _, s := range b {
			require.NotEmpty(t, s["scanned_at"])
			keys[s["idempotency_key"].(string)] = true
		}
	}
	require.Len(t, keys, 7, "seven scans, each with its own idempotency key")
	for _, want := range []struct {
		code    string
		results []string
	}{
		{cameraCode, []string{"admitted", "admitted", "admitted"}},
		{typed, []string{"admitted", "already_checked_in"}},
		{raced, []string{"admitted", "already_checked_in"}},
		{later, []string{"admitted"}},
	} {
		require.Equal(t, want.results, tb.scanResults(t, want.code), "the scans of %s", want.code)
	}
	// The server counts every offline entry of a ticket it finds inside:
	// the raced one, and the second entry of the typed ticket (which this
	// phone refused itself; a batch does not say what the phone decided).
	st := tb.get(t, "/api/v1/check-ins/stats?eventdate_id="+date, door).data()
	require.Equal(t, map[string]any{"eventdate_id": float64(dateID), "issued": 6.0, "checked_in": 4.0, "inside": 4.0,
		"rejected_scans": 3.0, "offline_conflicts": 2.0}, st)

	// Online again, the queue is empty and stays so across a reload.
	run("reload online", chromedp.Navigate(srv.URL+"/door"), chromedp.WaitVisible(`#step-scan`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("n-inside").textContent === "4"`, nil, browserPoll))
	require.Equal(t, "", text(`#offline`))
	var violations []string
	run("read CSP violations", chromedp.Evaluate(`window.__csp`, &violations))
	require.Empty(t, violations)
	mu.Lock()
	require.Empty(t, exceptions, "no script error")
	mu.Unlock()
}
