package boxcli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// ordersFixture is a served program with orders of every kind an operator
// looks for, made through the API, the pages and the payment provider as
// buyers make them, and the command line on the same database.
type ordersFixture struct {
	*served
	dbURL string
	rc    *receiver
	// sandboxPaid (2 Highlife tickets, paid on the sandbox page, delivered
	// to rc), sandboxPending, livePaid (paid through the development
	// provider), lateReview (expired, then paid: flagged) and
	// amountReview (paid the wrong amount: flagged, still pending), oldest
	// first.
	sandboxPaid, sandboxPending, livePaid, lateReview, amountReview string
}

func setupOrders(t *testing.T, kind string) *ordersFixture {
	t.Helper()
	dbURL := storetest.FreshURL(t, kind)
	f := &ordersFixture{served: serve(t, storetest.OpenURL(t, dbURL), fastJobs), dbURL: dbURL}
	f.rc = newReceiver(t)
	f.pointWebhooks(t, f.rc.srv.URL+"/hooks")
	f.startJobs(t)
	ctx := context.Background()

	ref, checkoutURL := f.pending(t, f.testKey, f.highlife(2))
	f.press(t, checkoutURL, url.Values{"outcome": {"paid"}})
	f.sandboxPaid = ref
	f.rc.waitType(t, "order.paid")
	f.sandboxPending, _ = f.pending(t, f.testKey, f.highlife(1))

	ref, checkoutURL = f.pending(t, f.liveKey, f.highlife(1))
	back := f.press(t, f.press(t, checkoutURL+"/pay", nil), url.Values{"outcome": {"pay"}})
	page := f.browse(t, back)
	require.Contains(t, page, "Payment received")
	f.livePaid = ref

	f.lateReview, _ = f.pending(t, f.liveKey, f.highlife(1))
	_, _, err := f.m.Checkout.Settle(ctx, f.lateReview, store.OrderExpired)
	require.NoError(t, err)
	_, err = f.m.Checkout.ConfirmPayment(ctx, &payments.Status{Reference: f.lateReview, State: payments.Paid, Amount: 12000, Currency: "GHS"})
	require.NoError(t, err)

	f.amountReview, _ = f.pending(t, f.liveKey, f.highlife(1))
	_, err = f.m.Checkout.ConfirmPayment(ctx, &payments.Status{Reference: f.amountReview, State: payments.Paid, Amount: 100, Currency: "GHS"})
	require.NoError(t, err)
	return f
}

// scrape returns the metrics page of an admin listener.
func scrape(t testing.TB, adminURL string) string {
	t.Helper()
	res, err := http.Get(adminURL + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(body)
}

// refs returns the references of an `orders list --json` answer, in order.
func refs(t *testing.T, list map[string]any) []string {
	t.Helper()
	var out []string
	for _, o := range list["orders"].([]any) {
		out = append(out, o.(map[string]any)["reference"].(string))
	}
	return out
}

func TestCLIOrders(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := setupOrders(t, kind)
			all := []string{f.amountReview, f.lateReview, f.livePaid, f.sandboxPending, f.sandboxPaid}
			list := func(args ...string) []string {
				t.Helper()
				return refs(t, mustJSON(t, f.dbURL, append([]string{"orders", "list", "--json"}, args...)...))
			}

			t.Run("OKList", func(t *testing.T) {
				require.Equal(t, all, list(), "every app's orders, newest first")
				require.Equal(t, all[:2], list("--limit", "2"))
				require.Equal(t, all[:3], list("--env", "live"))
				require.Equal(t, all[3:], list("--env", "test"))
				require.Equal(t, []string{f.livePaid, f.sandboxPaid}, list("--status", "paid"))
				require.Equal(t, []string{f.amountReview, f.sandboxPending}, list("--status", "pending"))
				require.Equal(t, []string{f.livePaid}, list("--status", "paid", "--env", "live"))
				require.Equal(t, all, list("--app", "1"))
				require.Equal(t, []string{f.sandboxPending}, list("--app", "1", "--env", "test", "--status", "pending"))
				require.Equal(t, []string{f.amountReview, f.lateReview}, list("--refund-review"))
				require.Equal(t, []string{f.lateReview}, list("--refund-review", "--status", "expired", "--app", "1", "--env", "live"))
				require.Empty(t, list("--refund-review", "--env", "test"))

				got := mustJSON(t, f.dbURL, "orders", "list", "--refund-review", "--limit", "1", "--json")["orders"].([]any)[0].(map[string]any)
				require.Equal(t, f.amountReview, got["reference"])
				require.Equal(t, 1.0, got["app_id"])
				require.Equal(t, "pending", got["status"])
				require.Equal(t, true, got["refund_review"])
				require.Equal(t, "dev", got["payment_provider"])
				require.Contains(t, got["review_note"], "confirmed for GHS 1.00, the order is GHS 120.00")
				require.Equal(t, map[string]any{"name": "Ama Mensah", "email": "ama@example.com", "phone": "024 123 4567"}, got["customer"])
				require.Len(t, got["items"], 1, "the API's Order, items and all")
				require.Regexp(t, `^http://[^/]+/checkout/`+f.amountReview+`$`, got["checkout_url"])

				out, err := runCLI(t, f.dbURL, "orders", "list")
				require.NoError(t, err)
				t.Logf("boxoffice orders list:\n%s", out)
				out, err = runCLI(t, f.dbURL, "orders", "list", "--refund-review")
				require.NoError(t, err)
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				require.Len(t, lines, 2)
				require.Regexp(t, `^`+f.amountReview+` +app 1 +live pending +GHS +120\.00  \d{4}-\d\d-\d\dT[0-9:]+Z  REFUND REVIEW: payment `+f.amountReview+` confirmed for GHS 1\.00, the order is GHS 120\.00$`, lines[0])
				require.Contains(t, lines[1], "REFUND REVIEW: payment "+f.lateReview+" confirmed while the order was expired")
				out, err = runCLI(t, f.dbURL, "orders", "list", "--env", "test", "--status", "expired")
				require.NoError(t, err)
				require.Equal(t, "no orders expired in test\n", out)
			})

			t.Run("OKShow", func(t *testing.T) {
				got := mustJSON(t, f.dbURL, "orders", "show", f.sandboxPaid, "--json")
				require.Equal(t, f.sandboxPaid, got["reference"])
				require.Equal(t, "paid", got["status"])
				require.Equal(t, "Highlife Night at the Conference Centre", got["event_name"])
				require.Regexp(t, `^\d{4}-\d\d-\d\dT[0-9:]+Z$`, got["eventdate_start"])
				require.Equal(t, []any{map[string]any{"ticket_id": float64(f.demo.Catalog.Tickets["DEMO-HIGHLIFE-REG"]), "name": "Regular",
					"quantity": 2.0, "unit_price": "120.00", "amount": "240.00"}}, got["items"])
				require.Len(t, got["tickets"], 2)
				require.Equal(t, false, got["refund_review"])
				require.Nil(t, got["payment_provider"], "a sandbox order is paid on the sandbox page")
				events := got["webhook_events"].([]any)
				require.Len(t, events, 1)
				ev := events[0].(map[string]any)
				require.Equal(t, "order.paid", ev["type"])
				waitFor(t, 10*time.Second, "the delivery to be recorded", func() bool {
					got = mustJSON(t, f.dbURL, "orders", "show", f.sandboxPaid, "--json")
					return got["webhook_events"].([]any)[0].(map[string]any)["status"] == "delivered"
				})
				ev = got["webhook_events"].([]any)[0].(map[string]any)
				log := ev["attempt_log"].([]any)
				require.Len(t, log, 1)
				require.Equal(t, f.rc.srv.URL+"/hooks", log[0].(map[string]any)["url"])
				require.Equal(t, 204.0, log[0].(map[string]any)["status_code"])
				require.Nil(t, ev["streamed_at"], "no listener")

				out, err := runCLI(t, f.dbURL, "orders", "show", f.sandboxPaid)
				require.NoError(t, err)
				t.Logf("boxoffice orders show %s:\n%s", f.sandboxPaid, out)
				ids := f.demo.Catalog
				for _, want := range []string{
					"order " + f.sandboxPaid + " (test) of app 1: paid, GHS 240.00\n",
					fmt.Sprintf("  event %d \"Highlife Night at the Conference Centre\", date %d: ", ids.Events["DEMO-HIGHLIFE"], ids.EventDates["DEMO-HIGHLIFE-1"]),
					"  buyer: Ama Mensah <ama@example.com> 024 123 4567\n",
					"  payment: simulated (a sandbox order)\n",
					fmt.Sprintf("  1 item(s):\n    2 × Regular (ticket %d) at 120.00 = 240.00\n", ids.Tickets["DEMO-HIGHLIFE-REG"]),
					"  2 ticket(s), email not_sent:\n",
					"  1 webhook event(s):\n",
					" order.paid       test  delivered attempts=1  " + ev["id"].(string) + "\n",
					" status=204 ",
				} {
					require.Contains(t, out, want)
				}

				got = mustJSON(t, f.dbURL, "orders", "show", f.lateReview, "--json")
				require.Equal(t, "expired", got["status"])
				require.Equal(t, true, got["refund_review"])
				require.Equal(t, "dev", got["payment_provider"])
				out, err = runCLI(t, f.dbURL, "orders", "show", f.lateReview)
				require.NoError(t, err)
				require.Contains(t, out, "  payment: dev, reference "+f.lateReview+"\n  REFUND REVIEW: payment "+f.lateReview+" confirmed while the order was expired\n")
				require.Contains(t, out, "  no tickets issued\n")
			})

			t.Run("OKExpire", func(t *testing.T) {
				before := f.ticket(t, "DEMO-HIGHLIFE-REG")
				live, _ := f.pending(t, f.liveKey, f.highlife(1))
				require.Equal(t, before.Held+1, f.ticket(t, "DEMO-HIGHLIFE-REG").Held)
				got := mustJSON(t, f.dbURL, "orders", "expire", live, "--json")
				require.Equal(t, live, got["reference"])
				require.Equal(t, "expired", got["status"])
				require.Equal(t, 5.0, got["status_code"])
				require.Equal(t, before.Held, f.ticket(t, "DEMO-HIGHLIFE-REG").Held, "the hold is released")
				require.Equal(t, "expired", f.orderStatus(t, live), "as the API sees it")
				waitFor(t, 10*time.Second, "order.expired of "+live, func() bool {
					for _, d := range f.rc.deliveries() {
						if d.Header.Get("X-SVC-Event-Type") == "order.expired" && strings.Contains(string(d.Body), live) {
							return true
						}
					}
					return false
				})

				out, err := runCLI(t, f.dbURL, "orders", "expire", f.sandboxPending)
				require.NoError(t, err)
				require.Equal(t, "order "+f.sandboxPending+" is expired: its held stock is released and order.expired is queued for the app "+
					"(a running `boxoffice serve` delivers it)\n", out)
				again := mustJSON(t, f.dbURL, "orders", "show", f.sandboxPending, "--json")
				require.Len(t, again["webhook_events"], 1, "one order.expired")
				_, err = runCLI(t, f.dbURL, "orders", "expire", f.sandboxPending)
				require.NoError(t, err, "an expired order is answered as it is")
				require.Len(t, mustJSON(t, f.dbURL, "orders", "show", f.sandboxPending, "--json")["webhook_events"], 1, "with no new event")
			})

			t.Run("ErrOrders", func(t *testing.T) {
				for _, tt := range []struct {
					name string
					args []string
					want string
				}{
					{"ErrNotPending", []string{"orders", "expire", f.livePaid}, "Order " + f.livePaid + " is paid; only a pending order can be expired."},
					{"ErrShowUnknown", []string{"orders", "show", "sbx_nope"}, "Order sbx_nope was not found."},
					{"ErrShowNotAReference", []string{"orders", "show", "../etc"}, `Order "../etc" was not found.`},
					{"ErrExpireUnknown", []string{"orders", "expire", "ord_nope"}, "Order ord_nope was not found."},
					{"ErrStatus", []string{"orders", "list", "--status", "bogus"}, `--status "bogus" is not one of pending, paid, completed, failed, expired`},
					{"ErrEnv", []string{"orders", "list", "--env", "prod"}, `--env "prod" is not one of test, live`},
					{"ErrApp", []string{"orders", "list", "--app", "99"}, "app 99 does not exist"},
					{"ErrAppZero", []string{"orders", "list", "--app", "0"}, "--app 0 is not a positive integer id"},
					{"ErrLimit", []string{"orders", "list", "--limit", "1001"}, "--limit 1001 is not between 1 and 1000"},
					{"ErrMissingReference", []string{"orders", "show"}, "orders show needs 1 argument(s): REFERENCE (see boxoffice orders show --help)"},
				} {
					t.Run(tt.name, func(t *testing.T) {
						stdout, stderr, err := runMain(t, f.dbURL, append(tt.args, "--json")...)
						require.Error(t, err)
						require.Equal(t, "boxoffice: "+tt.want+"\n", stderr)
						require.Equal(t, fmt.Sprintf("{\"error\":%q}\n", tt.want), stdout)
					})
				}
			})

			t.Run("OKMetrics", func(t *testing.T) {
				admin := httptest.NewServer(f.m.AdminHandler())
				defer admin.Close()
				text := scrape(t, admin.URL)
				require.Contains(t, text, "# TYPE boxoffice_orders_refund_review gauge\n")
				require.Contains(t, text, "boxoffice_orders_refund_review{environment=\"live\"} 2\n")
				require.Contains(t, text, "boxoffice_orders_refund_review{environment=\"test\"} 0\n")
			})

			// Runs last: it refunds the fixture's orders.
			t.Run("OKRefund", func(t *testing.T) {
				ctx := context.Background()
				refundOf := func(ref string, i int) map[string]any {
					t.Helper()
					rs := mustJSON(t, f.dbURL, "orders", "show", ref, "--json")["refunds"].([]any)
					return rs[i].(map[string]any)
				}
				waitRefund := func(ref string, i int, status string) {
					t.Helper()
					waitFor(t, 30*time.Second, "refund "+status+" of "+ref, func() bool { return refundOf(ref, i)["status"] == status })
				}

				// A sandbox order: one ticket, succeeded at once.
				paid := mustJSON(t, f.dbURL, "orders", "show", f.sandboxPaid, "--json")
				first := paid["tickets"].([]any)[0].(map[string]any)["id"].(string)
				got := mustJSON(t, f.dbURL, "orders", "refund", f.sandboxPaid, "--ticket", first, "--json")
				require.Equal(t, "succeeded", got["status"])
				require.Equal(t, "120.00", got["amount"])
				require.Equal(t, []any{first}, got["tickets"])
				require.Equal(t, "requested_by_customer", got["reason"])
				refusal := func(args ...string) map[string]any {
					t.Helper()
					stdout, _, err := runMain(t, f.dbURL, append(append([]string{"orders", "refund"}, args...), "--json")...)
					require.Error(t, err)
					var v map[string]any
					require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
					return v
				}
				require.Equal(t, "Ticket "+first+" is void already.", refusal(f.sandboxPaid, "--ticket", first)["error"], "a ticket is cancelled once")
				// OKExpire expired it.
				require.Equal(t, "Order "+f.sandboxPending+" is expired; only paid and completed orders can be refunded.", refusal(f.sandboxPending)["error"])
				require.Equal(t, "--money-only cancels no ticket: leave out --ticket", refusal(f.sandboxPaid, "--money-only", "--ticket", first)["error"])

				// A live order paid through the development provider: the
				// server's job returns the money.
				out, err := runCLI(t, f.dbURL, "orders", "refund", f.livePaid, "--reason", "duplicate")
				require.NoError(t, err)
				require.Regexp(t, `^refund rfd_[a-z2-7]{26} of order `+f.livePaid+`: GHS 120\.00, 1 ticket\(s\) cancelled, duplicate, pending\n`+
					"the payment provider is asked for the money by a running `boxoffice serve`", out)
				waitRefund(f.livePaid, 0, "succeeded")
				show, err := runCLI(t, f.dbURL, "orders", "show", f.livePaid)
				require.NoError(t, err)
				require.Contains(t, show, "  1 refund(s), 120.00 refunded (full):\n    refund rfd_")

				// A refund review whose return fails: listed, counted, and
				// flagged again until a second return succeeds.
				for _, ref := range []string{f.lateReview, f.amountReview} {
					_, err := store.DecideDevPayment(ctx, f.m.DB, ref, store.DevPaymentPaid, time.Now())
					require.NoError(t, err)
				}
				require.NoError(t, store.SetDevRefundOutcome(ctx, f.m.DB, f.lateReview, store.DevRefundsFail, time.Now()))
				got = mustJSON(t, f.dbURL, "orders", "refund", f.lateReview, "--json")
				require.Equal(t, "120.00", got["amount"])
				require.Empty(t, got["tickets"])
				waitRefund(f.lateReview, 0, "failed")
				require.Equal(t, []string{f.lateReview}, list("--refund-failed"))
				require.Equal(t, []string{f.amountReview, f.lateReview}, list("--refund-review"), "waiting for review again")
				out, err = runCLI(t, f.dbURL, "orders", "list", "--refund-failed")
				require.NoError(t, err)
				require.Contains(t, out, "REFUND FAILED: rfd_")
				admin := httptest.NewServer(f.m.AdminHandler())
				defer admin.Close()
				require.Contains(t, scrape(t, admin.URL), "boxoffice_refunds_failed{environment=\"live\"} 1\n")

				require.NoError(t, store.SetDevRefundOutcome(ctx, f.m.DB, f.lateReview, store.DevRefundsSucceed, time.Now()))
				mustJSON(t, f.dbURL, "orders", "refund", f.lateReview, "--json")
				waitRefund(f.lateReview, 1, "succeeded")
				require.Equal(t, []string{f.amountReview}, list("--refund-review"))
				late := mustJSON(t, f.dbURL, "orders", "show", f.lateReview, "--json")
				require.Contains(t, late["review_note"], "confirmed while the order was expired", "the note stays")

				// The wrong amount: what was paid is returned, no more.
				require.Equal(t, "The refund of GHS 1.01 is more than the payment under review, GHS 1.00.", refusal(f.amountReview, "--amount", "1.01")["error"])
				got = mustJSON(t, f.dbURL, "orders", "refund", f.amountReview, "--json")
				require.Equal(t, "1.00", got["amount"])
				require.Empty(t, list("--refund-review"))
			})
		})
	}
}
