package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/stretchr/testify/require"
)

// fastJobs makes background work quick enough for tests and lets webhooks
// reach a local receiver.
func fastJobs(c *Config) {
	c.AllowPrivateWebhooks = true
	c.WebhookRetryBase = 5 * time.Millisecond
	c.Jobs.PollInterval = fastJobsPoll
	c.Jobs.SweepInterval = fastJobsSweep
}

// fastJobsPoll and fastJobsSweep are fastJobs' intervals. On SQLite River
// only polls, each of its three queues every PollInterval, and under the
// race detector a poll costs milliseconds of CPU: an idle runner polling
// every 20 ms kept a whole core busy (every 100 ms a third of one, every
// 250 ms a sixth), and the suite's job tests starved each other once they
// ran in parallel. 250 ms is production's interval. Tests that wait for
// something not to happen wait a few of these.
const (
	fastJobsPoll  = 250 * time.Millisecond
	fastJobsSweep = 500 * time.Millisecond
)

// startJobs starts the bundle's job runner until the test ends.
func (tb *testBundle) startJobs(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	testwait.Start(t, "the job runner", func() error { return tb.m.Jobs.Start(ctx) })
	t.Cleanup(func() {
		stop, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = tb.m.Jobs.Stop(stop)
		cancel()
	})
}

// delivery is one request a receiver got.
type delivery struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

func (d delivery) event(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(d.Body, &v))
	return v
}

// receiver is a partner's webhook endpoint; status decides the answer to
// the n-th request (1-based).
type receiver struct {
	mu     sync.Mutex
	got    []delivery
	status func(n int) int
	srv    *httptest.Server
}

func newReceiver(t testing.TB, status func(n int) int) *receiver {
	rc := &receiver{status: status}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		webhookContractCheck(t, r.Header, body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{Header: r.Header.Clone(), Body: body, At: time.Now()})
		n := len(rc.got)
		rc.mu.Unlock()
		w.WriteHeader(rc.status(n))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func ok(int) int { return http.StatusNoContent }

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// waitFor polls cond until it holds. timeout is what it takes on a quiet
// machine at most; the test gives up only after testwait's patience, so a
// loaded machine changes how long it takes, never the verdict.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, timeout, what, cond)
}

// deliveredOfType waits for a delivery of event type typ and returns it.
func (rc *receiver) waitType(t testing.TB, typ string) delivery {
	t.Helper()
	var found delivery
	waitFor(t, 10*time.Second, "a "+typ+" delivery", func() bool {
		for _, d := range rc.deliveries() {
			if d.Header.Get("X-SVC-Event-Type") == typ {
				found = d
				return true
			}
		}
		return false
	})
	return found
}

func (tb *testBundle) pointWebhooks(t testing.TB, u string) {
	t.Helper()
	_, err := tb.m.Provision.UpdateApp(context.Background(), tb.demo.App.App.ID, provision.AppUpdate{WebhookURL: &u})
	require.NoError(t, err)
}

// noRedirects is an HTTP client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (tb *testBundle) submitOutcome(t testing.TB, checkoutURL, outcome string) *http.Response {
	t.Helper()
	u := strings.Replace(checkoutURL, "http://boxoffice.test", tb.srv.URL, 1)
	res, err := noRedirects.PostForm(u, url.Values{"outcome": {outcome}})
	require.NoError(t, err)
	res.Body.Close()
	return res
}

func TestWebhooksAndSandboxPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := newTestClock()
		tb := setup(t, db, fastJobs, withClock(clock))
		rc := newReceiver(t, ok)
		tb.pointWebhooks(t, rc.srv.URL+"/hooks")
		tb.startJobs(t)
		secret := tb.demo.App.WebhookSecret

		requireSigned := func(t *testing.T, d delivery, typ, env string) map[string]any {
			t.Helper()
			require.NoError(t, verify.Verify(secret, d.Header, d.Body), "X-SVC signature")
			require.NoError(t, verify.VerifyStandardAt(secret, d.Header, d.Body, time.Now()), "Standard Webhooks signature")
			ev := d.event(t)
			require.Equal(t, typ, ev["type"])
			require.Equal(t, env, ev["environment"])
			require.Equal(t, d.Header.Get("X-SVC-Event-Id"), ev["id"])
			require.Equal(t, d.Header.Get("webhook-id"), ev["id"])
			require.Regexp(t, `^evt_[0-9a-f]{32}$`, ev["id"])
			require.Regexp(t, `^\d{4}-\d\d-\d\dT`, ev["created_at"])
			return ev
		}

		t.Run("SandboxPaid", func(t *testing.T) {
			sess := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(2)).data()
			pageURL := strings.Replace(sess["checkout_url"].(string), "http://boxoffice.test", tb.srv.URL, 1)
			page, err := http.Get(pageURL)
			require.NoError(t, err)
			html, _ := io.ReadAll(page.Body)
			page.Body.Close()
			require.Equal(t, 200, page.StatusCode)
			for _, want := range []string{"Highlife Night at the Conference Centre", "2 × Regular", "GH₵ 240.00",
				`name="outcome" value="paid"`, `name="outcome" value="failed"`, `name="outcome" value="expired"`, "Expires"} {
				require.Contains(t, string(html), want)
			}

			res := tb.submitOutcome(t, sess["checkout_url"].(string), "paid")
			require.Equal(t, http.StatusSeeOther, res.StatusCode)
			require.Equal(t, "https://partner.example/done?order_reference="+sess["order_reference"].(string), res.Header.Get("Location"))
			order := tb.get(t, "/api/v1/orders/"+sess["order_reference"].(string), tb.testKey).data()
			require.Equal(t, "paid", order["status"])

			ev := requireSigned(t, rc.waitType(t, "order.paid"), "order.paid", "test")
			require.Equal(t, 1.0, ev["sequence"])
			require.Equal(t, order, ev["data"].(map[string]any)["order"], "data.order is the spec's Order")

			again := tb.submitOutcome(t, sess["checkout_url"].(string), "failed")
			require.Equal(t, "https://partner.example/done?order_reference="+sess["order_reference"].(string), again.Header.Get("Location"), "a settled order stays settled")
			require.Equal(t, "paid", tb.get(t, "/api/v1/orders/"+sess["order_reference"].(string), tb.testKey).data()["status"])
		})
		t.Run("SandboxFailed", func(t *testing.T) {
			sess := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).data()
			res := tb.submitOutcome(t, sess["checkout_url"].(string), "failed")
			require.Equal(t, "https://partner.example/cancel?order_reference="+sess["order_reference"].(string), res.Header.Get("Location"))
			requireSigned(t, rc.waitType(t, "order.failed"), "order.failed", "test")
		})
		t.Run("SandboxExpiredButton", func(t *testing.T) {
			sess := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).data()
			res := tb.submitOutcome(t, sess["checkout_url"].(string), "expired")
			require.Equal(t, "https://partner.example/cancel?order_reference="+sess["order_reference"].(string), res.Header.Get("Location"))
			requireSigned(t, rc.waitType(t, "order.expired"), "order.expired", "test")
		})
		t.Run("LiveFreeCompleted", func(t *testing.T) {
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-2", "DEMO-CHALEWOTE-2-GA", 1)).data()
			ev := requireSigned(t, rc.waitType(t, "order.completed"), "order.completed", "live")
			require.Equal(t, sess["order_reference"], ev["data"].(map[string]any)["order"].(map[string]any)["reference"])
		})
		t.Run("ExpiryReleasesHolds", func(t *testing.T) {
			var before store.Ticket
			require.NoError(t, db.NewSelect().Model(&before).Where("id = ?", tb.demo.Catalog.Tickets["DEMO-HIGHLIFE-VIP"]).Scan(context.Background()))
			sess := tb.checkout(t, tb.liveKey, newIdemKey(), tb.cartFor("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-VIP", 2)).data()
			ref := sess["order_reference"].(string)
			// Live orders live LIVE_EXPIRY (15m); bring this one's expiry to now.
			_, err := db.NewUpdate().Model((*store.Order)(nil)).Set("expires_at = ?", clock.Now().Add(-time.Second)).
				Where("reference = ?", ref).Exec(context.Background())
			require.NoError(t, err)
			waitFor(t, 10*time.Second, "the sweep to expire the order", func() bool {
				return tb.get(t, "/api/v1/orders/"+ref, tb.liveKey).data()["status"] == "expired"
			})
			var after store.Ticket
			require.NoError(t, db.NewSelect().Model(&after).Where("id = ?", tb.demo.Catalog.Tickets["DEMO-HIGHLIFE-VIP"]).Scan(context.Background()))
			require.Equal(t, before.Held, after.Held, "the hold is released")
			var n int
			waitFor(t, 10*time.Second, "order.expired for the live order", func() bool {
				n = 0
				for _, d := range rc.deliveries() {
					if strings.Contains(string(d.Body), ref) && d.Header.Get("X-SVC-Event-Type") == "order.expired" {
						n++
					}
				}
				return n > 0
			})
			time.Sleep(3 * fastJobsSweep) // several more sweeps run
			count, err := db.NewSelect().Model((*store.WebhookEvent)(nil)).Where("type = 'order.expired'").
				Where("payload LIKE ?", "%"+ref+"%").Count(context.Background())
			require.NoError(t, err)
			require.EqualValues(t, 1, count, "exactly one order.expired")
		})
		t.Run("SandboxExpiresByTime", func(t *testing.T) {
			sess := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).data()
			ref := sess["order_reference"].(string)
			clock.Add(checkout.DefaultConfig().SandboxExpiry) // SANDBOX_EXPIRY passes
			waitFor(t, 10*time.Second, "the sweep to expire the order", func() bool {
				return tb.get(t, "/api/v1/orders/"+ref, tb.testKey).data()["status"] == "expired"
			})
			res := tb.submitOutcome(t, sess["checkout_url"].(string), "paid")
			require.Equal(t, "https://partner.example/cancel?order_reference="+ref, res.Header.Get("Location"), "an expired checkout cannot be paid")
		})
		t.Run("ErrPageNotFound", func(t *testing.T) {
			for _, ref := range []string{"sbx_nope", "ord_whatever", "x"} {
				res, err := http.Get(tb.srv.URL + "/sandbox/checkout/" + ref)
				require.NoError(t, err)
				res.Body.Close()
				require.Equal(t, 404, res.StatusCode, ref)
			}
		})
	})
}
