package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestMailboxInBrowser opens the development mailbox on the admin listener
// in headless Chromium at 390 px, as a developer on a phone does, and
// reads a message whose HTML part tries to run script and to load from
// another host: the part shows with its own styles, its script never
// runs, nothing is fetched, and neither page scrolls sideways.
// BOXOFFICE_SCREENSHOTS=DIR keeps mailbox-{list,message}-{390,1280}.png.
func TestMailboxInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	admin := httptest.NewServer(tb.m.AdminHandler())
	t.Cleanup(admin.Close)

	// Another host, which the message names for an image, a stylesheet, a
	// font and a frame: it must hear nothing.
	var fetched atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "image/png")
	}))
	t.Cleanup(other.Close)
	html := fmt.Sprintf(`<html><head><style>p.lead { color: rgb(19, 122, 75) }</style>
<link rel="stylesheet" href="%[1]s/style.css"><style>@import url(%[1]s/import.css); @font-face { font-family: x; src: url(%[1]s/font.woff) } body { font-family: x }</style></head>
<body><p class="lead" id="hello" style="font-weight: 700">Hello Ama, your tickets for Highlife Night are ready.</p>
<script>document.body.dataset.ran = "script";</script>
<img id="pixel" src="%[1]s/pixel.png" onerror="document.body.dataset.ran = 'onerror'">
<iframe src="%[1]s/frame"></iframe>
<p><a id="tickets" href="https://boxoffice.example/tickets/tok_1">View your tickets</a></p>
<p>A long unbroken link: https://boxoffice.example/tickets/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</p></body></html>`, other.URL)
	require.NoError(t, tb.m.Mailbox.Send(context.Background(), mail.Message{
		From: mail.DefaultFrom, To: "Ama Mensah <ama.mensah.with.a.rather.long.address@example.com>",
		Subject: "Your tickets for Highlife Night — Accra, Thu 24 Dec 2026, 6:00 PM", Text: "Hello Ama,\nyour tickets: https://boxoffice.example/tickets/tok_1",
		HTML: html, Attachments: []mail.Attachment{{Name: "tickets-ord_7.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.7")}},
	}))
	recent, err := tb.m.Mailbox.Recent(context.Background(), 1)
	require.NoError(t, err)

	ctx := newChromium(t, execPath)
	run := browserSteps(t, ctx)
	shots := t.TempDir()
	shoot := func(name string) {
		t.Helper()
		var png []byte
		run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
		keepScreenshot(t, shots, name, png)
	}
	fits := func(what string, want int) {
		t.Helper()
		requireFits(t, run, what, int64(want))
	}
	run("watch for CSP violations", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(cspWatch).Do(ctx)
		return err
	}))

	run("open the list",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(admin.URL+"/mail"),
		chromedp.WaitVisible(`ul a .subject`, chromedp.ByQuery))
	fits("the list", 390)
	shoot("mailbox-list-390.png")
	var violations []string
	run("read the list's CSP violations", chromedp.Evaluate(`window.__csp`, &violations))
	require.Empty(t, violations)

	run("open the message", chromedp.Click(`ul a`, chromedp.ByQuery), chromedp.WaitVisible(`iframe`, chromedp.ByQuery))
	var path string
	run("read the address", chromedp.Evaluate(`location.pathname`, &path))
	require.Equal(t, fmt.Sprintf("/mail/%d", recent[0].ID), path)
	fits("the message", 390)

	// The part's frame is a document of its own, which Chromium runs in a
	// process of its own (a sandboxed frame): read it through its target.
	var frame struct {
		Text, Color, Weight, Ran string
		PixelLoaded              bool
	}
	var frameTarget *target.Info
	run("find the HTML part's frame", chromedp.ActionFunc(func(ctx context.Context) error {
		for frameTarget == nil {
			targets, err := chromedp.Targets(ctx)
			if err != nil {
				return err
			}
			for _, ti := range targets {
				if ti.Type == "iframe" && ti.URL == "about:srcdoc" {
					frameTarget = ti
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	}))
	fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(frameTarget.TargetID))
	defer cancel()
	run("read the HTML part", chromedp.ActionFunc(func(context.Context) error {
		return chromedp.Run(fctx, chromedp.Poll(`document.getElementById("hello") && ({
			Text: document.getElementById("hello").textContent,
			Color: getComputedStyle(document.getElementById("hello")).color,
			Weight: getComputedStyle(document.getElementById("hello")).fontWeight,
			Ran: document.body.dataset.ran || "",
			PixelLoaded: document.getElementById("pixel").complete && document.getElementById("pixel").naturalWidth > 0})`,
			&frame, browserPoll))
	}))
	require.Equal(t, "Hello Ama, your tickets for Highlife Night are ready.", frame.Text)
	require.Equal(t, "rgb(19, 122, 75)", frame.Color, "the part's <style> applies")
	require.Equal(t, "700", frame.Weight, "its style attributes apply")
	require.Empty(t, frame.Ran, "neither its script nor its event handler ran")
	require.False(t, frame.PixelLoaded)
	shoot("mailbox-message-390.png")
	require.Zero(t, fetched.Load(), "nothing was fetched from another host")

	run("read the message's CSP violations", chromedp.Evaluate(`window.__csp`, &violations))
	require.Empty(t, violations, "the page itself runs under its policy")

	// On a desktop screen too.
	for _, p := range []struct{ path, name string }{{"/mail", "list"}, {path, "message"}} {
		run("open the "+p.name+" at 1280 px", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)),
			chromedp.Navigate(admin.URL+p.path), chromedp.WaitVisible(`h1`, chromedp.ByQuery))
		fits("the "+p.name, 1280)
		shoot("mailbox-" + p.name + "-1280.png")
	}
}
