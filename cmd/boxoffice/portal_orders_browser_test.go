package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestPortalOrdersInBrowser is the demo partner, who develops with
// `boxoffice listen` and has no webhook URL, following orders in a real
// browser: the delivery log shows the event that went to the listener as
// such and the one nobody got as not sent (neither as a failure), the
// webhook URL field refuses localhost by naming boxoffice listen, the
// recent orders link to their pages and mark the one flagged for a refund
// review, and the order pages show items, tickets, buyer, payment and
// deliveries. Screenshots at 390 and 1280 px (BOXOFFICE_SCREENSHOTS keeps
// them): portal-{deliveries-listen,webhook-localhost,orders-review,
// order,order-review}-{390,1280}.png.
func TestPortalOrdersInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	// As in production: webhook URLs on this machine are refused.
	pb := setupPortal(t, "sqlite", fastJobs, func(c *Config) { c.AllowPrivateWebhooks = false })
	pb.startJobs(t)
	ctx := context.Background()

	stream := pb.openStream(t, pb.testKey, "")
	require.Equal(t, "ready", stream.next(t).event)
	heard, checkoutURL := pb.sandboxPending(t, pb.highlife(2))
	pb.submitOutcome(t, checkoutURL, "paid")
	require.Equal(t, "order.paid", stream.next(t).event)
	stream.close()
	unheard, checkoutURL := pb.sandboxPending(t, pb.highlife(1))
	pb.submitOutcome(t, checkoutURL, "expired")
	flagged, _ := pb.livePending(t)
	_, err := pb.m.Checkout.ConfirmPayment(ctx, &payments.Status{Reference: flagged, State: payments.Paid, Amount: 100, Currency: "GHS"})
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the deliveries to be given up and the listener's to be noted", func() bool {
		var n int
		err := pb.db.NewSelect().Model((*store.WebhookEvent)(nil)).Where("status = ?", store.WebhookFailed).
			Where("environment = ?", store.EnvTest).ColumnExpr("count(*)").
			Where("type = 'order.expired' OR streamed_at IS NOT NULL").Scan(ctx, &n)
		return err == nil && n == 2
	})

	bctx := newChromium(t, execPath)
	chromedp.ListenTarget(bctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(bctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	run := browserSteps(t, bctx)
	shots := t.TempDir()
	text := func(sel string) string {
		t.Helper()
		var s string
		run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery, chromedp.NodeVisible))
		return strings.Join(strings.Fields(s), " ")
	}
	base := pb.srv.URL
	app := fmt.Sprintf("/portal/apps/%d", pb.demo.App.App.ID)

	run("sign in",
		chromedp.Navigate(base+"/portal/signin"),
		chromedp.WaitVisible(`#f-email`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-email`, seed.DemoEmail, chromedp.ByQuery),
		chromedp.SendKeys(`#f-password`, pb.demo.Password, chromedp.ByQuery),
		chromedp.Click(`main button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`a.name`, chromedp.ByQuery),
	)
	run("open the app", chromedp.Navigate(base+app), chromedp.WaitVisible(`#deliveries-title`, chromedp.ByQuery))
	log := text(`table[aria-labelledby="deliveries-title"]`)
	require.Contains(t, log, "order.paid")
	require.Contains(t, log, "sent to listen 1 boxoffice listen")
	require.Contains(t, log, "order.expired")
	require.Contains(t, log, "not sent 1 no webhook URL set a webhook URL, or run boxoffice listen to get events on your machine")
	require.NotContains(t, log, "failed")
	run("scroll to the delivery log", chromedp.ScrollIntoView(`#deliveries-title`, chromedp.ByQuery))
	shootWidths(t, run, shots, "portal-deliveries-listen")

	run("set a webhook URL on this machine",
		chromedp.SendKeys(`#f-webhook-url`, "http://localhost:3000/hooks", chromedp.ByQuery),
		chromedp.Click(`form[action$="/webhook-url"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#f-webhook-url-err`, chromedp.ByQuery),
	)
	require.Equal(t, `Webhook URL "http://localhost:3000/hooks" must be an absolute https:// URL; to get events on this machine while you develop, `+
		"run boxoffice listen --api-key svc_test_… --forward-to http://localhost:3000/hooks.", text(`#f-webhook-url-err`))
	require.Contains(t, text(`#f-webhook-url-hint`), "Developing on your own machine? Leave it empty and run boxoffice listen --api-key svc_test_… --forward-to http://localhost:3000/hooks instead.")
	run("scroll to the field", chromedp.ScrollIntoView(`#f-webhook-url`, chromedp.ByQuery))
	shootWidths(t, run, shots, "portal-webhook-localhost")

	run("list the live orders flagged for review",
		chromedp.Navigate(base+app+"?env=live&review=1#orders-title"),
		chromedp.WaitVisible(`a[href$="/orders/`+flagged+`"]`, chromedp.ByQuery),
	)
	require.Contains(t, text(`section[aria-labelledby="orders-title"] tbody`), flagged+" pending refund review GHS 120.00")
	shootWidths(t, run, shots, "portal-orders-review")
	run("open the flagged order", chromedp.Click(`a[href$="/orders/`+flagged+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.notice.warn`, chromedp.ByQuery))
	require.Contains(t, text(".notice.warn"), "Flagged for a refund review. Payment "+flagged+" confirmed for GHS 1.00, the order is GHS 120.00.")
	shootWidths(t, run, shots, "portal-order-review")

	run("open the paid order from the list",
		chromedp.Navigate(base+app+"?env=test#orders-title"),
		chromedp.Click(`a[href$="/orders/`+heard+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#events-title`, chromedp.ByQuery),
	)
	main := text("main")
	for _, want := range []string{"Order " + heard, "What was bought", "Highlife Night at the Conference Centre", "GHS 240.00",
		"Ama Mensah", "ama@example.com", "Simulated on the sandbox page", "Regular", "1 of 2", "2 of 2",
		"order.paid sent to listen", "Sent to boxoffice listen"} {
		require.Contains(t, main, want)
	}
	shootWidths(t, run, shots, "portal-order")
	require.NotContains(t, main, unheard)
}
