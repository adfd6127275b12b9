package ticketpage

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/testwait"
	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/ticketdoc/ticketdoctest"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/go-chi/chi/v5"
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

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newChromium starts a headless Chromium as cmd/boxoffice's browser tests
// do, and returns the context its actions run in; the browser is closed
// and its profile removed when the test ends.
func newChromium(t *testing.T, execPath string) context.Context {
	t.Helper()
	profile := t.TempDir()
	output := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chromium output:\n%s", output)
		}
	})
	base, cancelBase := context.WithTimeout(context.Background(), 10*time.Minute) // far above the ~5 s this package's browser tests take and Chromium's start (WSURLReadTimeout); a loaded machine is many times slower
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
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(output),
		// chromedp gives Chromium 20 s to print its DevTools address; a
		// loaded machine starting several browsers at once took longer.
		chromedp.WSURLReadTimeout(testwait.Patience),
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

// cspWatch records every Content-Security-Policy violation of a page.
const cspWatch = `window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sourceFile || "") + ":" + e.lineNumber);
});`

// TestPageInBrowser shows a test order of three tickets (valid, checked in,
// void) in headless Chromium, under the page's own headers and policy, at
// a phone's 390 px and a desktop's 1280 px: nothing scrolls sideways on the
// phone, the QR codes are at least 200 px wide there, the void ticket has
// none, every ticket carries the test mark, nothing breaks the policy, and
// the QR codes, cut from the screen, read as their tickets' codes.
// Screenshots: tickets-390.png, tickets-1280.png, tickets-404-390.png
// (BOXOFFICE_SCREENSHOTS=DIR keeps them).
func TestPageInBrowser(t *testing.T) {
	execPath := chromiumPath(t)
	o := ticketdoctest.NewOrder(t, true)
	o.Tickets[0].Code = ticketdoctest.FixedTestCode // scanned from the screen below
	const token = "tok_browser-1"
	h := &Handler{Load: func(_ context.Context, tok string) (*ticketdoc.Order, error) {
		if tok != token {
			return nil, ticketdoc.ErrNotFound
		}
		return o, nil
	}}
	r := chi.NewRouter()
	h.Routes(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	ctx := newChromium(t, execPath)
	shots := t.TempDir()
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		require.NoError(t, chromedp.Run(ctx, actions...), "browser: %s", step)
	}
	run("watch for CSP violations", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(cspWatch).Do(ctx)
		return err
	}))
	// shoot keeps a full-page screenshot at width.
	shoot := func(name string, width int64) {
		t.Helper()
		var height float64
		var shot []byte
		run("screenshot "+name,
			chromedp.Evaluate(`document.documentElement.scrollHeight`, &height),
			chromedp.ActionFunc(func(ctx context.Context) error {
				return chromedp.EmulateViewport(width, int64(height), chromedp.EmulateScale(1)).Do(ctx)
			}),
			chromedp.CaptureScreenshot(&shot),
		)
		keepScreenshot(t, shots, name, shot)
	}
	noViolations := func(what string) {
		t.Helper()
		var violations []string
		run("read CSP violations", chromedp.Evaluate(`window.__csp`, &violations))
		require.Empty(t, violations, "%s runs under its Content-Security-Policy", what)
	}

	// A phone: headless windows are at least 500 px wide, so emulate it.
	run("open the page on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(srv.URL+ticketdoc.PagePath(token)),
		chromedp.WaitVisible(`#ticket-3`, chromedp.ByQuery),
	)
	noViolations("the ticket page")
	var scrollWidth, viewport int
	var qrWidths []float64
	var marks, voids int
	var pdfLink, text string
	run("measure the page",
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth),
		chromedp.Evaluate(`window.innerWidth`, &viewport),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("svg.qr")).map(e => e.getBoundingClientRect().width)`, &qrWidths),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".testmark")).filter(e => e.offsetParent !== null && e.innerText === "Test ticket — not valid for entry").length`, &marks),
		chromedp.Evaluate(`document.querySelectorAll("#ticket-3 svg").length`, &voids),
		chromedp.Evaluate(`new URL(document.querySelector("a.download").href).pathname`, &pdfLink),
		chromedp.Text(`main`, &text, chromedp.ByQuery),
	)
	require.Equal(t, 390, viewport)
	require.LessOrEqual(t, scrollWidth, 390, "nothing scrolls sideways on a phone")
	require.Len(t, qrWidths, 2, "a QR code per ticket that is not void")
	for _, w := range qrWidths {
		require.GreaterOrEqual(t, w, 200.0, "a QR code a phone's camera at the door reads at arm's length")
	}
	require.Equal(t, 3, marks, "every ticket says it is a test ticket")
	require.Zero(t, voids, "the void ticket has no QR code")
	require.Equal(t, ticketdoc.PDFPath(token), pdfLink)
	for _, s := range []string{"1 of 3", "2 of 3", "3 of 3", "Valid", "Checked in", "VOID", "National Theatre", "6:00 PM – 11:00 PM GMT"} {
		require.Contains(t, text, s)
	}

	// The QR codes as the browser drew them on the phone's screen: the
	// first found by the detector, as a door scanner finds it; the
	// second, a fresh random code, read as a picture of one code.
	for i, read := range []func(testing.TB, image.Image) string{ticketdoctest.Scan, ticketdoctest.Decode} {
		var shot []byte
		run("screenshot a QR code", chromedp.Screenshot(fmt.Sprintf(`#ticket-%d svg.qr`, i+1), &shot, chromedp.ByQuery))
		img, err := png.Decode(bytes.NewReader(shot))
		require.NoError(t, err)
		require.Equal(t, o.Tickets[i].Code, read(t, img), "the QR code on screen reads as the ticket's code")
	}

	shoot("tickets-390.png", 390)
	run("open the page on a desktop",
		chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)),
		chromedp.Navigate(srv.URL+ticketdoc.PagePath(token)),
		chromedp.WaitVisible(`#ticket-3`, chromedp.ByQuery),
	)
	run("measure the page", chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth))
	require.LessOrEqual(t, scrollWidth, 1280)
	noViolations("the ticket page")
	shoot("tickets-1280.png", 1280)

	run("open an unknown token",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(srv.URL+ticketdoc.PagePath("tok_unknown")),
		chromedp.WaitVisible(`h1`, chromedp.ByQuery),
		chromedp.Text(`h1`, &text, chromedp.ByQuery),
	)
	require.Equal(t, "These tickets were not found", strings.TrimSpace(text))
	noViolations("the 404 page")
	shoot("tickets-404-390.png", 390)
}
