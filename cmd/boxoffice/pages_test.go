package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/stretchr/testify/require"
)

// pageAnswer is an answer of a page a browser shows.
type pageAnswer struct {
	Status int
	Header http.Header
	Body   string
}

// fetchPage sends method to u (a URL the service handed out, or a path of
// the test server) with a form body and headers, without following
// redirects.
func (tb *testBundle) fetchPage(t testing.TB, method, u string, form url.Values, headers ...string) pageAnswer {
	t.Helper()
	if strings.HasPrefix(u, "/") {
		u = tb.srv.URL + u
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, tb.local(u), body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := noRedirects.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return pageAnswer{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

// cspDirectives splits a Content-Security-Policy into its directives.
func cspDirectives(csp string) map[string]string {
	d := map[string]string{}
	for _, part := range strings.Split(csp, ";") {
		part = strings.TrimSpace(part)
		name, value, _ := strings.Cut(part, " ")
		if name != "" {
			d[name] = value
		}
	}
	return d
}

// requirePageHeaders checks what every page a browser shows must carry: a
// policy that allows no framing, no plugin, no base rewriting and no
// inline script but the page's own hashed ones; nosniff; no Referer.
func requirePageHeaders(t *testing.T, what string, p pageAnswer) {
	t.Helper()
	require.True(t, strings.HasPrefix(p.Header.Get("Content-Type"), "text/html"), "%s: Content-Type %q", what, p.Header.Get("Content-Type"))
	d := cspDirectives(p.Header.Get("Content-Security-Policy"))
	require.Equal(t, "'none'", d["default-src"], "%s: %q", what, p.Header.Get("Content-Security-Policy"))
	require.Equal(t, "'none'", d["frame-ancestors"], what)
	require.Equal(t, "'none'", d["base-uri"], what)
	require.NotContains(t, d["script-src"], "'unsafe-inline'", what)
	require.NotContains(t, d["script-src"], "'unsafe-eval'", what)
	require.Equal(t, "nosniff", p.Header.Get("X-Content-Type-Options"), what)
	require.Equal(t, "same-origin", p.Header.Get("Referrer-Policy"), what)
	require.Equal(t, "DENY", p.Header.Get("X-Frame-Options"), what)
	// Whatever is inline is allowed by its hash, or the browser refuses it.
	scripts, styles := webpage.InlineHashes(p.Body)
	for _, h := range scripts {
		require.Contains(t, strings.Fields(d["script-src"]), h, "%s: an inline script without its hash in script-src", what)
	}
	if !strings.Contains(d["style-src"], "'unsafe-inline'") {
		for _, h := range styles {
			require.Contains(t, strings.Fields(d["style-src"]), h, "%s: an inline style without its hash in style-src", what)
		}
	}
}

// requireHTMLNotFound checks an answer is the HTML 404 page.
func requireHTMLNotFound(t *testing.T, what string, p pageAnswer) {
	t.Helper()
	require.Equal(t, http.StatusNotFound, p.Status, "%s: %s", what, p.Body)
	requirePageHeaders(t, what, p)
	require.Contains(t, p.Body, "<h1>Not found</h1>", what)
	require.NotContains(t, p.Body, `"error"`, "%s: not the API's JSON", what)
}

// livePending makes a live order of one Highlife ticket that waits for its
// payment, and returns its reference and checkout_url.
func (tb *testBundle) livePending(t testing.TB) (ref, checkoutURL string) {
	t.Helper()
	res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.data()["order_reference"].(string), res.data()["checkout_url"].(string)
}

// sandboxPending makes a sandbox order that waits for an outcome.
func (tb *testBundle) sandboxPending(t testing.TB, body map[string]any) (ref, checkoutURL string) {
	t.Helper()
	res := tb.checkout(t, tb.testKey, newIdemKey(), body)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.data()["order_reference"].(string), res.data()["checkout_url"].(string)
}

func (tb *testBundle) orderStatus(t testing.TB, ref string) string {
	t.Helper()
	key := tb.testKey
	if strings.HasPrefix(ref, "ord_") {
		key = tb.liveKey
	}
	return tb.get(t, "/api/v1/orders/"+ref, key).data()["status"].(string)
}

// TestPageSecurityHeaders: every page a browser shows, the 404 pages
// included, sends the security headers, and its inline elements are
// allowed by hash.
func TestPageSecurityHeaders(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	sbx, sbxURL := tb.sandboxPending(t, tb.highlife(1))
	ord, ordURL := tb.livePending(t)
	toProvider := tb.fetchPage(t, http.MethodPost, ordURL+"/pay", url.Values{}).Header.Get("Location")
	require.Equal(t, "http://boxoffice.test/dev-pay/"+ord, toProvider)
	settled, settledURL := tb.sandboxPending(t, tb.highlife(1))
	tb.fetchPage(t, http.MethodPost, settledURL, url.Values{"outcome": {"paid"}})
	require.Equal(t, "paid", tb.orderStatus(t, settled))

	tests := []struct {
		name, path string
		status     int
	}{
		{"SandboxPage", sbxURL, http.StatusOK},
		{"SandboxPageSettled", settledURL, http.StatusOK},
		{"HostedPage", ordURL, http.StatusOK},
		{"ReturnPage", ordURL + "/return", http.StatusOK},
		{"DevPayPage", toProvider, http.StatusOK},
		{"Playground", "/graphql", http.StatusOK},
		{"APIReference", "/docs", http.StatusOK},
		{"Portal", "/portal/signin", http.StatusOK},
		{"ErrSandboxNotFound", "/sandbox/checkout/sbx_nope", http.StatusNotFound},
		{"ErrSandboxLiveReference", "/sandbox/checkout/" + ord, http.StatusNotFound},
		{"ErrHostedNotFound", "/checkout/ord_nope", http.StatusNotFound},
		{"ErrHostedSandboxReference", "/checkout/" + sbx, http.StatusNotFound},
		{"ErrReturnNotFound", "/checkout/ord_nope/return", http.StatusNotFound},
		{"ErrDevPayNotFound", "/dev-pay/ord_nope", http.StatusNotFound},
		{"ErrDevPayMalformed", "/dev-pay/ord_%00x", http.StatusNotFound},
		{"ErrUnknownPagePath", "/sandbox/checkout/", http.StatusNotFound},
		{"ErrUnknownHostedPath", "/checkout/" + ord + "/elsewhere", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				p := tb.fetchPage(t, method, tt.path, nil)
				require.Equal(t, tt.status, p.Status, "%s %s: %s", method, tt.path, p.Body)
				requirePageHeaders(t, method+" "+tt.path, p)
				if tt.status == http.StatusNotFound && method == http.MethodGet {
					requireHTMLNotFound(t, tt.path, p)
				}
			}
		})
	}
	t.Run("APIStaysJSON", func(t *testing.T) {
		res := tb.get(t, "/api/v1/nope", tb.testKey)
		require.Equal(t, http.StatusNotFound, res.Status)
		require.Equal(t, "not_found", res.errorCode())
	})
}

// TestPagesCrossSitePosts: a form post that a browser sends from another
// site (Sec-Fetch-Site, or an Origin that is not the page's) is refused
// with 403 and changes nothing; the same post from the page itself works.
func TestPagesCrossSitePosts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		crossSite := map[string][]string{
			"SecFetchSite":  {"Sec-Fetch-Site", "cross-site"},
			"SameSite":      {"Sec-Fetch-Site", "same-site"},
			"ForeignOrigin": {"Origin", "https://attacker.example"},
			// A sandboxed frame's post, or any page's under no-referrer.
			"NullOrigin": {"Origin", "null"},
		}
		// What Chromium sends with a post from the page itself: on plain
		// http away from localhost it sends no Sec-Fetch-Site, and the
		// page's Referrer-Policy keeps the Origin header meaningful.
		sameOrigin := map[string][]string{
			"SecFetchSite": {"Sec-Fetch-Site", "same-origin", "Origin", tb.srv.URL},
			"OriginOnly":   {"Origin", tb.srv.URL},
		}
		requireRefused := func(t *testing.T, p pageAnswer) {
			t.Helper()
			require.Equal(t, http.StatusForbidden, p.Status, p.Body)
			requirePageHeaders(t, "refusal", p)
			require.Contains(t, p.Body, "sent from another site")
		}

		t.Run("SandboxSettle", func(t *testing.T) {
			for name, h := range crossSite {
				t.Run("Err"+name, func(t *testing.T) {
					ref, u := tb.sandboxPending(t, tb.highlife(1))
					requireRefused(t, tb.fetchPage(t, http.MethodPost, u, url.Values{"outcome": {"paid"}}, h...))
					require.Equal(t, "pending", tb.orderStatus(t, ref), "a cross-site post marks nothing paid")
				})
			}
			for name, h := range sameOrigin {
				t.Run("OK"+name, func(t *testing.T) {
					ref, u := tb.sandboxPending(t, tb.highlife(1))
					p := tb.fetchPage(t, http.MethodPost, u, url.Values{"outcome": {"paid"}}, h...)
					require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
					require.Equal(t, "https://partner.example/done?order_reference="+ref, p.Header.Get("Location"))
					require.Equal(t, "paid", tb.orderStatus(t, ref))
				})
			}
		})
		t.Run("DevPayDecide", func(t *testing.T) {
			for name, h := range crossSite {
				t.Run("Err"+name, func(t *testing.T) {
					ref, _ := tb.livePending(t)
					requireRefused(t, tb.fetchPage(t, http.MethodPost, "/dev-pay/"+ref, url.Values{"outcome": {"pay"}}, h...))
					require.Equal(t, "pending", tb.orderStatus(t, ref), "a cross-site post marks no live order paid")
					dp, err := store.DevPaymentByReference(context.Background(), tb.db, ref)
					require.NoError(t, err)
					require.Equal(t, store.DevPaymentPending, dp.State)
				})
			}
			for name, h := range sameOrigin {
				t.Run("OK"+name, func(t *testing.T) {
					ref, _ := tb.livePending(t)
					p := tb.fetchPage(t, http.MethodPost, "/dev-pay/"+ref, url.Values{"outcome": {"pay"}}, h...)
					require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
					require.Equal(t, "paid", tb.orderStatus(t, ref))
				})
			}
			t.Run("ErrNoOutcome", func(t *testing.T) {
				ref, _ := tb.livePending(t)
				p := tb.fetchPage(t, http.MethodPost, "/dev-pay/"+ref, url.Values{"outcome": {"maybe"}}, sameOrigin["SecFetchSite"]...)
				require.Equal(t, http.StatusBadRequest, p.Status, p.Body)
				requirePageHeaders(t, "bad outcome", p)
				require.Equal(t, "pending", tb.orderStatus(t, ref))
			})
		})
		t.Run("HostedPay", func(t *testing.T) {
			for name, h := range crossSite {
				t.Run("Err"+name, func(t *testing.T) {
					ref, u := tb.livePending(t)
					requireRefused(t, tb.fetchPage(t, http.MethodPost, u+"/pay", url.Values{}, h...))
					require.Equal(t, "pending", tb.orderStatus(t, ref))
				})
			}
			for name, h := range sameOrigin {
				t.Run("OK"+name, func(t *testing.T) {
					ref, u := tb.livePending(t)
					p := tb.fetchPage(t, http.MethodPost, u+"/pay", url.Values{}, h...)
					require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
					require.Equal(t, "http://boxoffice.test/dev-pay/"+ref, p.Header.Get("Location"))
				})
			}
		})
	})
}

// TestReturnToPartner: the buyer always has a way back to the partner, and
// the partner's page learns which order came back: the sandbox redirect
// and the live return page's link carry order_reference, the partner's own
// query parameters kept.
func TestReturnToPartner(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		t.Run("SandboxKeepsPartnerQuery", func(t *testing.T) {
			body := with(with(tb.highlife(1), "success_url", "https://partner.example/done?cart=42&lang=en"),
				"cancel_url", "https://partner.example/cancel?cart=42#again")
			for _, tt := range []struct{ outcome, want string }{
				{"paid", "https://partner.example/done?cart=42&lang=en&order_reference="},
				{"failed", "https://partner.example/cancel?cart=42&order_reference="},
				{"expired", "https://partner.example/cancel?cart=42&order_reference="},
			} {
				ref, u := tb.sandboxPending(t, body)
				p := tb.fetchPage(t, http.MethodPost, u, url.Values{"outcome": {tt.outcome}})
				require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
				want := tt.want + ref
				if tt.outcome != "paid" {
					want += "#again"
				}
				require.Equal(t, want, p.Header.Get("Location"), tt.outcome)
				settled := tb.fetchPage(t, http.MethodGet, u, nil)
				require.Contains(t, settled.Body, `<a id="back" href="`+strings.ReplaceAll(want, "&", "&amp;")+`">`,
					"the settled page links to the same place")
			}
			// The page's form-action names the partner's origin: browsers
			// hold the redirect after a post to it.
			_, u := tb.sandboxPending(t, body)
			pending := tb.fetchPage(t, http.MethodGet, u, nil)
			require.Equal(t, "'self' https://partner.example", cspDirectives(pending.Header.Get("Content-Security-Policy"))["form-action"])
			require.Contains(t, pending.Body, "GMT (Africa/Accra)", "times say their zone")
		})
		t.Run("LivePaid", func(t *testing.T) {
			ref, u := tb.livePending(t)
			hosted := tb.fetchPage(t, http.MethodGet, u, nil)
			require.Contains(t, hosted.Body, "GMT (Africa/Accra)", "times say their zone")
			require.NotContains(t, hosted.Body, `id="back"`, "no way back before an outcome")
			back := tb.press(t, tb.press(t, u+"/pay", nil), url.Values{"outcome": {"pay"}})
			require.Equal(t, "http://boxoffice.test/checkout/"+ref+"/return", back)
			ret := tb.fetchPage(t, http.MethodGet, back, nil)
			require.Contains(t, ret.Body, "Payment received")
			require.Contains(t, ret.Body, `<a class="back" id="back" href="https://partner.example/done?order_reference=`+ref+`">`)
			require.Equal(t, "paid", tb.orderStatus(t, ref))
		})
		t.Run("LiveDeclined", func(t *testing.T) {
			ref, u := tb.livePending(t)
			back := tb.press(t, tb.press(t, u+"/pay", nil), url.Values{"outcome": {"decline"}})
			ret := tb.fetchPage(t, http.MethodGet, back, nil)
			require.Contains(t, ret.Body, "declined")
			require.Contains(t, ret.Body, `<a class="back" id="back" href="https://partner.example/cancel?order_reference=`+ref+`">`)
			require.Equal(t, "failed", tb.orderStatus(t, ref))
			again := tb.fetchPage(t, http.MethodPost, "/dev-pay/"+ref, url.Values{"outcome": {"pay"}})
			require.Equal(t, http.StatusSeeOther, again.Status, "a decided payment stays decided")
			require.Equal(t, "failed", tb.orderStatus(t, ref))
		})
	})
}

// TestDevPayAcrossInstances: the development provider's payments live in
// the database, so an order created through one instance is paid through
// another (or the same one after a restart).
func TestDevPayAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			rawURL := storetest.MigratedURL(t, kind)
			a := setup(t, storetest.OpenURL(t, rawURL))
			ref, u := a.livePending(t)
			toProvider := a.press(t, u+"/pay", nil)
			a.srv.Close() // the instance that created the payment is gone

			b := a.peer(t, rawURL)
			providerPage := b.fetchPage(t, http.MethodGet, toProvider, nil)
			require.Equal(t, http.StatusOK, providerPage.Status, providerPage.Body)
			require.Contains(t, providerPage.Body, "Pay GHS 120.00")
			back := b.press(t, toProvider, url.Values{"outcome": {"pay"}})
			ret := b.fetchPage(t, http.MethodGet, back, nil)
			require.Contains(t, ret.Body, "Payment received")
			require.Equal(t, "paid", b.orderStatus(t, ref))
			decided := b.fetchPage(t, http.MethodGet, toProvider, nil)
			require.Contains(t, decided.Body, "This payment is paid.")
			require.NotContains(t, decided.Body, `value="pay"`, "no second Pay")
			require.NotContains(t, decided.Body, `value="decline"`)
			require.Contains(t, decided.Body, `value="refunds_fail"`, "a paid payment's page offers the refunds' switch")
		})
	}
}

// TestDevPayWarning: serve says loudly that the development provider is
// no real payment provider.
func TestDevPayWarning(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		provider string
		warns    bool
	}{{"dev", true}, {"", false}} {
		cfg := DefaultConfig()
		cfg.PaymentProvider = tt.provider
		logs := serveLogs(t, cfg, storetest.MustOpen(t, "sqlite"))
		warned := strings.Contains(logs, `level=WARN msg="PAYMENT_PROVIDER=dev: `) && strings.Contains(logs, "NOT a real payment provider")
		require.Equal(t, tt.warns, warned, "PAYMENT_PROVIDER=%q: %s", tt.provider, logs)
		if tt.warns {
			require.Contains(t, devpay.Warning, "Never use it in production")
		}
	}
}

// TestAutovacuumWarning: serve on a PostgreSQL without autovacuum says
// so, and on one with it (and on SQLite) says nothing of it. The setting is
// the server's (postgresql.conf), so each backend's run checks the branch
// its server takes against what the server reports.
func TestAutovacuumWarning(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		off := false
		if db.Postgres() {
			var setting string
			require.NoError(t, db.QueryRowContext(context.Background(), "SHOW autovacuum").Scan(&setting))
			off = setting == "off"
		}
		logs := serveLogs(t, DefaultConfig(), db)
		require.Equal(t, off, strings.Contains(logs, "level=WARN msg=\"PostgreSQL runs with autovacuum off"), logs)
	})
}

// serveLogs runs serve on db until it answers /healthz, stops it and
// returns what it logged.
func serveLogs(t *testing.T, cfg Config, db *store.DB) string {
	t.Helper()
	logs := &syncBuffer{}
	m, err := New(cfg, db, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	require.NoError(t, m.Migrate(context.Background()))
	ln, err := newLocalListener()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, ln, nil) }()
	waitFor(t, 10*time.Second, "serve to answer", func() bool {
		res, err := http.Get("http://" + ln.Addr().String() + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return true
	})
	cancel()
	require.NoError(t, <-done)
	return logs.String()
}
