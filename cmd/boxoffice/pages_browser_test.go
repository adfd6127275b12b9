package main

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestReturnPagesInBrowser walks a buyer through the live checkout in
// headless Chromium, under each page's Content-Security-Policy, twice: pay
// on the development provider's page, or decline. Each time the return
// page shows the outcome and links back to the partner's success_url or
// cancel_url, whose page receives the order reference. Every page runs
// without a CSP violation: the sandbox page, the hosted page, the
// provider's page, the return pages, the 404 page, and the playground,
// whose inline script (allowed by its hash) still runs GraphiQL.
// Screenshots: return-paid.png and return-declined.png
// (BOXOFFICE_SCREENSHOTS=DIR keeps them).
func TestReturnPagesInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	tb := setup(t, storetest.MustOpen(t, "sqlite"), fastJobs)

	// The partner's shop at https://partner.example shows which order came
	// back, from the query parameter the service adds.
	partner := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/done" && r.URL.Path != "/cancel" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Partner shop</title><link rel="icon" href="data:,"></head>
<body><h1 id="partner">Partner shop %s</h1><p id="ref">%s</p></body></html>`,
			html.EscapeString(r.URL.Path), html.EscapeString(r.URL.Query().Get("order_reference")))
	}))
	t.Cleanup(partner.Close)
	// Chromium resolves PUBLIC_BASE_URL (http://boxoffice.test) to the
	// service and partner.example to the shop, so every URL the service
	// hands out is followed as it is.
	ctx := newChromium(t, execPath, chromedp.Flag("host-resolver-rules", fmt.Sprintf("MAP partner.example:443 127.0.0.1:%d, MAP boxoffice.test:80 127.0.0.1:%d",
		partner.Listener.Addr().(*net.TCPAddr).Port, tb.srv.Listener.Addr().(*net.TCPAddr).Port)))
	shots := t.TempDir()
	run := browserSteps(t, ctx)
	run("watch for CSP violations", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(cspWatch).Do(ctx)
		return err
	}))
	// noViolations checks the page now shown ran under its policy with
	// nothing refused.
	noViolations := func(what string) {
		t.Helper()
		var violations []string
		run("read CSP violations of "+what, chromedp.Evaluate(`window.__csp`, &violations))
		require.Empty(t, violations, "%s runs under its Content-Security-Policy", what)
	}
	text := func(sel string) string {
		t.Helper()
		var s string
		run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery, chromedp.NodeVisible))
		return s
	}
	shoot := func(name string) {
		t.Helper()
		var png []byte
		run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
		keepScreenshot(t, shots, name, png)
	}

	// buy pays or declines a new live order and returns at the return page.
	buy := func(button string) string {
		t.Helper()
		ref, checkoutURL := tb.livePending(t)
		require.True(t, strings.HasPrefix(checkoutURL, "http://boxoffice.test/checkout/"), checkoutURL)
		run("open the hosted checkout",
			chromedp.Navigate(checkoutURL),
			chromedp.WaitVisible(`form button`, chromedp.ByQuery))
		noViolations("the hosted page")
		require.Contains(t, text("main"), "GMT (Africa/Accra)", "times say their zone")
		run("press Pay", chromedp.Click(`form button`, chromedp.ByQuery), chromedp.WaitVisible(`button.pay`, chromedp.ByQuery))
		noViolations("the development provider's page")
		run("decide on the provider's page", chromedp.Click(button, chromedp.ByQuery), chromedp.WaitVisible(`#back`, chromedp.ByQuery))
		noViolations("the return page")
		return ref
	}
	// back follows the return page's link to the partner.
	back := func(ref, path string) {
		t.Helper()
		var loc string
		run("back to the partner", chromedp.Click(`#back`, chromedp.ByQuery), chromedp.WaitVisible(`#partner`, chromedp.ByQuery), chromedp.Location(&loc))
		require.Equal(t, "https://partner.example"+path+"?order_reference="+ref, loc)
		require.Equal(t, ref, text("#ref"), "the partner's page knows which order came back")
	}

	t.Run("Paid", func(t *testing.T) {
		ref := buy(`button.pay`)
		require.Contains(t, text("main"), "Payment received")
		require.Contains(t, text("#back"), "Continue to the seller's site")
		require.Contains(t, text("#tickets"), "Show my tickets")
		shoot("return-paid.png")
		require.Equal(t, "paid", tb.orderStatus(t, ref))
		back(ref, "/done")
	})
	t.Run("Declined", func(t *testing.T) {
		ref := buy(`button[value="decline"]`)
		require.Contains(t, text("main"), "The payment was declined")
		require.Contains(t, text("#back"), "Back to the seller's site")
		shoot("return-declined.png")
		require.Equal(t, "failed", tb.orderStatus(t, ref))
		back(ref, "/cancel")
	})
	t.Run("SandboxPage", func(t *testing.T) {
		ref, checkoutURL := tb.sandboxPending(t, tb.highlife(1))
		run("open the sandbox page", chromedp.Navigate(checkoutURL), chromedp.WaitVisible(`button[value="failed"]`, chromedp.ByQuery))
		noViolations("the sandbox page")
		var loc string
		run("simulate a failed payment", chromedp.Click(`button[value="failed"]`, chromedp.ByQuery),
			chromedp.WaitVisible(`#partner`, chromedp.ByQuery), chromedp.Location(&loc))
		require.Equal(t, "https://partner.example/cancel?order_reference="+ref, loc, "the form's redirect is allowed by form-action")
		require.Equal(t, "failed", tb.orderStatus(t, ref))
	})
	t.Run("BackToTheShop", func(t *testing.T) {
		// Before any outcome, a buyer sees who sells the tickets and can go
		// back to the shop (its cancel_url); the order waits as it was.
		for _, tt := range []struct {
			name  string
			order func(testing.TB) (string, string)
		}{
			{"hosted-checkout", tb.livePending},
			{"sandbox-checkout", func(t testing.TB) (string, string) { return tb.sandboxPending(t, tb.highlife(2)) }},
		} {
			ref, checkoutURL := tt.order(t)
			run("open "+tt.name, chromedp.Navigate(checkoutURL), chromedp.WaitVisible(`#shop`, chromedp.ByQuery))
			noViolations(tt.name)
			require.Equal(t, "Checkout for Demo ticket shop", text(".seller"))
			require.Equal(t, "Back to the shop", text("#shop"))
			shootWidths(t, run, shots, tt.name)
			var loc string
			run("back to the shop", chromedp.Click(`#shop`, chromedp.ByQuery), chromedp.WaitVisible(`#partner`, chromedp.ByQuery), chromedp.Location(&loc))
			require.Equal(t, "https://partner.example/cancel?order_reference="+ref, loc)
			require.Equal(t, "pending", tb.orderStatus(t, ref), "leaving changes nothing")
		}
	})
	t.Run("NotFoundPage", func(t *testing.T) {
		run("open an unknown checkout", chromedp.Navigate("http://boxoffice.test/checkout/ord_nope"), chromedp.WaitVisible(`h1`, chromedp.ByQuery))
		noViolations("the 404 page")
		require.Equal(t, "Not found", text("h1"))
		var bg string
		run("read the styled page", chromedp.Evaluate(`getComputedStyle(document.querySelector(".card")).backgroundColor`, &bg))
		require.Equal(t, "rgb(255, 255, 255)", bg, "the hashed inline style applies")
	})
	t.Run("Playground", func(t *testing.T) {
		run("open the playground", chromedp.Navigate("http://boxoffice.test/graphql"),
			chromedp.WaitVisible(`.graphiql-query-editor .CodeMirror`, chromedp.ByQuery))
		noViolations("the playground")
		var state string
		run("type a key", chromedp.SendKeys(`#bo-key`, tb.testKey, chromedp.ByQuery),
			chromedp.Poll(`document.getElementById("bo-key-state").textContent || false`, &state, browserPoll))
		require.Equal(t, "saved", state, "the page's own inline script runs")
		noViolations("the playground after typing a key")
	})
}
