package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestPortalInBrowser is a partner's first day in the developer portal, in
// a real browser: sign up, get approved by an operator (the CLI), sign in,
// create an app, copy its test key with the copy button, make a sandbox
// checkout with it over the REST API, point webhooks at a receiver, send a
// test event, see it delivered in the log, redeliver it, and rotate the key
// so the old one is refused. Screenshots at 390 px and 1280 px are kept in
// BOXOFFICE_SCREENSHOTS when it is set: portal-{signed-up,sign-in-refused,
// new-app,deliveries}-{390,1280}.png.
func TestPortalInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	pb := setupPortal(t, "sqlite", fastJobs)
	rc := newReceiver(t, ok)
	pb.startJobs(t)

	ctx := newChromium(t, execPath)
	// Rotating asks "are you sure?" (window.confirm): say yes.
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	shots := t.TempDir()
	run := browserSteps(t, ctx)
	// shoot keeps a full-page screenshot at a phone's width and a
	// desktop's.
	shoot := func(name string) {
		t.Helper()
		for _, width := range []int64{390, 1280} {
			var height float64
			var png []byte
			run(fmt.Sprintf("screenshot %s at %d px", name, width),
				chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(1)),
				chromedp.Evaluate(`document.documentElement.scrollHeight`, &height),
				chromedp.ActionFunc(func(ctx context.Context) error {
					return chromedp.EmulateViewport(width, int64(height), chromedp.EmulateScale(1)).Do(ctx)
				}),
				chromedp.CaptureScreenshot(&png),
				chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)),
			)
			keepScreenshot(t, shots, fmt.Sprintf("portal-%s-%d.png", name, width), png)
		}
	}
	text := func(sel string) string {
		t.Helper()
		var s string
		run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery, chromedp.NodeVisible))
		return s
	}
	base := pb.srv.URL

	// Sign up.
	run("sign up",
		chromedp.Navigate(base+"/portal/signup"),
		chromedp.WaitVisible(`#f-name`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-name`, "Kofi Tickets", chromedp.ByQuery),
		chromedp.SendKeys(`#f-email`, "kofi@partner.example", chromedp.ByQuery),
		chromedp.SendKeys(`#f-password`, partnerPassword, chromedp.ByQuery),
		chromedp.Click(`main button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.badge.pending_approval`, chromedp.ByQuery),
	)
	require.Contains(t, text("main"), "is awaiting approval")
	shoot("signed-up")

	// The operator approves the account with the CLI.
	pending := mustJSON(t, pb.dbURL, "accounts", "list", "--status", "pending_approval", "--json")["accounts"].([]any)
	require.Len(t, pending, 1)
	_, err := runCLI(t, pb.dbURL, "accounts", "set-status", fmt.Sprint(pending[0].(map[string]any)["id"]), "active")
	require.NoError(t, err)

	// A mistyped password, then the right one.
	run("sign in with a wrong password",
		chromedp.Navigate(base+"/portal/signin"),
		chromedp.WaitVisible(`#f-email`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-email`, "kofi@partner.example", chromedp.ByQuery),
		chromedp.SendKeys(`#f-password`, "not my password", chromedp.ByQuery),
		chromedp.Click(`main button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.notice.err`, chromedp.ByQuery),
	)
	require.Equal(t, "The email address or password is not right.", strings.TrimSpace(text(".notice.err")))
	shoot("sign-in-refused")
	run("sign in",
		chromedp.Navigate(base+"/portal/signin"),
		chromedp.WaitVisible(`#f-email`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-email`, "kofi@partner.example", chromedp.ByQuery),
		chromedp.SendKeys(`#f-password`, partnerPassword, chromedp.ByQuery),
		chromedp.Click(`main button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#f-name`, chromedp.ByQuery),
	)
	require.Contains(t, text("main"), "No apps yet.")
	run("create an app",
		chromedp.SendKeys(`#f-name`, "Kofi's web shop", chromedp.ByQuery),
		chromedp.Click(`main form button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#test-key`, chromedp.ByQuery),
	)
	shown := strings.TrimSpace(text("#test-key"))
	require.Regexp(t, testKeyRE, shown)
	shoot("new-app")

	// Copy the test key with the copy button, and read the clipboard.
	var copied string
	run("copy the test key",
		browser.GrantPermissions([]browser.PermissionType{browser.PermissionTypeClipboardReadWrite, browser.PermissionTypeClipboardSanitizedWrite}).
			WithOrigin(base),
		chromedp.Click(`button[data-copy="test-key"]`, chromedp.ByQuery, chromedp.NodeVisible),
		chromedp.WaitVisible(`button[data-copy="test-key"].done`, chromedp.ByQuery),
		chromedp.Evaluate(`navigator.clipboard.readText()`, &copied, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}),
	)
	require.Equal(t, shown, copied)
	require.Equal(t, "Copied", strings.TrimSpace(text(`button[data-copy="test-key"]`)))
	var appPath string
	run("find the app's page", chromedp.AttributeValue(`form[action$="/redirect-domains"]`, "action", &appPath, nil, chromedp.ByQuery))
	appPath = strings.TrimSuffix(appPath, "/redirect-domains")

	// The keys were shown on the page the form led to (POST/redirect/GET):
	// reloading it shows them no more and creates no second app.
	var keysShown bool
	run("reload the new app's page", chromedp.Reload(), chromedp.WaitVisible(`.notice.ok`, chromedp.ByQuery),
		chromedp.Evaluate(`!!document.getElementById("test-key")`, &keysShown))
	require.False(t, keysShown)
	require.Contains(t, text(".notice.ok"), "Keys and secrets are shown only once")
	apps, err := store.CountApps(context.Background(), pb.db)
	require.NoError(t, err)
	require.Equal(t, 2, apps, "the demo app and this one")

	// Allow the redirect host, then check out with the copied key.
	run("add a redirect host",
		chromedp.SendKeys(`#f-redirect-domain`, "partner.example", chromedp.ByQuery),
		chromedp.Click(`form[action$="/redirect-domains"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//li/code[text()="partner.example"]`, chromedp.BySearch),
	)
	res := pb.checkout(t, copied, newIdemKey(), pb.highlife(2))
	require.Equal(t, http.StatusCreated, res.Status, "checkout with the copied key: %s", res.Raw)
	ref := res.data()["order_reference"].(string)
	require.True(t, strings.HasPrefix(ref, "sbx_"), ref)

	// Webhooks to the local receiver; send a test event.
	run("set the webhook URL",
		chromedp.SendKeys(`#f-webhook-url`, rc.srv.URL+"/hooks", chromedp.ByQuery),
		chromedp.Click(`form[action$="/webhook-url"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//p[contains(., "Webhook URL saved.")]`, chromedp.BySearch),
	)
	run("send a test event",
		chromedp.Click(`form[action$="/test-event"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//p[contains(., "Test event queued.")]`, chromedp.BySearch),
	)
	d := rc.waitType(t, "webhook.test")
	eventID := d.Header.Get("X-SVC-Event-Id")
	require.Regexp(t, `^evt_`, eventID)
	row := `//tr[.//code[text()="` + eventID + `"]]`
	waitRow := func(what, want string) {
		t.Helper()
		waitFor(t, 10*time.Second, what, func() bool {
			var s string
			if err := chromedp.Run(ctx, chromedp.Navigate(base+appPath), chromedp.Text(row, &s, chromedp.BySearch, chromedp.NodeVisible)); err != nil {
				return false
			}
			return strings.Contains(strings.Join(strings.Fields(s), " "), want)
		})
	}
	waitRow("the delivery in the log", "delivered 1 HTTP 204")
	require.Contains(t, text("main"), ref, "the order is listed")
	shoot("deliveries")

	run("redeliver",
		chromedp.Click(row+`//button[text()="Redeliver"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//p[contains(., "Event queued for redelivery.")]`, chromedp.BySearch),
	)
	waitFor(t, 10*time.Second, "the redelivery", func() bool {
		n := 0
		for _, got := range rc.deliveries() {
			if got.Header.Get("X-SVC-Event-Id") == eventID {
				n++
			}
		}
		return n == 2
	})
	waitRow("the second attempt in the log", "delivered 2 HTTP 204")

	// Rotate the test key: the old one is refused at once.
	run("rotate the test key",
		chromedp.Click(`form[action$="/keys/test/rotate"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#test-key`, chromedp.ByQuery),
	)
	rotated := strings.TrimSpace(text("#test-key"))
	require.Regexp(t, testKeyRE, rotated)
	require.NotEqual(t, copied, rotated)
	old := pb.get(t, "/api/v1/events", copied)
	require.Equal(t, http.StatusUnauthorized, old.Status)
	require.Equal(t, "invalid_api_key", old.errorCode())
	require.Equal(t, http.StatusOK, pb.get(t, "/api/v1/events", rotated).Status)
}
