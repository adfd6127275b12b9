package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestPortalAppPageInBrowser is a partner with a busy app on a phone: the
// app page opens on the recent orders, the delivery log shows one page of
// events at a time with a link to the older ones, and an order is found by
// the buyer's email typed in another case. Screenshots at 390 and 1280 px
// (BOXOFFICE_SCREENSHOTS keeps them): portal-app-{busy,email}-{390,1280}.png.
func TestPortalAppPageInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	pb := setupPortal(t, "sqlite")
	ctx := context.Background()
	appID := pb.demo.App.App.ID

	var kofi []string
	for i := range 12 {
		email := fmt.Sprintf("buyer%02d@example.com", i)
		if i == 3 || i == 8 {
			email = "Kofi.Boateng@Example.com"
		}
		ref, _ := pb.sandboxPending(t, with(pb.highlife(1), "customer.email", email))
		if i == 3 || i == 8 {
			kofi = append([]string{ref}, kofi...) // newest first
		}
	}
	hooks := "https://hooks.partner.example/in"
	_, err := pb.m.Provision.UpdateApp(ctx, appID, provision.AppUpdate{WebhookURL: &hooks})
	require.NoError(t, err)
	var events []string
	for range accounts.PageEvents + 5 {
		id, err := pb.m.Webhooks.EmitTest(ctx, appID, store.EnvTest)
		require.NoError(t, err)
		events = append([]string{id}, events...) // newest first
	}

	bctx := newChromium(t, execPath)
	run := browserSteps(t, bctx)
	shots := t.TempDir()
	text := func(sel string) string {
		t.Helper()
		var s string
		run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery, chromedp.NodeVisible))
		return strings.Join(strings.Fields(s), " ")
	}
	base := pb.srv.URL
	app := fmt.Sprintf("/portal/apps/%d", appID)

	run("sign in",
		chromedp.Navigate(base+"/portal/signin"),
		chromedp.WaitVisible(`#f-email`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-email`, seed.DemoEmail, chromedp.ByQuery),
		chromedp.SendKeys(`#f-password`, pb.demo.Password, chromedp.ByQuery),
		chromedp.Click(`main button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`a.name`, chromedp.ByQuery),
	)
	run("open the app on a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)),
		chromedp.Navigate(base+app), chromedp.WaitVisible(`#deliveries-title`, chromedp.ByQuery))
	shootWidths(t, run, shots, "portal-app-busy")

	run("back to a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)), chromedp.Navigate(base+app),
		chromedp.WaitVisible(`#orders-title`, chromedp.ByQuery))
	var ordersTop, logTop float64
	run("measure where the orders and the log begin",
		chromedp.Evaluate(`document.getElementById("orders-title").getBoundingClientRect().top`, &ordersTop),
		chromedp.Evaluate(`document.getElementById("deliveries-title").getBoundingClientRect().top`, &logTop))
	require.Less(t, ordersTop, 844.0, "the recent orders begin on the first screen")
	require.Less(t, ordersTop, logTop, "the recent orders come before the delivery log")

	// The log's first page: the newest events, then a link to the older.
	logIDs := func() []string {
		t.Helper()
		var ids []string
		run("read the log's event ids", chromedp.Evaluate(
			`[...document.querySelectorAll('table[aria-labelledby="deliveries-title"] tbody code')].map(c => c.textContent)`, &ids))
		return ids
	}
	require.Equal(t, events[:accounts.PageEvents], logIDs())
	run("open the older events", chromedp.Click(`#older-events`, chromedp.ByQuery),
		chromedp.WaitVisible(`#newest-events`, chromedp.ByQuery))
	require.Equal(t, events[accounts.PageEvents:], logIDs(), "the next page goes on where the first ended")
	require.Contains(t, text(`#orders-title`), "Recent orders", "the orders are still there")
	var older int
	run("count the links to older events", chromedp.Evaluate(`document.querySelectorAll('#older-events').length`, &older))
	require.Zero(t, older, "the last page links to no older one")

	run("search by the buyer's email",
		chromedp.Navigate(base+app),
		chromedp.WaitVisible(`#f-email`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-email`, " kofi.boateng@EXAMPLE.com", chromedp.ByQuery),
		chromedp.Submit(`#f-email`, chromedp.ByQuery),
		// Only the answer's caption names the buyer: not the page the form was on.
		chromedp.WaitVisible(`//caption[contains(., "bought by")]`, chromedp.BySearch),
	)
	require.Contains(t, text(`section[aria-labelledby="orders-title"] caption`), "bought by kofi.boateng@EXAMPLE.com")
	var found []string
	run("read the orders found", chromedp.Evaluate(
		`[...document.querySelectorAll('section[aria-labelledby="orders-title"] tbody a code')].map(c => c.textContent)`, &found))
	require.Equal(t, kofi, found)
	shootWidths(t, run, shots, "portal-app-email")
}
