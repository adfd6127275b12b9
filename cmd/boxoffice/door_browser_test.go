package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// doorWatch runs in the door page before its own scripts: it records every
// Content-Security-Policy violation, and every result the page shows
// (results go away by themselves after a few seconds, so the test reads
// this list instead of racing the screen).
const doorWatch = `window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sourceFile || "") + ":" + e.lineNumber);
});
window.__results = [];
document.addEventListener("DOMContentLoaded", function () {
  var r = document.getElementById("result");
  new MutationObserver(function () {
    if (r.hidden) { return; }
    var text = function (id) { var e = document.getElementById(id); return e.hidden ? "" : e.textContent; };
    window.__results.push({kind: r.className.replace("result ", ""), word: text("r-word"), reason: text("r-reason"), ticket: text("r-ticket")});
  }).observe(r, {attributes: true, attributeFilter: ["hidden", "class"]});
});`

// shown is one result as the door page showed it.
type shown struct {
	Kind, Word, Reason, Ticket string
}

// sentCheckIn is one POST /api/v1/check-ins as the server received it.
type sentCheckIn struct {
	Key, IdempotencyKey, ContentType string
	Body                             map[string]any
}

// checkInLog records the check-ins that reach the server, and can lose
// the answer to one (the server checks the ticket in, and the page gets a
// 502 instead, as from a proxy whose upstream went quiet) or keep one
// from reaching the server at all (503).
type checkInLog struct {
	mu   sync.Mutex
	sent []sentCheckIn
	lose string // the code whose next answer is lost
	down string // the code that never reaches the server
}

func (l *checkInLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/check-ins" {
			next.ServeHTTP(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		l.mu.Lock()
		l.sent = append(l.sent, sentCheckIn{Key: r.Header.Get("X-API-Key"), IdempotencyKey: r.Header.Get("Idempotency-Key"),
			ContentType: r.Header.Get("Content-Type"), Body: body})
		lose := l.lose != "" && body["code"] == l.lose
		if lose {
			l.lose = ""
		}
		down := l.down != "" && body["code"] == l.down
		l.mu.Unlock()
		switch {
		case down:
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		case lose:
			next.ServeHTTP(httptest.NewRecorder(), r)
			http.Error(w, "upstream timed out", http.StatusBadGateway)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func (l *checkInLog) loseNextAnswer(code string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lose = code
}

func (l *checkInLog) unreachableFor(code string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = code
}

func (l *checkInLog) all() []sentCheckIn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sentCheckIn(nil), l.sent...)
}

// TestDoorInBrowser works the door page of the real service in headless
// Chromium as door staff would on a phone (390 px) and then a desktop
// (1280 px), with tickets bought through checkout and a scanner key made
// by the operator: an app's key and a wrong key refused, the right one
// taken, the date, a ticket's QR code read by the camera (a fake capture
// device playing a video of the QR code on the buyer's own ticket page),
// typed codes, entry and exit, a gate name, a reload that keeps the key
// and date, an answer lost on its way back, and a server out of reach.
// Every code reaches the server exactly as encoded, with the key and the
// chosen date; the camera does not send a code it keeps seeing twice;
// each answer is shown with its reason in staff's words; the live counts
// are the server's; nothing scrolls sideways on the phone; the page asks
// no other host for anything and breaks nothing of its policy; the key is
// kept in the tab's sessionStorage only; the server recorded each scan
// the page showed. Screenshots door-{key,date,scan,admitted,rejected}
// -{390,1280}.png and door-error-390.png (BOXOFFICE_SCREENSHOTS=DIR keeps
// them).
func TestDoorInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	door, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
	const day1 = "DEMO-CHALEWOTE-1"
	dateID := tb.demo.Catalog.EventDates[day1]

	// A buyer's order of three wristbands (the camera reads the second
	// off the buyer's ticket page; the third is for exits), and another
	// buyer's one, typed in.
	res := tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", day1, "DEMO-CHALEWOTE-1-GA", 3))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	order := tb.get(t, "/api/v1/orders/"+res.data()["order_reference"].(string), tb.testKey).data()
	three := order["tickets"].([]any)
	camera, exitCode := three[1].(map[string]any), three[2].(map[string]any)["code"].(string)
	typed := tb.freeTickets(t, tb.testKey, 1)[0]["code"].(string)
	const unknown = "TESTAAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH"
	cameraLine := camera["ticket_name"].(string) + " · Ticket 2 of 3"

	var dateDay string
	for _, d := range tb.get(t, "/api/v1/events/"+strconv.FormatInt(tb.demo.Catalog.Events["DEMO-CHALEWOTE"], 10)+"/dates", tb.testKey).Body["data"].([]any) {
		if d := d.(map[string]any); int64(d["id"].(float64)) == dateID {
			start, err := time.Parse(time.RFC3339, d["startdate_iso"].(string))
			require.NoError(t, err)
			dateDay = start.Format("Mon, 2 Jan 2006")
		}
	}
	require.NotEmpty(t, dateDay)

	sent := &checkInLog{}
	srv := httptest.NewServer(sent.wrap(tb.m.Handler()))
	t.Cleanup(srv.Close)
	origin, err := url.Parse(srv.URL)
	require.NoError(t, err)

	ticketsURL := srv.URL + strings.TrimPrefix(order["tickets_url"].(string), "http://boxoffice.test")
	video := writeY4M(t, ticketQR(t, execPath, ticketsURL, 2))
	ctx := newChromium(t, execPath,
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-video-capture", video))
	shots := t.TempDir()

	var mu sync.Mutex
	var foreign, exceptions, consoleErrors []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			u, err := url.Parse(ev.Request.URL)
			if err != nil || (u.Scheme != "data" && u.Host != origin.Host) {
				foreign = append(foreign, ev.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			exceptions = append(exceptions, ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value))
				}
				consoleErrors = append(consoleErrors, strings.Join(parts, " "))
			}
		}
	})

	run := browserSteps(t, ctx)
	run("watch the page", network.Enable(), runtime.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(doorWatch).Do(ctx)
		return err
	}))
	ds := doorSteps{t: t, run: run, shots: shots}
	shoot, text, results, nextResult, dismiss, typeCode := ds.shoot, ds.text, ds.results, ds.nextResult, ds.dismiss, ds.typeCode
	fitsWidth := func(what string, width int) {
		t.Helper()
		requireFits(t, run, what, int64(width))
	}
	lastSent := func() sentCheckIn {
		t.Helper()
		all := sent.all()
		require.NotEmpty(t, all)
		return all[len(all)-1]
	}
	requireSent := func(s sentCheckIn, code, direction, gate string) {
		t.Helper()
		want := map[string]any{"code": code, "eventdate_id": float64(dateID), "direction": direction}
		if gate != "" {
			want["gate"] = gate
		}
		require.Equal(t, want, s.Body, "the check-in's body")
		require.Equal(t, door, s.Key, "the scanner key in X-API-Key")
		require.Equal(t, "application/json", s.ContentType)
		require.Regexp(t, `^door-[0-9a-f]{32}$`, s.IdempotencyKey)
	}
	date := strconv.FormatInt(dateID, 10)

	// A phone: headless windows are at least 500 px wide, so emulate it.
	run("open the door page on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(srv.URL+"/door"),
		chromedp.WaitVisible(`#key`, chromedp.ByQuery),
	)
	fitsWidth("the key step", 390)
	shoot("door-key-390.png")

	run("paste the app's key", chromedp.SendKeys(`#key`, tb.testKey, chromedp.ByQuery), chromedp.Click(`#key-go`, chromedp.ByQuery),
		chromedp.WaitVisible(`#key-error`, chromedp.ByQuery))
	require.Contains(t, text(`#key-error`), "app's API key")
	run("paste a wrong scanner key", chromedp.SetValue(`#key`, "svc_scan_test_nope", chromedp.ByQuery), chromedp.Click(`#key-go`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("key-error").textContent.indexOf("not valid") >= 0`, nil, browserPoll))
	run("paste the scanner key", chromedp.SetValue(`#key`, door, chromedp.ByQuery), chromedp.Click(`#key-go`, chromedp.ByQuery),
		chromedp.WaitVisible(`#date-`+date, chromedp.ByQuery))
	require.Equal(t, "Chale Wote Street Art Festival", text(`#bar-event`))
	require.Contains(t, text(`#date-`+date), dateDay)
	fitsWidth("the date step", 390)
	shoot("door-date-390.png")

	// The camera reads the ticket off the buyer's ticket page as soon as
	// the scan screen is up.
	run("pick the date", chromedp.Click(`#date-`+date, chromedp.ByQuery))
	got := nextResult(0)
	shoot("door-admitted-390.png")
	require.Equal(t, shown{Kind: "admitted", Word: "ADMITTED", Ticket: cameraLine}, got)
	requireSent(lastSent(), camera["code"].(string), "entry", "")
	fitsWidth("the result", 390)
	run("wait for the scan screen again", chromedp.Poll(`document.getElementById("result").hidden`, nil, browserPoll))

	// The ticket stays in front of the camera: it is the same scan.
	run("keep the ticket in view", chromedp.Sleep(4*time.Second))
	require.Len(t, sent.all(), 1, "a code the camera keeps seeing is sent once")
	require.Len(t, results(), 1)
	run("wait for the counts", chromedp.Poll(`document.getElementById("n-checked").textContent === "1"`, nil, browserPoll))
	require.Equal(t, "1", text(`#n-inside`))
	require.Equal(t, "4", text(`#n-issued`), "the date's four tickets")
	require.Contains(t, text(`#camera-state`), "QR code")
	fitsWidth("the scan screen", 390)
	shoot("door-scan-390.png")

	// Typed, as the ticket prints it: groups of four, any case.
	run("name the gate", chromedp.SendKeys(`#gate`, "North gate", chromedp.ByQuery))
	got = typeCode(strings.ToLower(strings.Join(groupsOf4(typed), " ")))
	require.Equal(t, "admitted", got.Kind)
	require.Equal(t, "ADMITTED", got.Word)
	first := lastSent()
	requireSent(first, typed, "entry", "North gate")
	dismiss()

	got = typeCode(typed)
	require.Equal(t, "rejected", got.Kind)
	require.Equal(t, "REJECTED", got.Word)
	require.Regexp(t, regexp.MustCompile(`^Already checked in at \d\d:\d\d \(North gate\)$`), got.Reason)
	shoot("door-rejected-390.png")
	again := lastSent()
	requireSent(again, typed, "entry", "North gate")
	require.NotEqual(t, first.IdempotencyKey, again.IdempotencyKey, "every scan has its own Idempotency-Key")
	dismiss()

	// The server cannot be reached for this one: the page tries four
	// times with one Idempotency-Key, then says nothing was checked, and
	// waits for a tap. The ticket scanned again goes with the same key.
	sent.unreachableFor(unknown)
	before := len(sent.all())
	got = typeCode(unknown)
	require.Equal(t, shown{Kind: "unchecked", Word: "NOT CHECKED", Reason: "The server could not check this ticket", Ticket: "Scan the ticket again."}, got)
	shoot("door-error-390.png")
	tries := sent.all()[before:]
	require.Len(t, tries, 4, "the first try and three retries")
	for _, try := range tries {
		require.Equal(t, tries[0], try)
	}
	run("see that the error waits for a tap", chromedp.Sleep(3500*time.Millisecond))
	var hidden bool
	run("look at the error", chromedp.Evaluate(`document.getElementById("result").hidden`, &hidden))
	require.False(t, hidden, "nothing was checked: the screen says so until tapped")
	dismiss()
	sent.unreachableFor("")
	got = typeCode(unknown)
	require.Equal(t, shown{Kind: "rejected", Word: "REJECTED", Reason: "Unknown ticket"}, got)
	requireSent(lastSent(), unknown, "entry", "North gate")
	require.Equal(t, tries[0].IdempotencyKey, lastSent().IdempotencyKey, "a scan after one without an answer reuses its key")
	dismiss()

	run("switch to exit", chromedp.Click(`#dir-exit`, chromedp.ByQuery))
	got = typeCode(typed)
	require.Equal(t, "admitted", got.Kind)
	require.Equal(t, "EXIT OK", got.Word)
	requireSent(lastSent(), typed, "exit", "North gate")
	dismiss()
	got = typeCode(exitCode)
	require.Equal(t, "rejected", got.Kind)
	require.Equal(t, "Not inside — no entry to exit from", got.Reason)
	requireSent(lastSent(), exitCode, "exit", "North gate")
	dismiss()
	run("switch to entry", chromedp.Click(`#dir-entry`, chromedp.ByQuery))

	// A desktop, reloaded: the tab still has the key and the date, and the
	// camera reads the ticket it already admitted.
	run("reload on a desktop",
		chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)),
		chromedp.Navigate(srv.URL+"/door"),
	)
	got = nextResult(0) // the reload starts the page's list anew
	shoot("door-rejected-1280.png")
	require.Equal(t, "rejected", got.Kind)
	require.Regexp(t, `^Already checked in at \d\d:\d\d$`, got.Reason)
	require.Equal(t, cameraLine, got.Ticket)
	requireSent(lastSent(), camera["code"].(string), "entry", "North gate")
	run("wait for the scan screen", chromedp.Poll(`document.getElementById("result").hidden`, nil, browserPoll))
	fitsWidth("the scan screen", 1280)
	shoot("door-scan-1280.png")
	// The answer to this one is lost on its way back: the page asks again
	// with the same Idempotency-Key and gets the server's first answer,
	// not "already checked in" by its own first try.
	sent.loseNextAnswer(exitCode)
	before = len(sent.all())
	got = typeCode(exitCode)
	require.Equal(t, "ADMITTED", got.Word)
	shoot("door-admitted-1280.png")
	tries = sent.all()[before:]
	require.Len(t, tries, 2, "one retry after the lost answer")
	requireSent(tries[0], exitCode, "entry", "North gate")
	require.Equal(t, tries[0], tries[1], "the retry is the same request, Idempotency-Key included")
	dismiss()
	run("change the date", chromedp.Click(`#change`, chromedp.ByQuery), chromedp.WaitVisible(`#dates`, chromedp.ByQuery))
	shoot("door-date-1280.png")

	// The key lives in this tab's sessionStorage, nowhere else.
	var stored struct {
		Session, Local, Cookie string
	}
	run("look where the key is kept", chromedp.Evaluate(`({Session: sessionStorage.getItem("boxoffice.door.key") || "",
		Local: JSON.stringify(Object.assign({}, localStorage)), Cookie: document.cookie})`, &stored))
	require.Equal(t, door, stored.Session)
	require.Equal(t, "{}", stored.Local, "nothing in localStorage")
	require.Empty(t, stored.Cookie, "no cookies")
	run("forget the key", chromedp.Click(`#forget`, chromedp.ByQuery), chromedp.WaitVisible(`#key`, chromedp.ByQuery),
		chromedp.Evaluate(`sessionStorage.getItem("boxoffice.door.key") || ""`, &stored.Session))
	require.Empty(t, stored.Session, "Use another key forgets it")
	shoot("door-key-1280.png")

	var violations []string
	run("read CSP violations", chromedp.Evaluate(`window.__csp`, &violations))
	require.Empty(t, violations, "the page runs under its Content-Security-Policy")
	mu.Lock()
	require.Empty(t, foreign, "the page asks no other host for anything")
	require.Empty(t, exceptions, "no script error")
	require.Empty(t, consoleErrors, "nothing logged as an error")
	mu.Unlock()

	// The server recorded what the page showed, each scan once: the lost
	// answer's retry was a replay, the unreachable tries never arrived.
	for _, want := range []struct {
		code    string
		results []string
	}{
		{camera["code"].(string), []string{"admitted", "already_checked_in"}},
		{typed, []string{"admitted", "already_checked_in", "admitted"}},
		{exitCode, []string{"not_inside", "admitted"}},
	} {
		require.Equal(t, want.results, tb.scanResults(t, want.code), "the scans of %s", want.code)
	}
	st := tb.get(t, "/api/v1/check-ins/stats?eventdate_id="+date, door).data()
	require.Equal(t, map[string]any{"eventdate_id": float64(dateID), "issued": 4.0, "checked_in": 3.0, "inside": 2.0, "rejected_scans": 4.0, "offline_conflicts": 0.0}, st)
}

// scanResults lists the server's record of a code's scans, oldest first:
// "admitted", or the reason of a rejected one.
func (tb *testBundle) scanResults(t *testing.T, code string) []string {
	t.Helper()
	rec, err := tb.m.CheckIns.Ticket(context.Background(), code)
	require.NoError(t, err)
	var got []string
	for _, s := range rec.Scans {
		if s.Reason != nil {
			got = append(got, *s.Reason)
		} else {
			got = append(got, s.Result)
		}
	}
	return got
}

// doorSteps are the steps of a door page test in the browser that run
// drives: door staff's actions and what the page showed.
type doorSteps struct {
	t     *testing.T
	run   func(step string, actions ...chromedp.Action)
	shots string // where screenshots go
}

func (d doorSteps) shoot(name string) {
	d.t.Helper()
	var png []byte
	d.run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
	keepScreenshot(d.t, d.shots, name, png)
}

func (d doorSteps) text(sel string) string {
	d.t.Helper()
	var s string
	d.run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return strings.TrimSpace(s)
}

func (d doorSteps) results() []shown {
	d.t.Helper()
	var r []shown
	d.run("read the results shown", chromedp.Evaluate(`window.__results`, &r))
	return r
}

// nextResult waits for the page to show one more result than it had
// shown (n), and returns it.
func (d doorSteps) nextResult(n int) shown {
	d.t.Helper()
	d.run("wait for a result", chromedp.Poll(`window.__results.length > `+strconv.Itoa(n), nil, browserPoll))
	return d.results()[n]
}

// dismiss taps the result away, unless it went by itself already (a tap
// in its first moments is taken as meant for the screen under it, so the
// tap waits those out).
func (d doorSteps) dismiss() {
	d.t.Helper()
	d.run("tap the result away",
		chromedp.Sleep(400*time.Millisecond),
		chromedp.Evaluate(`(function () { var r = document.getElementById("result"); if (!r.hidden) { r.click(); } return true; })()`, nil),
		chromedp.Poll(`document.getElementById("result").hidden`, nil, browserPoll),
	)
}

// typeCode submits a code in the text field and returns the result.
func (d doorSteps) typeCode(code string) shown {
	d.t.Helper()
	n := len(d.results())
	d.run("type "+code,
		chromedp.SendKeys(`#code`, code, chromedp.ByQuery),
		chromedp.Click(`#code-form button`, chromedp.ByQuery),
	)
	return d.nextResult(n)
}

func groupsOf4(code string) []string {
	var g []string
	for len(code) > 4 {
		g = append(g, code[:4])
		code = code[4:]
	}
	return append(g, code)
}
