package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/boxoffice/boxoffice/webhook/verify"
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

// String returns everything written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// withoutDBus is the output without the D-Bus errors Chromium prints in
// containers that have no system bus.
func (b *syncBuffer) withoutDBus() string {
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

// newChromium starts a headless Chromium for the test, 1280×900, with the
// extra options, and returns the context its actions run in; the browser
// is closed and its profile removed when the test ends. Its output is
// logged if the test fails.
func newChromium(t *testing.T, execPath string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	// t.TempDir registers its removal before the browser's shutdown below,
	// so Chromium has exited before its profile is removed.
	profile := t.TempDir()
	output := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chromium output (D-Bus noise left out):\n%s", output.withoutDBus())
		}
	})
	// A bound for the whole browser session, far above the door page's
	// test (the longest: about a minute with the race detector on a quiet
	// machine, three on a loaded one, with every browser test of the
	// package running at once) and below make test's -timeout 30m; a step
	// that hangs fails sooner, at browserStepTimeout.
	base, cancelBase := context.WithTimeout(context.Background(), 25*time.Minute)
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
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(output),
		// chromedp gives Chromium 20 s to print its DevTools address; a
		// loaded machine starting several browsers at once took longer.
		chromedp.WSURLReadTimeout(testwait.Patience),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(base, append(opts, extra...)...)
	t.Cleanup(cancelAlloc) // waits for the browser process to exit
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the browser gracefully
		cancelCtx()
	})
	// The first Run starts the browser and ties it to its context: start
	// it here, on the session's, so a step's shorter one never owns it.
	require.NoError(t, chromedp.Run(ctx), "browser: start chromium")
	return ctx
}

// browserStepTimeout bounds one step of browserSteps: far above any step
// seen (25 s, on a 2-core machine running every browser test of the
// package at once under the race detector; several times that with
// another suite running), below the session's bound. A step that polls
// the page polls for browserPoll, less than this, so it fails saying what
// it waited for.
const browserStepTimeout = 2 * testwait.Patience

// browserPoll bounds chromedp.Poll in a step: only a stuck page reaches it.
var browserPoll = chromedp.WithPollingTimeout(testwait.Patience)

// browserSteps returns a function that runs one named step of actions in
// ctx's browser, failing the test with the step's name, and logs how long
// it took.
func browserSteps(t *testing.T, ctx context.Context) func(step string, actions ...chromedp.Action) {
	return func(step string, actions ...chromedp.Action) {
		t.Helper()
		start := time.Now()
		stepCtx, cancel := context.WithTimeout(ctx, browserStepTimeout)
		defer cancel()
		require.NoError(t, chromedp.Run(stepCtx, actions...), "browser: %s", step)
		t.Logf("browser: %s (%s)", step, time.Since(start).Round(time.Millisecond))
	}
}

// shootWidths keeps a full-page screenshot of the page now shown at a
// phone's width (390 px) and a desktop's (1280 px), as NAME-390.png and
// NAME-1280.png (keepScreenshot), and checks nothing is wider than the
// phone's screen.
func shootWidths(t *testing.T, run func(string, ...chromedp.Action), dir, name string) {
	t.Helper()
	for _, width := range []int64{390, 1280} {
		var png []byte
		run(fmt.Sprintf("screenshot %s at %d px", name, width),
			chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(1)),
			chromedp.FullScreenshot(&png, 100), // 100: PNG
		)
		keepScreenshot(t, dir, fmt.Sprintf("%s-%d.png", name, width), png)
		requireFits(t, run, name, width)
	}
	run("back to the desktop", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))
}

// requireFits checks that the browser's window is width pixels wide and
// the page now shown no wider, as it is and with its long words written in
// its widest letter (widestWordsJS).
func requireFits(t *testing.T, run func(string, ...chromedp.Action), what string, width int64) {
	t.Helper()
	what = fmt.Sprintf("%s at %d px", what, width)
	var viewport, scroll int64
	var widest struct {
		Width   int64
		Culprit string
	}
	run("measure "+what,
		chromedp.Evaluate(`window.innerWidth`, &viewport),
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &scroll),
		chromedp.Evaluate(widestWordsJS, &widest),
	)
	require.Equal(t, width, viewport, "%s: the window's width", what)
	require.LessOrEqual(t, scroll, viewport, "%s scrolls sideways", what)
	require.LessOrEqual(t, widest.Width, viewport,
		"%s scrolls sideways when its long words are made of its widest letter (deepest element too wide: %s)", what, widest.Culprit)
}

// widestWordsJS answers the page's width when every word of 16 characters
// or more in its text (references, keys, addresses, URLs: the data a page
// shows) is written with "W", the widest letter, and then puts the text
// back, with the first element past the screen's edge. A page that fits the phone with one random reference but not
// with another wraps its data too late; this finds it on every run rather
// than on the run whose reference happens to be wide.
const widestWordsJS = `(() => {
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const kept = [];
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.parentElement && n.parentElement.closest("script, style")) continue;
    const widened = n.nodeValue.replace(/\S{16,}/g, w => "W".repeat(w.length));
    if (widened !== n.nodeValue) { kept.push([n, n.nodeValue]); n.nodeValue = widened; }
  }
  const width = document.documentElement.scrollWidth;
  let culprit = "";
  if (width > window.innerWidth) {
    // The deepest element whose content is wider than its box, or that
    // reaches past the screen's edge; visually hidden parts left out.
    const wide = e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > window.innerWidth;
    for (const e of document.body.querySelectorAll("*")) {
      if (wide(e) && ![...e.children].some(wide) && !e.closest(".sr, thead")) {
        culprit = e.tagName.toLowerCase() + (e.className ? "." + e.className : "") + ": " + e.textContent.trim().slice(0, 80);
        break;
      }
    }
  }
  for (const [n, v] of kept) n.nodeValue = v;
  return {width, culprit};
})()`

// keepScreenshot writes png to the test's temporary directory and, when
// BOXOFFICE_SCREENSHOTS is set, to that directory too.
func keepScreenshot(t *testing.T, tmp, name string, png []byte) {
	t.Helper()
	shot := filepath.Join(tmp, name)
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s", shot)
	if dir := os.Getenv("BOXOFFICE_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		kept := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(kept, png, 0o644))
		t.Logf("screenshot: %s", kept)
	}
}

const partnerDonePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner shop</title><link rel="icon" href="data:,"></head>
<body><h1 id="thanks">Thanks from the partner</h1><p>Your tickets are on their way.</p></body></html>`

// TestSandboxPageInBrowser pays a sandbox checkout the way a developer does:
// in a real browser, by clicking the button, following the redirect to the
// partner's success_url.
func TestSandboxPageInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)

	tb := setup(t, storetest.MustOpen(t, "sqlite"), fastJobs)
	rc := newReceiver(t, ok)
	tb.pointWebhooks(t, rc.srv.URL)
	tb.startJobs(t)

	// The partner's shop: success_url is https://partner.example/done, which
	// Chromium resolves to this server.
	var partnerHits atomic.Int32
	partner := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/done" {
			http.NotFound(w, r)
			return
		}
		partnerHits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, partnerDonePage)
	}))
	t.Cleanup(partner.Close)
	partnerPort := partner.Listener.Addr().(*net.TCPAddr).Port

	ctx := newChromium(t, execPath,
		chromedp.Flag("host-resolver-rules", fmt.Sprintf("MAP partner.example:443 127.0.0.1:%d", partnerPort)))
	shots := t.TempDir()
	run := browserSteps(t, ctx)

	res := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(2))
	require.Equal(t, http.StatusCreated, res.Status, "checkout: %s", res.Raw)
	sess := res.data()
	ref, _ := sess["order_reference"].(string)
	require.NotEmpty(t, ref, "order_reference in %s", res.Raw)
	checkoutURL, _ := sess["checkout_url"].(string)
	require.True(t, strings.HasPrefix(checkoutURL, "http://boxoffice.test/"), "checkout_url %q", checkoutURL)
	pageURL := tb.srv.URL + strings.TrimPrefix(checkoutURL, "http://boxoffice.test")

	var text string
	run("open the sandbox page",
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(`button[value="paid"]`, chromedp.ByQuery),
		chromedp.Text(`body`, &text, chromedp.ByQuery),
	)
	require.Contains(t, text, "Highlife Night at the Conference Centre")
	require.Contains(t, text, "240.00")

	var png []byte
	run("take a screenshot", chromedp.FullScreenshot(&png, 100))
	keepScreenshot(t, shots, "sandbox-checkout.png", png)

	var loc, body string
	run("pay and return to the partner",
		chromedp.Click(`button[value="paid"]`, chromedp.ByQuery, chromedp.NodeVisible),
		chromedp.WaitVisible(`#thanks`, chromedp.ByQuery),
		chromedp.Location(&loc),
		chromedp.Text(`body`, &body, chromedp.ByQuery),
	)
	require.Equal(t, "https://partner.example/done?order_reference="+ref, loc, "the partner learns which order returned")
	require.Contains(t, body, "Thanks from the partner")
	require.EqualValues(t, 1, partnerHits.Load(), "the partner's success page was loaded once")

	order := tb.get(t, "/api/v1/orders/"+ref, tb.testKey)
	require.Equal(t, http.StatusOK, order.Status, "order: %s", order.Raw)
	require.Equal(t, "paid", order.data()["status"])

	d := rc.waitType(t, "order.paid")
	require.NoError(t, verify.Verify(tb.demo.App.WebhookSecret, d.Header, d.Body), "order.paid signature")
	ev := d.event(t)
	require.Equal(t, ref, ev["data"].(map[string]any)["order"].(map[string]any)["reference"])
}

// TestPlaygroundSubscriptionInBrowser runs a subscription in the GraphiQL
// playground as a person does, in headless Chromium: the key in the
// Headers tab, the subscription in the editor, the run button; the result
// pane shows the current availability, then the new one after a live
// checkout elsewhere. It proves the embedded GraphiQL bundle's graphql-ws
// client, the page's subscriptionUrl and the server agree.
func TestPlaygroundSubscriptionInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	tb := liveSetup(t, storetest.MustOpen(t, "sqlite"))
	date, reg := tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"], tb.demo.Catalog.Tickets["DEMO-HIGHLIFE-REG"]

	ctx := newChromium(t, execPath)
	run := browserSteps(t, ctx)
	// result is the result pane's text once it contains want.
	result := func(step, want string) string {
		t.Helper()
		var text string
		t.Cleanup(func() {
			if t.Failed() {
				var now string
				_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('.result-window .CodeMirror').CodeMirror.getValue() + " | query: " + document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`, &now))
				t.Logf("result pane at %s: %s; hub %+v", step, now, tb.m.Live.Stats())
			}
		})
		run(step, chromedp.Poll(`(function () {
			var t = document.querySelector('.result-window .CodeMirror').CodeMirror.getValue();
			return t.indexOf(`+strconv.Quote(want)+`) >= 0 ? t : false;
		})()`, &text, browserPoll))
		return text
	}

	query := fmt.Sprintf(`subscription { availabilityChanged(eventDateId: %d) { tickets { ticketId quantityAvailable } } }`, date)
	headers := fmt.Sprintf(`{"X-API-Key": %q}`, tb.testKey)
	// GraphiQL starts from what the browser stored (the page persists
	// headers): store the key and the subscription, as typing them in on
	// an earlier visit would, so the run button runs exactly them. They
	// are stored from another page of the origin, so no GraphiQL is
	// running to overwrite them with its own state.
	var shown string
	run("open the playground with the key and the subscription, press run",
		chromedp.Navigate(tb.srv.URL+"/healthz"),
		chromedp.Evaluate(fmt.Sprintf(`localStorage.clear();
			localStorage.setItem("graphiql:query", %s);
			localStorage.setItem("graphiql:headers", %s);`, strconv.Quote(query), strconv.Quote(headers)), nil),
		chromedp.Navigate(tb.srv.URL+"/graphql"),
		chromedp.WaitVisible(`.graphiql-query-editor .CodeMirror`, chromedp.ByQuery),
		chromedp.Poll(`(function () {
			var e = document.querySelector('.graphiql-query-editor .CodeMirror');
			var q = e && e.CodeMirror.getValue();
			return q === `+strconv.Quote(query)+` ? q : false;
		})()`, &shown, browserPoll),
		chromedp.Click(`.graphiql-execute-button`, chromedp.ByQuery, chromedp.NodeVisible),
	)
	require.Equal(t, query, shown)
	first := result("the current availability", `"quantityAvailable": 586`)
	require.Contains(t, first, fmt.Sprintf(`"ticketId": %d`, reg))

	res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(2))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	result("the availability after a live checkout", `"quantityAvailable": 584`)
	waitFor(t, liveWait, "the playground's subscription", func() bool { return tb.m.Live.Stats().Subscriptions == 1 })
}
