package doorpage

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// chromiumPath returns Debian's Chromium. Without it the test is skipped on
// a developer's machine but fails in CI (CI set), which installs it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, but CI is set: .ci/run installs it (apt-get install chromium); the browser test must run in CI")
	}
	t.Skip("chromium not found; `apt-get install chromium` enables this browser test")
	return ""
}

// syncBuffer collects the browser's output for a failing test's log.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is the output without the D-Bus errors Chromium prints in
// containers that have no system bus.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var keep []string
	for _, line := range strings.Split(b.buf.String(), "\n") {
		if !strings.Contains(line, ":ERROR:dbus/") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// newChromium starts a headless Chromium as the other browser tests do,
// whose camera is a fake device playing video (a .y4m file) and whose
// camera permission is granted without asking, and returns the context
// its actions run in; the browser is closed and its profile removed when
// the test ends.
func newChromium(t *testing.T, execPath, video string) context.Context {
	t.Helper()
	profile := t.TempDir()
	output := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chromium output:\n%s", output)
		}
	})
	base, cancelBase := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancelBase)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-video-capture", video),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(output),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx)
		cancelCtx()
	})
	return ctx
}

// keepScreenshot writes png to the test's temporary directory and, when
// BOXOFFICE_SCREENSHOTS is set, to that directory too.
func keepScreenshot(t *testing.T, tmp, name string, shot []byte) {
	t.Helper()
	dirs := []string{tmp}
	if dir := os.Getenv("BOXOFFICE_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, shot, 0o644))
		t.Logf("screenshot: %s", path)
	}
}

// pageWatch runs in the page before its own scripts: it records every
// Content-Security-Policy violation, and every result the page shows
// (results go away by themselves after a few seconds, so the test reads
// this list instead of racing the screen).
const pageWatch = `window.__csp = [];
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

// shown is one result as the page showed it.
type shown struct {
	Kind, Word, Reason, Ticket string
}

// sentCheckIn is one POST /api/v1/check-ins as the server received it.
type sentCheckIn struct {
	Key, IdempotencyKey, ContentType string
	Body                             map[string]any
}

// checkInLog records the check-ins that reach the server, and can lose
// the answer to one: the server does the check-in, and the page gets a
// 502 instead, as from a proxy whose upstream went quiet.
type checkInLog struct {
	mu   sync.Mutex
	sent []sentCheckIn
	lose string // the code whose next answer is lost
	down string // the code that never reaches the server (503)
}

func (l *checkInLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != CheckInsPath {
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
		if down {
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
			return
		}
		if lose {
			next.ServeHTTP(httptest.NewRecorder(), r)
			http.Error(w, "upstream timed out", http.StatusBadGateway)
			return
		}
		next.ServeHTTP(w, r)
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

// TestDoorInBrowser works the door page in headless Chromium as door staff
// would on a phone (390 px) and then a desktop (1280 px): a wrong key and
// the right one, the date, a ticket's QR code read by the camera (a fake
// capture device playing a video of the code, made here), typed codes,
// entry and exit, a gate name, a reload that keeps the key and date, and
// an answer lost on its way back, and a server out of reach.
// Every code reaches the server exactly as encoded, with the key and the
// chosen date; the camera does not send a code it keeps seeing twice;
// each answer is shown with its reason in staff's words; nothing scrolls
// sideways on the phone; the page asks no other host for anything and
// breaks nothing of its policy; the key is kept in the tab's
// sessionStorage only. Screenshots door-{key,date,scan,admitted,rejected}
// -{390,1280}.png and door-error-390.png (BOXOFFICE_SCREENSHOTS=DIR keeps
// them).
func TestDoorInBrowser(t *testing.T) {
	execPath := chromiumPath(t)
	fx := newDoorFixture(t)
	sent := &checkInLog{}
	srv := httptest.NewServer(sent.wrap(fx.Handler))
	t.Cleanup(srv.Close)
	origin, err := url.Parse(srv.URL)
	require.NoError(t, err)

	ctx := newChromium(t, execPath, writeY4M(t, fx.Camera))
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

	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		require.NoError(t, chromedp.Run(ctx, actions...), "browser: %s", step)
	}
	run("watch the page", network.Enable(), runtime.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(pageWatch).Do(ctx)
		return err
	}))
	shoot := func(name string) {
		t.Helper()
		var shot []byte
		run("screenshot "+name, chromedp.CaptureScreenshot(&shot))
		keepScreenshot(t, shots, name, shot)
	}
	fitsWidth := func(what string, width int) {
		t.Helper()
		var scrollWidth int
		run("measure "+what, chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth))
		require.LessOrEqual(t, scrollWidth, width, "%s: nothing scrolls sideways", what)
	}
	text := func(sel string) string {
		t.Helper()
		var s string
		run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
		return strings.TrimSpace(s)
	}
	results := func() []shown {
		t.Helper()
		var r []shown
		run("read the results shown", chromedp.Evaluate(`window.__results`, &r))
		return r
	}
	// nextResult waits for the page to show one more result than it had
	// shown (n), and returns it.
	nextResult := func(n int) shown {
		t.Helper()
		run("wait for a result", chromedp.Poll(`window.__results.length > `+strconv.Itoa(n), nil, chromedp.WithPollingTimeout(20*time.Second)))
		r := results()
		return r[n]
	}
	// dismiss taps the result away, unless it went by itself already (a
	// tap in its first moments is taken as meant for the screen under it,
	// so the tap waits those out).
	dismiss := func() {
		t.Helper()
		run("tap the result away",
			chromedp.Sleep(400*time.Millisecond),
			chromedp.Evaluate(`(function () { var r = document.getElementById("result"); if (!r.hidden) { r.click(); } return true; })()`, nil),
			chromedp.Poll(`document.getElementById("result").hidden`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		)
	}
	// typeCode submits a code in the text field and returns the result.
	typeCode := func(code string) shown {
		t.Helper()
		n := len(results())
		run("type "+code,
			chromedp.SendKeys(`#code`, code, chromedp.ByQuery),
			chromedp.Click(`#code-form button`, chromedp.ByQuery),
		)
		return nextResult(n)
	}
	lastSent := func() sentCheckIn {
		t.Helper()
		all := sent.all()
		require.NotEmpty(t, all)
		return all[len(all)-1]
	}
	requireSent := func(s sentCheckIn, code, direction, gate string) {
		t.Helper()
		want := map[string]any{"code": code, "eventdate_id": float64(fx.DateID), "direction": direction}
		if gate != "" {
			want["gate"] = gate
		}
		require.Equal(t, want, s.Body, "the check-in's body")
		require.Equal(t, fx.Key, s.Key, "the scanner key in X-API-Key")
		require.Equal(t, "application/json", s.ContentType)
		require.Regexp(t, `^door-[0-9a-f]{32}$`, s.IdempotencyKey)
	}

	dateID := strconv.FormatInt(fx.DateID, 10)

	// A phone: headless windows are at least 500 px wide, so emulate it.
	run("open the door page on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(srv.URL+PagePath),
		chromedp.WaitVisible(`#key`, chromedp.ByQuery),
	)
	fitsWidth("the key step", 390)
	shoot("door-key-390.png")

	run("paste an app key", chromedp.SendKeys(`#key`, "svc_test_abcdef", chromedp.ByQuery), chromedp.Click(`#key-go`, chromedp.ByQuery),
		chromedp.WaitVisible(`#key-error`, chromedp.ByQuery))
	require.Contains(t, text(`#key-error`), "app's API key")
	run("paste a wrong scanner key", chromedp.SetValue(`#key`, "svc_scan_test_nope", chromedp.ByQuery), chromedp.Click(`#key-go`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("key-error").textContent.indexOf("not valid") >= 0`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	run("paste the scanner key", chromedp.SetValue(`#key`, fx.Key, chromedp.ByQuery), chromedp.Click(`#key-go`, chromedp.ByQuery),
		chromedp.WaitVisible(`#date-`+dateID, chromedp.ByQuery))
	require.Equal(t, fx.EventName, text(`#bar-event`))
	require.Contains(t, text(`#date-`+dateID), fx.DateDay)
	fitsWidth("the date step", 390)
	shoot("door-date-390.png")

	// The camera reads the ticket as soon as the scan screen is up.
	run("pick the date", chromedp.Click(`#date-`+dateID, chromedp.ByQuery))
	got := nextResult(0)
	shoot("door-admitted-390.png")
	require.Equal(t, shown{Kind: "admitted", Word: "ADMITTED", Ticket: fx.CameraLine}, got)
	requireSent(lastSent(), fx.Camera, "entry", "")
	fitsWidth("the result", 390)
	run("wait for the scan screen again", chromedp.Poll(`document.getElementById("result").hidden`, nil, chromedp.WithPollingTimeout(10*time.Second)))

	// The ticket stays in front of the camera: it is the same scan.
	run("keep the ticket in view", chromedp.Sleep(4*time.Second))
	require.Len(t, sent.all(), 1, "a code the camera keeps seeing is sent once")
	require.Len(t, results(), 1)
	run("wait for the counts", chromedp.Poll(`document.getElementById("n-checked").textContent === "1"`, nil, chromedp.WithPollingTimeout(15*time.Second)))
	require.Equal(t, "1", text(`#n-inside`))
	require.NotEqual(t, "–", text(`#n-issued`))
	require.Contains(t, text(`#camera-state`), "QR code")
	fitsWidth("the scan screen", 390)
	shoot("door-scan-390.png")

	// Typed, as the ticket prints it: groups of four, any case.
	run("name the gate", chromedp.SendKeys(`#gate`, "North gate", chromedp.ByQuery))
	typed := strings.ToLower(strings.Join(groupsOf4(fx.Typed), " "))
	got = typeCode(typed)
	require.Equal(t, "admitted", got.Kind)
	require.Equal(t, "ADMITTED", got.Word)
	first := lastSent()
	requireSent(first, fx.Typed, "entry", "North gate")
	dismiss()

	got = typeCode(fx.Typed)
	require.Equal(t, "rejected", got.Kind)
	require.Equal(t, "REJECTED", got.Word)
	require.Regexp(t, regexp.MustCompile(`^Already checked in at \d\d:\d\d \(North gate\)$`), got.Reason)
	shoot("door-rejected-390.png")
	again := lastSent()
	requireSent(again, fx.Typed, "entry", "North gate")
	require.NotEqual(t, first.IdempotencyKey, again.IdempotencyKey, "every scan has its own Idempotency-Key")
	dismiss()

	// The server cannot be reached for this one: the page tries four
	// times with one Idempotency-Key, then says nothing was checked, and
	// waits for a tap. The ticket scanned again goes with the same key.
	sent.unreachableFor(fx.Unknown)
	before := len(sent.all())
	got = typeCode(fx.Unknown)
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
	got = typeCode(fx.Unknown)
	require.Equal(t, shown{Kind: "rejected", Word: "REJECTED", Reason: "Unknown ticket"}, got)
	requireSent(lastSent(), fx.Unknown, "entry", "North gate")
	require.Equal(t, tries[0].IdempotencyKey, lastSent().IdempotencyKey, "a scan after one without an answer reuses its key")
	dismiss()

	run("switch to exit", chromedp.Click(`#dir-exit`, chromedp.ByQuery))
	got = typeCode(fx.Typed)
	require.Equal(t, "admitted", got.Kind)
	require.Equal(t, "EXIT OK", got.Word)
	requireSent(lastSent(), fx.Typed, "exit", "North gate")
	dismiss()
	got = typeCode(fx.ExitCode)
	require.Equal(t, "rejected", got.Kind)
	require.Equal(t, "Not inside — no entry to exit from", got.Reason)
	requireSent(lastSent(), fx.ExitCode, "exit", "North gate")
	dismiss()
	run("switch to entry", chromedp.Click(`#dir-entry`, chromedp.ByQuery))

	// A desktop, reloaded: the tab still has the key and the date, and the
	// camera reads the ticket it already admitted.
	run("reload on a desktop",
		chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)),
		chromedp.Navigate(srv.URL+PagePath),
	)
	got = nextResult(0) // the reload starts the page's list anew
	shoot("door-rejected-1280.png")
	require.Equal(t, "rejected", got.Kind)
	require.Regexp(t, `^Already checked in at \d\d:\d\d$`, got.Reason)
	require.Equal(t, fx.CameraLine, got.Ticket)
	requireSent(lastSent(), fx.Camera, "entry", "North gate")
	run("wait for the scan screen", chromedp.Poll(`document.getElementById("result").hidden`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	fitsWidth("the scan screen", 1280)
	shoot("door-scan-1280.png")
	// The answer to this one is lost on its way back: the page asks again
	// with the same Idempotency-Key and gets the server's first answer,
	// not "already checked in" by its own first try.
	sent.loseNextAnswer(fx.ExitCode)
	before = len(sent.all())
	got = typeCode(fx.ExitCode)
	require.Equal(t, "ADMITTED", got.Word)
	shoot("door-admitted-1280.png")
	tries = sent.all()[before:]
	require.Len(t, tries, 2, "one retry after the lost answer")
	requireSent(tries[0], fx.ExitCode, "entry", "North gate")
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
	require.Equal(t, fx.Key, stored.Session)
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
	defer mu.Unlock()
	require.Empty(t, foreign, "the page asks no other host for anything")
	require.Empty(t, exceptions, "no script error")
	require.Empty(t, consoleErrors, "nothing logged as an error")
}

func groupsOf4(code string) []string {
	var g []string
	for len(code) > 4 {
		g = append(g, code[:4])
		code = code[4:]
	}
	return append(g, code)
}
