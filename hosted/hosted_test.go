package hosted_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
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
	"github.com/boxoffice/boxoffice/devpaypage"
	"github.com/boxoffice/boxoffice/hosted"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

const (
	successURL = "https://partner.example/done?cart=42"
	cancelURL  = "https://partner.example/cancel?cart=42"
)

// Texts of the page's answers.
const (
	notFoundText  = "This checkout does not exist. Start again from the seller's site."
	refusedText   = "This form was sent from another site, so it was not accepted. Open the page itself and use its buttons."
	waitingText   = "Waiting for the payment provider to confirm your payment… this page refreshes by itself."
	paidText      = "Payment received. Your tickets are ready, and we are emailing them to you as well."
	declinedText  = "The payment was declined. Nothing was charged; start a new checkout from the seller's site to try again."
	expiredText   = "This checkout has expired. Start a new checkout from the seller's site."
	reviewText    = "Your payment arrived after this checkout closed. It is being reviewed for a refund; no tickets were issued."
	noPaymentText = "Payments are unavailable right now; please try again shortly."
)

func ptr[T any](v T) *T { return &v }

// param is the query parameter that names the order to the partner.
func param(ref string) string { return checkout.OrderParam + "=" + ref }

// clock is the services' and pages' clock, which a test moves.
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

// bundle is the hosted checkout on a real HTTP server, over a real
// checkout service and a fresh database holding the demo catalog and app,
// its PUBLIC_BASE_URL the server's own address.
type bundle struct {
	*checkouttest.Fixture
	srv    *httptest.Server
	router chi.Router
	client *http.Client
	clock  *clock
	log    *lockedBuffer
	keys   atomic.Int64
}

// newBundle starts the server; the caller mounts the routes, with the
// provider of its choice.
func newBundle(t *testing.T, db *store.DB) *bundle {
	t.Helper()
	f := checkouttest.MustNew(t, db)
	b := &bundle{Fixture: f, clock: &clock{}, log: &lockedBuffer{}, router: chi.NewRouter()}
	b.clock.set(f.Now)
	f.Service.Now = b.clock.Now
	b.srv = httptest.NewServer(b.router)
	t.Cleanup(b.srv.Close)
	f.Service.Config.PublicBaseURL = b.srv.URL
	// The test reads the redirects themselves.
	b.client = &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return b
}

func (b *bundle) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b.log, nil)) }

// handler mounts the hosted checkout with provider p (nil: none).
func (b *bundle) handler(p payments.Provider) {
	(&hosted.Handler{Checkout: b.Service, Payments: p, Now: b.clock.Now, Log: b.logger()}).Routes(b.router)
}

// setupDev serves the hosted checkout with the development provider,
// whose page is served by the same server and confirms in process, as a
// provider's callback would.
func setupDev(t *testing.T, db *store.DB) *bundle {
	t.Helper()
	b := newBundle(t, db)
	dev := devpay.New(b.srv.URL, db, b.clock.Now)
	dev.Confirm = func(ctx context.Context, st *payments.Status) error {
		_, err := b.Service.ConfirmPayment(ctx, st)
		return err
	}
	b.Service.Payments = dev
	(&devpaypage.Handler{Provider: dev, Log: b.logger()}).Routes(b.router)
	b.handler(dev)
	return b
}

// pending checks out two Regular Highlife tickets in env: an order that
// waits for its payment.
func (b *bundle) pending(t *testing.T, env string) *store.Order {
	t.Helper()
	n := b.keys.Add(1)
	sess, _, err := b.Service.Create(context.Background(), checkout.Caller{AppID: b.Demo.App.App.ID, Environment: env},
		checkout.Request{Key: fmt.Sprintf("hosted-%d", n), Input: &checkout.Input{
			EventID: ptr(b.ID(t, "DEMO-HIGHLIFE")), EventdateID: ptr(b.ID(t, "DEMO-HIGHLIFE-1")),
			Items:      []*checkout.Item{{TicketID: ptr(b.ID(t, "DEMO-HIGHLIFE-REG")), Quantity: ptr(2)}},
			Customer:   &checkout.Customer{Name: ptr("Ama Mensah"), Email: ptr(fmt.Sprintf("ama%d@example.com", n)), Phone: ptr("0241234567")},
			SuccessURL: ptr(successURL), CancelURL: ptr(cancelURL),
		}})
	require.NoError(t, err)
	require.Equal(t, store.OrderPending, sess.Status)
	return b.order(t, sess.OrderReference)
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

// answer is a page's answer.
type answer struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a request to the server (path, or a URL of it); headers are
// name, value pairs.
func (b *bundle) do(t *testing.T, method, path string, body io.Reader, headers ...string) answer {
	t.Helper()
	if strings.HasPrefix(path, "/") {
		path = b.srv.URL + path
	}
	req, err := http.NewRequest(method, path, body)
	require.NoError(t, err)
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

func (b *bundle) get(t *testing.T, path string) answer {
	t.Helper()
	return b.do(t, http.MethodGet, path, nil)
}

// post sends a form, as a page's own button sends it.
func (b *bundle) post(t *testing.T, path string, form url.Values, headers ...string) answer {
	t.Helper()
	return b.do(t, http.MethodPost, path, strings.NewReader(form.Encode()),
		append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)...)
}

// requirePage checks a rendered checkout page: 200, the page headers,
// and each of wants in its body.
func requirePage(t *testing.T, a answer, wants ...string) {
	t.Helper()
	require.Equal(t, http.StatusOK, a.Status, a.Body)
	require.Equal(t, "text/html; charset=utf-8", a.Header.Get("Content-Type"))
	require.Equal(t, "no-store", a.Header.Get("Cache-Control"))
	require.Contains(t, a.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	for _, want := range wants {
		if !strings.Contains(a.Body, want) {
			t.Fatalf("the page lacks %q; it shows:\n%s", want, shown(a.Body))
		}
	}
}

// shown is a page's <main>, without the head's styles, for a failure.
func shown(page string) string {
	if _, main, ok := strings.Cut(page, "<main>"); ok {
		main, _, _ = strings.Cut(main, "</main>")
		return main
	}
	return page
}

// requireMessage checks an HTML message page: status, title and text.
func requireMessage(t *testing.T, a answer, status int, title, text string) {
	t.Helper()
	require.Equal(t, status, a.Status, a.Body)
	require.Equal(t, "text/html; charset=utf-8", a.Header.Get("Content-Type"))
	require.Contains(t, a.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	if want := "<h1>" + title + "</h1><p>" + html.EscapeString(text) + "</p>"; !strings.Contains(a.Body, want) {
		t.Fatalf("the page lacks %q; it shows:\n%s", want, shown(a.Body))
	}
}

func back(label, to string) string {
	return `<a class="back" id="back" href="` + strings.ReplaceAll(to, "&", "&amp;") + `">` + label + `</a>`
}

// TestShow: the order page offers the pay button while the order waits,
// and otherwise shows its outcome with the way back to the partner.
func TestShow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setupDev(t, db)
		ctx := context.Background()

		t.Run("OKPay", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			a := b.get(t, "/checkout/"+o.Reference)
			requirePage(t, a,
				"<title>Checkout · Highlife Night at the Conference Centre</title>",
				"Checkout for <strong>Demo ticket shop</strong>",
				" · Accra International Conference Centre, Accra</p>",
				`<tr><td>2 × Regular</td><td class="num">GH₵ 240.00</td></tr>`,
				`<form method="post" action="/checkout/`+o.Reference+`/pay"><button type="submit">Pay GH₵ 240.00</button></form>`,
				"This checkout expires ",
				`<a class="shop" id="shop" href="https://partner.example/cancel?cart=42&amp;`+param(o.Reference)+`">Back to the shop</a>`,
				"Reference: "+o.Reference)
			require.NotContains(t, a.Body, `id="back"`, "no way back with an outcome before there is one")
			require.NotContains(t, a.Body, `http-equiv="refresh"`)
			// The pay form is answered with a redirect to the provider.
			require.Contains(t, a.Header.Get("Content-Security-Policy"), "form-action 'self' "+b.srv.URL+";")
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
		})

		t.Run("OKPaid", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			_, err := b.Service.ConfirmPayment(ctx, &payments.Status{Reference: o.Reference, State: payments.Paid, Amount: o.TotalAmount, Currency: o.Currency})
			require.NoError(t, err)
			token := *b.order(t, o.Reference).TicketsToken
			requirePage(t, b.get(t, "/checkout/"+o.Reference),
				`<p class="outcome paid">`+paidText+`</p>`,
				`<a class="tickets" id="tickets" href="`+b.srv.URL+`/tickets/`+token+`">Show my tickets</a>`,
				back("Continue to the seller's site", successURL+"&"+param(o.Reference)))
		})

		// An app that delivers its tickets itself: the page promises no email.
		t.Run("OKPaidNotEmailed", func(t *testing.T) {
			require.NoError(t, store.SetTicketEmails(ctx, db, b.Demo.App.App.ID, false, b.Now))
			t.Cleanup(func() { require.NoError(t, store.SetTicketEmails(ctx, db, b.Demo.App.App.ID, true, b.Now)) })
			o := b.pending(t, store.EnvLive)
			_, err := b.Service.ConfirmPayment(ctx, &payments.Status{Reference: o.Reference, State: payments.Paid, Amount: o.TotalAmount, Currency: o.Currency})
			require.NoError(t, err)
			a := b.get(t, "/checkout/"+o.Reference)
			requirePage(t, a, `<p class="outcome paid">Payment received. Your tickets are ready.</p>`, `id="tickets"`)
		})

		for _, tt := range []struct {
			name    string
			outcome string
			text    string
		}{
			{"OKFailed", store.OrderFailed, `<p class="outcome failed">` + declinedText + `</p>`},
			{"OKExpired", store.OrderExpired, `<p class="outcome expired">` + expiredText + `</p>`},
		} {
			t.Run(tt.name, func(t *testing.T) {
				o := b.pending(t, store.EnvLive)
				_, _, err := b.Service.Settle(ctx, o.Reference, tt.outcome)
				require.NoError(t, err)
				a := b.get(t, "/checkout/"+o.Reference)
				requirePage(t, a, tt.text, back("Back to the seller's site", cancelURL+"&"+param(o.Reference)))
				require.NotContains(t, a.Body, "<form", "nothing to pay")
				require.NotContains(t, a.Body, `id="tickets"`)
			})
		}

		// Money is never dropped: a payment confirmed after the order
		// closed is flagged, and the buyer is told so.
		t.Run("OKRefundReview", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			_, _, err := b.Service.Settle(ctx, o.Reference, store.OrderExpired)
			require.NoError(t, err)
			_, err = b.Service.ConfirmPayment(ctx, &payments.Status{Reference: o.Reference, State: payments.Paid, Amount: o.TotalAmount, Currency: o.Currency})
			require.NoError(t, err)
			requirePage(t, b.get(t, "/checkout/"+o.Reference),
				`<p class="outcome review">`+reviewText+`</p>`,
				back("Back to the seller's site", cancelURL+"&"+param(o.Reference)))
		})

		sandbox := b.pending(t, store.EnvTest)
		for _, tt := range []struct{ name, ref string }{
			// A test order is settled on the sandbox page only.
			{"ErrSandboxOrder", sandbox.Reference},
			{"ErrUnknownOrder", "ord_" + strings.Repeat("a", 32)},
			{"ErrNotAReference", "ord_%00x"},
			{"ErrNoPrefix", "nope"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				for _, path := range []string{"/checkout/" + tt.ref, "/checkout/" + tt.ref + "/return"} {
					requireMessage(t, b.get(t, path), http.StatusNotFound, "Not found", notFoundText)
				}
				requireMessage(t, b.post(t, "/checkout/"+tt.ref+"/pay", url.Values{}), http.StatusNotFound, "Not found", notFoundText)
			})
		}
		require.Equal(t, store.OrderPending, b.order(t, sandbox.Reference).Status)
	})
}

// TestPay: the pay button hands the buyer to the provider's page while the
// order waits, and back to the order page once it does not.
func TestPay(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setupDev(t, db)

		t.Run("OK", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			a := b.post(t, "/checkout/"+o.Reference+"/pay", url.Values{})
			require.Equal(t, http.StatusSeeOther, a.Status, a.Body)
			require.Equal(t, b.srv.URL+"/dev-pay/"+o.Reference, a.Header.Get("Location"))
			require.Equal(t, *o.PaymentURL, a.Header.Get("Location"))
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status, "handing over pays nothing")
		})

		settled := func(status string) func(t *testing.T) *store.Order {
			return func(t *testing.T) *store.Order {
				o := b.pending(t, store.EnvLive)
				_, _, err := b.Service.Settle(context.Background(), o.Reference, status)
				require.NoError(t, err)
				return o
			}
		}
		for _, tt := range []struct {
			name  string
			order func(t *testing.T) *store.Order
		}{
			{"OKPaidGoesToOrderPage", settled(store.OrderPaid)},
			{"OKFailedGoesToOrderPage", settled(store.OrderFailed)},
			{"OKExpiredGoesToOrderPage", settled(store.OrderExpired)},
		} {
			t.Run(tt.name, func(t *testing.T) {
				o := tt.order(t)
				a := b.post(t, "/checkout/"+o.Reference+"/pay", url.Values{})
				require.Equal(t, http.StatusSeeOther, a.Status, a.Body)
				require.Equal(t, "/checkout/"+o.Reference, a.Header.Get("Location"))
			})
		}

		for _, tt := range []struct {
			name    string
			headers []string
			want    int
		}{
			{"ErrCrossSite", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
			{"ErrSameSite", []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
			{"ErrForeignOrigin", []string{"Origin", "https://attacker.example"}, http.StatusForbidden},
			{"ErrNullOrigin", []string{"Origin", "null"}, http.StatusForbidden},
			{"OKSameOrigin", []string{"Sec-Fetch-Site", "same-origin", "Origin", b.srv.URL}, http.StatusSeeOther},
			{"OKOriginOnly", []string{"Origin", b.srv.URL}, http.StatusSeeOther},
		} {
			t.Run(tt.name, func(t *testing.T) {
				o := b.pending(t, store.EnvLive)
				a := b.post(t, "/checkout/"+o.Reference+"/pay", url.Values{}, tt.headers...)
				if tt.want == http.StatusForbidden {
					requireMessage(t, a, http.StatusForbidden, "Refused", refusedText)
					require.Empty(t, a.Header.Get("Location"))
					return
				}
				require.Equal(t, tt.want, a.Status, a.Body)
				require.Equal(t, *o.PaymentURL, a.Header.Get("Location"))
			})
		}
	})
}

// TestReturn: the page the provider sends the buyer back to shows an
// outcome only once the provider confirms it, asking the provider itself
// when its callback has not arrived; the redirect alone proves nothing.
func TestReturn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setupDev(t, db)
		ctx := context.Background()
		returnPath := func(o *store.Order) string { return "/checkout/" + o.Reference + "/return" }

		// The buyer pays on the provider's page: it confirms and sends them
		// back to the return page, which shows the tickets.
		t.Run("OKPaidOnProviderPage", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			toProvider := b.post(t, "/checkout/"+o.Reference+"/pay", url.Values{}).Header.Get("Location")
			a := b.post(t, toProvider, url.Values{"outcome": {"pay"}})
			require.Equal(t, http.StatusSeeOther, a.Status, a.Body)
			require.Equal(t, b.srv.URL+returnPath(o), a.Header.Get("Location"), "back to the service's own page")
			ret := b.get(t, a.Header.Get("Location"))
			got := b.order(t, o.Reference)
			require.Equal(t, store.OrderPaid, got.Status)
			requirePage(t, ret, `<p class="outcome paid">`+paidText+`</p>`,
				`<a class="tickets" id="tickets" href="`+b.srv.URL+`/tickets/`+*got.TicketsToken+`">Show my tickets</a>`,
				back("Continue to the seller's site", successURL+"&"+param(o.Reference)))
			require.Equal(t, []string{"order.paid"}, b.webhooks(t, o.Reference))
		})

		t.Run("OKDeclinedOnProviderPage", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			a := b.post(t, *o.PaymentURL, url.Values{"outcome": {"decline"}})
			require.Equal(t, http.StatusSeeOther, a.Status, a.Body)
			requirePage(t, b.get(t, a.Header.Get("Location")), `<p class="outcome failed">`+declinedText+`</p>`,
				back("Back to the seller's site", cancelURL+"&"+param(o.Reference)))
			require.Equal(t, store.OrderFailed, b.order(t, o.Reference).Status)
		})

		// Whatever the query claims, a payment the provider has not
		// confirmed leaves the buyer waiting on a page that refreshes.
		t.Run("OKWaitingBeforeConfirmation", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			a := b.get(t, returnPath(o)+"?status=success&reference="+o.Reference)
			requirePage(t, a, `<meta http-equiv="refresh" content="3">`, `<p class="outcome waiting">`+waitingText+`</p>`)
			require.NotContains(t, a.Body, `id="back"`)
			require.NotContains(t, a.Body, "<form")
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
			require.Empty(t, b.webhooks(t, o.Reference))
		})

		// The provider settled the payment but its confirmation never
		// reached the service: the return page asks the provider and
		// applies the outcome before showing it.
		for _, tt := range []struct {
			name   string
			state  string
			status string
			text   string
		}{
			{"OKConfirmsPaidItself", store.DevPaymentPaid, store.OrderPaid, paidText},
			{"OKConfirmsDeclinedItself", store.DevPaymentDeclined, store.OrderFailed, declinedText},
		} {
			t.Run(tt.name, func(t *testing.T) {
				o := b.pending(t, store.EnvLive)
				_, err := store.DecideDevPayment(ctx, db, o.Reference, tt.state, b.clock.Now())
				require.NoError(t, err)
				require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status, "no confirmation yet")
				requirePage(t, b.get(t, returnPath(o)), tt.text)
				require.Equal(t, tt.status, b.order(t, o.Reference).Status)
				// Shown again, it changes nothing more.
				requirePage(t, b.get(t, returnPath(o)), tt.text)
				require.Len(t, b.webhooks(t, o.Reference), 1)
			})
		}

		// The provider cannot say where the payment stands: the buyer
		// waits, and the failure is logged.
		t.Run("OKWaitingWhenVerificationFails", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			_, err := db.NewDelete().Model((*store.DevPayment)(nil)).Where("reference = ?", o.Reference).Exec(ctx)
			require.NoError(t, err)
			requirePage(t, b.get(t, returnPath(o)), `<p class="outcome waiting">`+waitingText+`</p>`)
			require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
			require.Contains(t, b.log.String(), `msg="payment verification failed" order=`+o.Reference)
		})

		// An order past its expiry is expired on every page, before the
		// sweep records it, and the pay button no longer leads anywhere.
		t.Run("OKPastExpiry", func(t *testing.T) {
			o := b.pending(t, store.EnvLive)
			b.clock.set(o.ExpiresAt.Add(time.Second))
			t.Cleanup(func() { b.clock.set(b.Now) })
			for _, path := range []string{"/checkout/" + o.Reference, returnPath(o)} {
				requirePage(t, b.get(t, path), `<p class="outcome expired">`+expiredText+`</p>`,
					back("Back to the seller's site", cancelURL+"&"+param(o.Reference)))
			}
			a := b.post(t, "/checkout/"+o.Reference+"/pay", url.Values{})
			require.Equal(t, http.StatusSeeOther, a.Status)
			require.Equal(t, "/checkout/"+o.Reference, a.Header.Get("Location"))
		})
	})
}

// TestNoProvider: with no payment provider configured the page says
// payments are unavailable instead of offering a button that leads
// nowhere, and no callback is taken.
func TestNoProvider(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := newBundle(t, db)
		// Orders made while a provider was configured, served after it
		// was taken away.
		b.Service.Payments = devpay.New(b.srv.URL, db, b.clock.Now)
		b.handler(nil)
		o := b.pending(t, store.EnvLive)

		a := b.get(t, "/checkout/"+o.Reference)
		requirePage(t, a, `<p class="outcome waiting">`+noPaymentText+`</p>`, `id="shop"`)
		require.NotContains(t, a.Body, "<form")
		requirePage(t, b.get(t, "/checkout/"+o.Reference+"/return"), waitingText)
		for _, name := range []string{"dev", "paystack"} {
			a := b.do(t, http.MethodPost, "/payments/"+name+"/callback", strings.NewReader(`{}`))
			require.Equal(t, http.StatusNotFound, a.Status)
			require.Equal(t, "unknown payment provider\n", a.Body)
		}
		require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
	})
}

// TestDevCallback: the development provider confirms in process and takes
// no callback from outside; another provider's name is unknown.
func TestDevCallback(t *testing.T) {
	t.Parallel()
	b := setupDev(t, storetest.MustOpen(t, "sqlite"))
	o := b.pending(t, store.EnvLive)
	a := b.do(t, http.MethodPost, "/payments/dev/callback",
		strings.NewReader(`{"reference":"`+o.Reference+`","state":"paid"}`))
	require.Equal(t, http.StatusUnauthorized, a.Status)
	require.Equal(t, "signature does not match\n", a.Body)
	require.Contains(t, b.log.String(), `msg="refused a payment callback with a bad signature" provider=dev`)
	a = b.do(t, http.MethodPost, "/payments/paystack/callback", strings.NewReader(`{}`))
	require.Equal(t, http.StatusNotFound, a.Status)
	require.Equal(t, "unknown payment provider\n", a.Body)
	require.Equal(t, store.OrderPending, b.order(t, o.Reference).Status)
}

// TestDatabaseDown: a failure is the HTML 500 page, which says nothing of
// it; the log has it.
func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	b := setupDev(t, storetest.MustOpen(t, "sqlite"))
	o := b.pending(t, store.EnvLive)
	require.NoError(t, b.DB.Close())
	for _, a := range []answer{
		b.get(t, "/checkout/"+o.Reference),
		b.get(t, "/checkout/"+o.Reference+"/return"),
		b.post(t, "/checkout/"+o.Reference+"/pay", url.Values{}),
	} {
		requireMessage(t, a, http.StatusInternalServerError, "Something went wrong", "Something went wrong on our side; try again.")
	}
	require.Contains(t, b.log.String(), `msg="hosted checkout"`)
}
