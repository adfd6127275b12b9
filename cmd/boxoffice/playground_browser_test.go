package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/playground"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestPlaygroundInBrowser uses the playground as a frontend engineer on a
// phone does, at 390 px wide in headless Chromium: see it ask for a key
// (and send nothing without one, so no refusal greets them), paste a key, reload,
// find the key still there, open the docs (loaded with the key, no manual
// refresh), run the default query. BOXOFFICE_SCREENSHOTS=DIR keeps the
// screenshots.
func TestPlaygroundInBrowser(t *testing.T) {
	t.Parallel()
	execPath := chromiumPath(t)
	tb := setup(t, storetest.MustOpen(t, "sqlite"))

	ctx := newChromium(t, execPath)
	run := browserSteps(t, ctx)
	shot := func(name string) {
		t.Helper()
		var png []byte
		run("screenshot "+name, chromedp.CaptureScreenshot(&png))
		path := filepath.Join(t.TempDir(), name)
		if dir := os.Getenv("BOXOFFICE_SCREENSHOTS"); dir != "" {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			path = filepath.Join(dir, name)
		}
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("screenshot: %s", path)
	}
	// fits checks that nothing is wider than the phone's screen.
	fits := func() {
		t.Helper()
		requireFits(t, run, "the page", 390)
	}

	// Every GraphQL request the page makes, to check it makes none before
	// it has a key.
	var mu sync.Mutex
	var posts int
	chromedp.ListenTarget(ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok && strings.HasSuffix(ev.Request.URL, "/graphql") && ev.Request.Method == "POST" {
			mu.Lock()
			posts++
			mu.Unlock()
		}
	})
	var start, response string
	run("open the playground",
		network.Enable(),
		// Headless windows are at least 500 px wide: emulate the phone.
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(tb.srv.URL+"/graphql"),
		chromedp.WaitVisible(`.graphiql-container`, chromedp.ByQuery),
		chromedp.WaitVisible(`#bo-key`, chromedp.ByQuery),
		chromedp.WaitVisible(`#bo-start`, chromedp.ByQuery),
		chromedp.Text(`#bo-start`, &start, chromedp.ByQuery),
	)
	require.Contains(t, start, "Paste your test key to start.", "the first screen asks for a key")
	fits()
	shot("playground-390-nokey.png")
	shootWidths(t, run, t.TempDir(), "playground-nokey")
	run("back to the phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	run("run before pasting a key",
		chromedp.Click(`.graphiql-execute-button`, chromedp.ByQuery, chromedp.NodeVisible),
		chromedp.Poll(`((document.querySelector(".graphiql-response") || {}).innerText || "").includes("hint")`, nil,
			browserPoll),
		chromedp.Text(`.graphiql-response`, &response, chromedp.ByQuery),
	)
	require.Contains(t, response, "Paste your test key (svc_test_…) into the API key field above")
	require.NotContains(t, response, "missing_api_key", "no red refusal before the user did anything wrong")
	mu.Lock()
	require.Zero(t, posts, "nothing is sent without a key, not even the schema's introspection")
	mu.Unlock()
	// SendKeys types the key a character at a time. On a loaded machine a
	// pause between two of them can outlast the field's 400 ms debounce:
	// the page then saves a prefix and says "saved" while the rest waits
	// for its own save, so the wait is for the whole key in storage.
	run("paste the key",
		chromedp.SendKeys(`#bo-key`, tb.testKey, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("bo-key-state").textContent === "saved" &&
			localStorage.getItem(`+strconv.Quote(playground.KeyStorage)+`) === `+strconv.Quote(tb.testKey), nil, browserPoll),
	)

	var kept, stored string
	var tabs int
	run("reload",
		chromedp.Reload(),
		chromedp.WaitVisible(`.graphiql-container`, chromedp.ByQuery),
		chromedp.Value(`#bo-key`, &kept, chromedp.ByQuery),
		chromedp.Evaluate(`localStorage.getItem("`+playground.KeyStorage+`")`, &stored),
		chromedp.Evaluate(`JSON.parse(localStorage.getItem("graphiql:tabState")).tabs.length`, &tabs),
	)
	require.Equal(t, tb.testKey, kept, "the pasted key survives a reload")
	var startHidden bool
	run("look for the first screen's notice", chromedp.Evaluate(`document.getElementById("bo-start").hidden`, &startHidden))
	require.True(t, startHidden, "with a key, the page no longer asks for one")
	require.Equal(t, tb.testKey, stored, "in localStorage, as the page says")
	require.Equal(t, 1, tabs, "a reload reopens the one tab, it adds none")

	var result string
	run("run the default query",
		chromedp.Click(`.graphiql-execute-button`, chromedp.ByQuery, chromedp.NodeVisible),
		chromedp.Poll(`/"(data|errors)"/.test((document.querySelector(".graphiql-response") || {}).innerText || "")`, nil,
			browserPoll),
		chromedp.Text(`.graphiql-response`, &result, chromedp.ByQuery),
	)
	require.Contains(t, result, `"total": 7`, "the query ran with the key")
	require.NotContains(t, result, "missing_api_key")
	fits()
	shot("playground-390-query.png")

	var docs string
	run("open the docs",
		chromedp.Click(`button[aria-label="Show Documentation Explorer"]`, chromedp.ByQuery, chromedp.NodeVisible),
		chromedp.Poll(`(document.querySelector(".graphiql-doc-explorer") || {}).innerText?.includes("Query")`, nil,
			browserPoll),
		chromedp.Text(`.graphiql-doc-explorer`, &docs, chromedp.ByQuery),
	)
	require.Contains(t, docs, "Boxoffice: the published event catalog", "the schema's description, loaded with the key on first open")
	require.Contains(t, docs, "Mutation")
	fits()
	shot("playground-390-docs.png")
}
