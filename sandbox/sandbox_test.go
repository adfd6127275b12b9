package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/sandbox"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// The partner's pages keep their own query and fragment: the buyer comes
// back to them with order_reference added.
const (
	successURL = "https://partner.example/done?cart=42"
	cancelURL  = "https://partner.example/cancel?cart=42#again"
)

// Texts of the page's answers.
const (
	notFoundText = "This sandbox checkout does not exist. Check the checkout_url your checkout session returned."
	refusedText  = "This form was sent from another site, so it was not accepted. Open the page itself and use its buttons."
)

func ptr[T any](v T) *T { return &v }

// param is the query parameter that names the order to the partner.
func param(ref string) string { return checkout.OrderParam + "=" + ref }

// clock is the page's and checkout's clock, which a test moves.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// lockedBuffer is a log written from the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// bundle is the sandbox page on a real HTTP server, over a real checkout
// service and a fresh database holding the demo catalog and app.
type bundle struct {
	*checkouttest.Fixture
	srv    *httptest.Server
	client *http.Client
	clock  *clock
	log    *lockedBuffer
	keys   atomic.Int64
}

func setup(t *testing.T, db *store.DB) *bundle {
	t.Helper()
	f := checkouttest.MustNew(t, db)
	b := &bundle{Fixture: f, clock: &clock{}, log: &lockedBuffer{}}
	b.clock.set(f.Now)
	f.Service.Now = b.clock.Now
	r := chi.NewRouter()
	(&sandbox.Handler{Checkout: f.Service, Now: b.clock.Now, Log: slog.New(slog.NewTextHandler(b.log, nil))}).Routes(r)
	b.srv = httptest.NewServer(r)
	t.Cleanup(b.srv.Close)
	// The test reads the redirects themselves.
	b.client = &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return b
}

// pending checks out two Regular Highlife tickets in env: an order that
// waits for its outcome.
func (b *bundle) pending(t *testing.T, env string) string {
	t.Helper()
	n := b.keys.Add(1)
	sess, _, err := b.Service.Create(context.Background(), checkout.Caller{AppID: b.Demo.App.App.ID, Environment: env},
		checkout.Request{Key: fmt.Sprintf("sandbox-%d", n), Input: &checkout.Input{
			EventID: ptr(b.ID(t, "DEMO-HIGHLIFE")), EventdateID: ptr(b.ID(t, "DEMO-HIGHLIFE-1")),
			Items:      []*checkout.Item{{TicketID: ptr(b.ID(t, "DEMO-HIGHLIFE-REG")), Quantity: ptr(2)}},
			Customer:   &checkout.Customer{Name: ptr("Ama Mensah"), Email: ptr(fmt.Sprintf("ama%d@example.com", n)), Phone: ptr("0241234567")},
			SuccessURL: ptr(successURL), CancelURL: ptr(cancelURL),
		}})
	require.NoError(t, err)
	require.Equal(t, store.OrderPending, sess.Status)
	return sess.OrderReference
}

// answer is a page's answer.
type answer struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a request to the page; headers are name, value pairs.
func (b *bundle) do(t *testing.T, method, path string, form url.Values, headers ...string) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.srv.URL+path, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{Status: res.StatusCode, Header: res.Header, Body: string(raw)}
}

func (b *bundle) show(t *testing.T, ref string) answer {
	t.Helper()
	return b.do(t, http.MethodGet, "/sandbox/checkout/"+ref, nil)
}

// submit presses an outcome button, as the page itself sends it.
func (b *bundle) submit(t *testing.T, ref, outcome string, headers ...string) answer {
	t.Helper()
	return b.do(t, http.MethodPost, "/sandbox/checkout/"+ref, url.Values{"outcome": {outcome}}, headers...)
}

func (b *bundle) order(t *testing.T, ref string) *store.Order {
	t.Helper()
	o, err := store.OrderByReference(context.Background(), b.DB, ref)
	require.NoError(t, err)
	return o
}

// webhooks returns the types of the order's webhook events, in order.
func (b *bundle) webhooks(t *testing.T, ref string) []string {
	t.Helper()
	types := []string{}
	require.NoError(t, b.DB.NewSelect().Model((*store.WebhookEvent)(nil)).Column("type").
		Where("order_id = (SELECT id FROM orders WHERE reference = ?)", ref).Order("sequence").Scan(context.Background(), &types))
	return types
}

func (b *bundle) issued(t *testing.T, ref string) int {
	t.Helper()
	n, err := b.DB.NewSelect().Model((*store.IssuedTicket)(nil)).
		Where("order_id = (SELECT id FROM orders WHERE reference = ?)", ref).Count(context.Background())
	require.NoError(t, err)
	return int(n)
}

// shown is a page's <main>, without the head's styles, for a failure.
func shown(page string) string {
	if _, main, ok := strings.Cut(page, "<main>"); ok {
		main, _, _ = strings.Cut(main, "</main>")
		return main
	}
	return page
}

// requireShows checks that the page holds each of wants.
func requireShows(t *testing.T, a answer, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(a.Body, want) {
			t.Fatalf("the page lacks %q; it shows:\n%s", want, shown(a.Body))
		}
	}
}

// requireMessage checks an HTML message page: status, the page headers,
// its title and text.
func requireMessage(t *testing.T, a answer, status int, title, text string) {
	t.Helper()
	require.Equal(t, status, a.Status, a.Body)
	require.Equal(t, "text/html; charset=utf-8", a.Header.Get("Content-Type"))
	require.Contains(t, a.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	requireShows(t, a, "<h1>"+title+"</h1><p>"+text+"</p>")
}

// TestShow: the page of a pending test order offers the three outcomes;
// a settled one says so and links back to the partner; anything that is
// not a test order is the page's 404.
func TestShow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)

		t.Run("OKPending", func(t *testing.T) {
			ref := b.pending(t, store.EnvTest)
			a := b.show(t, ref)
			require.Equal(t, http.StatusOK, a.Status, a.Body)
			require.Equal(t, "text/html; charset=utf-8", a.Header.Get("Content-Type"))
			require.Equal(t, "no-store", a.Header.Get("Cache-Control"))
			// The forms are answered with a redirect to the partner, which
			// browsers hold to form-action too.
			require.Contains(t, a.Header.Get("Content-Security-Policy"), "form-action 'self' https://partner.example;")
			requireShows(t, a,
				"<title>Sandbox checkout · Highlife Night at the Conference Centre</title>",
				"Checkout for <strong>Demo ticket shop</strong>",
				"<h1>Highlife Night at the Conference Centre</h1>",
				" · Accra International Conference Centre, Accra</p>",
				"2 × Regular <span class=\"each\">· GH₵ 120.00 each</span></td><td class=\"num\">GH₵ 240.00</td>",
				"<td>Total</td><td class=\"num\">GH₵ 240.00</td>",
				`<span class="status pending">pending</span>`,
				"GMT (Africa/Accra)",
				`<button type="submit" name="outcome" value="paid" class="paid" aria-describedby="hint-paid">Simulate successful payment</button>`,
				`<button type="submit" name="outcome" value="failed" class="failed" aria-describedby="hint-failed">Simulate failed payment</button>`,
				`<button type="submit" name="outcome" value="expired" class="expired" aria-describedby="hint-expired">Simulate expiry</button>`,
				`<a class="shop" id="shop" href="https://partner.example/cancel?cart=42&amp;`+param(ref)+`#again">Back to the shop</a>`,
				"Reference: "+ref)
			require.NotContains(t, a.Body, `id="back"`, "no outcome to go back with yet")
			require.Equal(t, store.OrderPending, b.order(t, ref).Status, "showing the page changes nothing")
		})

		t.Run("OKSettled", func(t *testing.T) {
			ref := b.pending(t, store.EnvTest)
			_, _, err := b.Service.Settle(context.Background(), ref, store.OrderPaid)
			require.NoError(t, err)
			a := b.show(t, ref)
			require.Equal(t, http.StatusOK, a.Status, a.Body)
			requireShows(t, a, `<span class="status paid">paid</span>`,
				`This checkout is settled. <a id="back" href="https://partner.example/done?cart=42&amp;`+param(ref)+`">Return to the shop</a>.`)
			require.NotContains(t, a.Body, `name="outcome"`, "nothing left to simulate")
		})

		live := b.pending(t, store.EnvLive)
		for _, tt := range []struct{ name, path string }{
			// A live order is paid for on the hosted page only: the sandbox
			// never shows it, let alone settles it.
			{"ErrLiveOrder", live},
			{"ErrUnknownOrder", "sbx_" + strings.Repeat("a", 32)},
			{"ErrNotAReference", "sbx_%00x"},
			{"ErrNoPrefix", "nope"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				requireMessage(t, b.show(t, tt.path), http.StatusNotFound, "Not found", notFoundText)
			})
		}
		require.Equal(t, store.OrderPending, b.order(t, live).Status)
	})
}

// TestSettle: an outcome button settles a pending test order once and
// sends the buyer back to the partner with the order's reference.
func TestSettle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)

		for _, tt := range []struct {
			outcome string
			to      string // where the buyer goes, before the reference
			fragment,
			event string
			tickets int
		}{
			{store.OrderPaid, "https://partner.example/done?cart=42&", "", "order.paid", 2},
			{store.OrderFailed, "https://partner.example/cancel?cart=42&", "#again", "order.failed", 0},
			{store.OrderExpired, "https://partner.example/cancel?cart=42&", "#again", "order.expired", 0},
		} {
			t.Run("OK"+strings.ToUpper(tt.outcome[:1])+tt.outcome[1:], func(t *testing.T) {
				ref := b.pending(t, store.EnvTest)
				a := b.submit(t, ref, tt.outcome)
				require.Equal(t, http.StatusSeeOther, a.Status, a.Body)
				require.Equal(t, tt.to+param(ref)+tt.fragment, a.Header.Get("Location"))
				require.Equal(t, tt.outcome, b.order(t, ref).Status)
				require.Equal(t, []string{tt.event}, b.webhooks(t, ref))
				require.Equal(t, tt.tickets, b.issued(t, ref))
			})
		}

		// A second press, from another tab or a double click, finds the
		// order settled: nothing changes, and the buyer goes where the
		// first outcome sent them.
		t.Run("OKSecondPostSettlesNothing", func(t *testing.T) {
			ref := b.pending(t, store.EnvTest)
			require.Equal(t, http.StatusSeeOther, b.submit(t, ref, store.OrderPaid).Status)
			for _, outcome := range []string{store.OrderFailed, store.OrderExpired, store.OrderPaid} {
				a := b.submit(t, ref, outcome)
				require.Equal(t, http.StatusSeeOther, a.Status, a.Body)
				require.Equal(t, "https://partner.example/done?cart=42&"+param(ref), a.Header.Get("Location"), outcome)
			}
			require.Equal(t, store.OrderPaid, b.order(t, ref).Status)
			require.Equal(t, []string{"order.paid"}, b.webhooks(t, ref))
			require.Equal(t, 2, b.issued(t, ref))
		})

		t.Run("OKConcurrentPosts", func(t *testing.T) {
			ref := b.pending(t, store.EnvTest)
			var wg sync.WaitGroup
			answers := make([]answer, 6)
			for i := range answers {
				wg.Go(func() {
					res, err := b.client.PostForm(b.srv.URL+"/sandbox/checkout/"+ref, url.Values{"outcome": {store.OrderPaid}})
					if err != nil {
						answers[i] = answer{Body: err.Error()}
						return
					}
					defer res.Body.Close()
					raw, _ := io.ReadAll(res.Body)
					answers[i] = answer{Status: res.StatusCode, Header: res.Header, Body: string(raw)}
				})
			}
			wg.Wait()
			for _, a := range answers {
				require.Equal(t, http.StatusSeeOther, a.Status, a.Body)
				require.Equal(t, "https://partner.example/done?cart=42&"+param(ref), a.Header.Get("Location"))
			}
			require.Equal(t, []string{"order.paid"}, b.webhooks(t, ref), "settled once")
			require.Equal(t, 2, b.issued(t, ref), "tickets issued once")
		})

		for _, tt := range []struct {
			name string
			form url.Values
		}{
			{"ErrUnknownOutcome", url.Values{"outcome": {"maybe"}}},
			{"ErrNoOutcome", url.Values{}},
			// Only the buttons' outcomes: completed is for free live orders,
			// and pending is no outcome.
			{"ErrCompleted", url.Values{"outcome": {store.OrderCompleted}}},
			{"ErrPending", url.Values{"outcome": {store.OrderPending}}},
			{"ErrCase", url.Values{"outcome": {"PAID"}}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				ref := b.pending(t, store.EnvTest)
				a := b.do(t, http.MethodPost, "/sandbox/checkout/"+ref, tt.form)
				requireMessage(t, a, http.StatusBadRequest, "Choose an outcome", "Choose one of the outcome buttons on the sandbox page.")
				require.Equal(t, store.OrderPending, b.order(t, ref).Status)
				require.Empty(t, b.webhooks(t, ref))
			})
		}

		live := b.pending(t, store.EnvLive)
		for _, tt := range []struct{ name, path string }{
			{"ErrLiveOrder", live},
			{"ErrUnknownOrder", "sbx_" + strings.Repeat("a", 32)},
			{"ErrNotAReference", "sbx_%00x"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				requireMessage(t, b.submit(t, tt.path, store.OrderPaid), http.StatusNotFound, "Not found", notFoundText)
			})
		}
		require.Equal(t, store.OrderPending, b.order(t, live).Status, "a live order is never settled here")
		require.Empty(t, b.webhooks(t, live))
	})
}

// TestSettle_CrossSite: a post a browser sends from another site is
// refused before it reaches the rule, so no page can settle a developer's
// orders behind their back; the page's own posts pass.
func TestSettle_CrossSite(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		for _, tt := range []struct {
			name    string
			headers []string
			want    int
		}{
			{"ErrSecFetchSiteCrossSite", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
			{"ErrSecFetchSiteSameSite", []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
			{"ErrForeignOrigin", []string{"Origin", "https://attacker.example"}, http.StatusForbidden},
			{"ErrNullOrigin", []string{"Origin", "null"}, http.StatusForbidden},
			{"ErrForeignOriginOverSameOriginSite", []string{"Sec-Fetch-Site", "cross-site", "Origin", b.srv.URL}, http.StatusForbidden},
			{"OKSameOrigin", []string{"Sec-Fetch-Site", "same-origin", "Origin", b.srv.URL}, http.StatusSeeOther},
			{"OKOriginOnly", []string{"Origin", b.srv.URL}, http.StatusSeeOther},
			// Not a browser form: nothing to forge.
			{"OKNoBrowserHeaders", nil, http.StatusSeeOther},
		} {
			t.Run(tt.name, func(t *testing.T) {
				ref := b.pending(t, store.EnvTest)
				a := b.submit(t, ref, store.OrderPaid, tt.headers...)
				if tt.want == http.StatusForbidden {
					requireMessage(t, a, http.StatusForbidden, "Refused", refusedText)
					require.Equal(t, store.OrderPending, b.order(t, ref).Status, "a cross-site post marks nothing paid")
					require.Empty(t, b.webhooks(t, ref))
					return
				}
				require.Equal(t, tt.want, a.Status, a.Body)
				require.Equal(t, store.OrderPaid, b.order(t, ref).Status)
			})
		}
	})
}

// TestPastExpiry: an order whose expires_at has passed shows as expired
// before the sweep records it, and can only expire, whatever is pressed.
func TestPastExpiry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ref := b.pending(t, store.EnvTest)
		b.clock.set(b.order(t, ref).ExpiresAt.Add(time.Second))

		a := b.show(t, ref)
		require.Equal(t, http.StatusOK, a.Status, a.Body)
		requireShows(t, a, `<span class="status expired">expired</span>`,
			`<a id="back" href="https://partner.example/cancel?cart=42&amp;`+param(ref)+`#again">`)
		require.NotContains(t, a.Body, `name="outcome"`)
		require.Equal(t, store.OrderPending, b.order(t, ref).Status, "not recorded yet")

		a = b.submit(t, ref, store.OrderPaid)
		require.Equal(t, http.StatusSeeOther, a.Status, a.Body)
		require.Equal(t, "https://partner.example/cancel?cart=42&"+param(ref)+"#again", a.Header.Get("Location"))
		require.Equal(t, store.OrderExpired, b.order(t, ref).Status)
		require.Equal(t, []string{"order.expired"}, b.webhooks(t, ref))
		require.Zero(t, b.issued(t, ref))
	})
}

// TestDatabaseDown: a failure is the HTML 500 page, which says nothing of
// it; the log has it.
func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.MustOpen(t, "sqlite"))
	ref := b.pending(t, store.EnvTest)
	require.NoError(t, b.DB.Close())
	for _, a := range []answer{b.show(t, ref), b.submit(t, ref, store.OrderPaid)} {
		requireMessage(t, a, http.StatusInternalServerError, "Something went wrong", "Something went wrong on our side; try again.")
		require.NotContains(t, a.Body, "database")
	}
	require.Contains(t, b.log.String(), `msg="sandbox page"`)
}
