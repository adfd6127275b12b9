package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// cspWatch records, in the page, every Content-Security-Policy violation;
// DevTools scripts run whatever the page's policy says.
const cspWatch = `window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sourceFile || "") + ":" + e.lineNumber);
});`

// clickByText returns a script that clicks the first visible element of
// the selector whose text contains text, and says whether it found one.
func clickByText(selector, text string) string {
	return fmt.Sprintf(`(function () {
  for (const el of document.querySelectorAll(%q)) {
    if (el.offsetParent !== null && el.innerText.includes(%q)) { el.click(); return true; }
  }
  return false;
})()`, selector, text)
}

// TestAPIReferenceInBrowser opens /docs in headless Chromium the way a
// partner does, under the page's Content-Security-Policy, and checks that
// the reference renders the document (operations and webhooks), that
// nothing outside the service is requested, and that "try it" sends a
// request with the pasted API key and shows the answer.
func TestAPIReferenceInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	// The document names PUBLIC_BASE_URL, http://boxoffice.test, as its
	// server; Chromium resolves that name to the test server, so the page
	// and "try it" are on one origin, as they are for `make run`.
	port := tb.srv.Listener.Addr().(*net.TCPAddr).Port
	base := tb.m.Config.PublicBaseURL
	host := strings.TrimPrefix(base, "http://")

	ctx := newChromium(t, execPath,
		chromedp.Flag("host-resolver-rules", fmt.Sprintf("MAP %s:80 127.0.0.1:%d", host, port)),
		chromedp.WindowSize(1400, 1000))

	var mu sync.Mutex
	var requested, consoleErrors []string
	answered := map[string]int{}
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requested = append(requested, ev.Request.Method+" "+ev.Request.URL)
		case *network.EventResponseReceived:
			answered[ev.Response.URL] = int(ev.Response.Status)
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, "exception: "+ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				consoleErrors = append(consoleErrors, "console.error: "+strings.Join(parts, " "))
			}
		}
	})
	run := browserSteps(t, ctx)

	var text string
	run("open /docs",
		network.Enable(),
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(cspWatch).Do(ctx)
			return err
		}),
		chromedp.Navigate(base+"/docs"),
		chromedp.Poll(`document.body.innerText.includes("List published events")`, nil, browserPoll),
		chromedp.Text(`body`, &text, chromedp.ByQuery),
	)
	for _, want := range []string{"Boxoffice Developer API", "List published events", "Checkout", "Webhooks"} {
		require.Contains(t, text, want)
	}
	screenshot := func(name string) {
		t.Helper()
		var png []byte
		run("take a screenshot", chromedp.CaptureScreenshot(&png))
		if dir := os.Getenv("BOXOFFICE_SCREENSHOTS"); dir != "" {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			kept := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(kept, png, 0o644))
			t.Logf("screenshot: %s", kept)
		}
	}
	screenshot("api-reference.png")

	// The key field is empty and says what goes there: not Scalar's base64
	// sample, which reads like a key already filled in.
	var placeholders []string
	run("read the key fields' placeholders", chromedp.Evaluate(
		`Array.from(document.querySelectorAll("input.scalar-password-input")).map(function (i) { return i.placeholder + "|" + i.value; })`, &placeholders))
	require.NotEmpty(t, placeholders)
	for _, p := range placeholders {
		require.Equal(t, "Paste your svc_test_… key|", p)
	}
	shootWidths(t, run, t.TempDir(), "api-reference-key")

	// Try it: paste the test key once, open the client of GET /events and send.
	run("paste the key", chromedp.SendKeys(`input.scalar-password-input`, tb.testKey, chromedp.ByQuery))
	run("open the client of GET /api/v1/events",
		chromedp.Poll(clickByText("#reference a, #reference button", "List published events"), nil, browserPoll),
		chromedp.Poll(clickByText("button", "(get /api/v1/events)"), nil, browserPoll))
	run("send", chromedp.Poll(clickByText("button", "Send get request"), nil, browserPoll))
	// The answer shows the demo catalog's events.
	run("read the answer", chromedp.Poll(`document.body.innerText.includes("Highlife Night")`, nil, browserPoll))
	mu.Lock()
	status := 0
	for u, code := range answered {
		if strings.HasPrefix(u, base+"/api/v1/events?") {
			status = code
		}
	}
	mu.Unlock()
	require.Equal(t, http.StatusOK, status, "try it sent GET /api/v1/events with the key: %q", requested)
	var samples int
	run("look for the sample placeholder", chromedp.Evaluate(`document.querySelectorAll('input[placeholder^="QUxMIF"]').length`, &samples))
	require.Zero(t, samples, "no key field of the client shows the sample either")
	screenshot("api-reference-try-it.png")

	var violations []string
	run("read CSP violations", chromedp.Evaluate(`window.__csp`, &violations))
	mu.Lock()
	defer mu.Unlock()
	t.Logf("requests: %d; console errors: %q; CSP violations: %q", len(requested), consoleErrors, violations)
	for _, r := range requested {
		u, err := url.Parse(strings.SplitN(r, " ", 2)[1])
		require.NoError(t, err)
		if u.Scheme == "data" {
			continue
		}
		require.Equal(t, host, u.Host, "the page requests nothing outside the service: %s", r)
	}
	// The one thing the policy refuses: zod (in the bundle) probes once
	// whether eval works, and works without it.
	for _, v := range violations {
		require.True(t, strings.HasPrefix(v, "script-src eval "+base+"/docs/assets/scalar-api-reference.js:"),
			"the page runs under its Content-Security-Policy: %q", violations)
	}
	require.Empty(t, consoleErrors)
}

// TestAPIReferenceRoute checks /docs is mounted outside the key guard, with
// its policy allowing the instance's PUBLIC_BASE_URL, and its scripts served.
func TestAPIReferenceRoute(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	res, err := tb.srv.Client().Get(tb.srv.URL + "/docs")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "connect-src 'self' http://boxoffice.test")
	require.Contains(t, string(body), `data-document="/api/v1/openapi.json"`)
	for _, src := range regexp.MustCompile(`<script src="([^"]+)"`).FindAllStringSubmatch(string(body), -1) {
		res, err := tb.srv.Client().Get(tb.srv.URL + src[1])
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, src[1])
	}
}
