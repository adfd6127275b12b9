package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/stretchr/testify/require"
)

// TestPortalOrders is a partner following their orders in the portal: the
// recent orders link to a page per order with what `boxoffice orders
// show` prints (items, tickets, buyer, payment, webhook events and their
// deliveries), flagged orders are marked and can be listed alone, events
// that went to `boxoffice listen` show as such, and another account's
// order is not found.
func TestPortalOrders(t *testing.T) {
	t.Parallel()
	eachPortal(t, func(t *testing.T, pb *portalBundle) {
		ctx := context.Background()
		pb.startJobs(t)
		p := pb.demoPerson(t)
		demo := fmt.Sprintf("/portal/apps/%d", pb.demo.App.App.ID)

		// The demo app has no webhook URL: its developer listens on a laptop.
		stream := pb.openStream(t, pb.testKey, "")
		require.Equal(t, "ready", stream.next(t).event)
		heard, checkoutURL := pb.sandboxPending(t, pb.highlife(2))
		pb.submitOutcome(t, checkoutURL, "paid")
		msg := stream.next(t)
		require.Equal(t, "order.paid", msg.event)
		stream.close()
		unheard, checkoutURL := pb.sandboxPending(t, pb.highlife(1))
		pb.submitOutcome(t, checkoutURL, "failed")
		flagged, _ := pb.livePending(t)
		_, _, err := pb.m.Checkout.Settle(ctx, flagged, store.OrderExpired)
		require.NoError(t, err)
		_, err = pb.m.Checkout.ConfirmPayment(ctx, &payments.Status{Reference: flagged, State: payments.Paid, Amount: 12000, Currency: "GHS"})
		require.NoError(t, err)
		settled := func(ref string) bool {
			events := mustJSON(t, pb.dbURL, "orders", "show", ref, "--json")["webhook_events"].([]any)
			return len(events) > 0 && events[0].(map[string]any)["status"] == "failed" &&
				(ref != heard || events[0].(map[string]any)["streamed_at"] != nil)
		}
		waitFor(t, 10*time.Second, "the deliveries to give up (no webhook URL)", func() bool {
			return settled(heard) && settled(unheard)
		})

		t.Run("OKList", func(t *testing.T) {
			page := p.get(demo)
			require.Equal(t, http.StatusOK, page.Status)
			for _, ref := range []string{heard, unheard} {
				require.Contains(t, page.Body, `<a href="`+demo+`/orders/`+ref+`"><code>`+ref+`</code></a>`, "each order links to its page")
			}
			live := p.get(demo + "?env=live")
			require.Contains(t, live.text(), flagged+" expired refund review GHS 120.00", "a flagged order is marked")
			review := p.get(demo + "?env=live&review=1")
			require.Contains(t, review.text(), "Newest live orders first, flagged for a refund review")
			require.Contains(t, review.Body, flagged)
			require.Len(t, regexp.MustCompile(`/orders/ord_`).FindAllString(review.Body, -1), 1, "only flagged orders")
			require.Contains(t, p.get(demo+"?env=test&review=1").text(), "No test order is flagged for a refund review.")
		})

		t.Run("OKDeliveryLog", func(t *testing.T) {
			page := p.get(demo)
			rowOf := func(ref string) string {
				t.Helper()
				events := mustJSON(t, pb.dbURL, "orders", "show", ref, "--json")["webhook_events"].([]any)
				id := events[0].(map[string]any)["id"].(string)
				m := regexp.MustCompile(`(?s)<tr>\s*<td data-label="Event" class="wide"><strong>[^<]+</strong><br><code class="small">` + id + `</code>.*?</tr>`).FindString(page.Body)
				require.NotEmpty(t, m, "the event of %s is in the log", ref)
				return (&portalPage{Body: m}).text()
			}
			listened := rowOf(heard)
			require.Contains(t, listened, "order.paid")
			require.Contains(t, listened, "sent to listen 1 boxoffice listen")
			require.NotContains(t, listened, "failed")
			require.NotContains(t, listened, "the app has no webhook URL")
			require.Contains(t, page.Body, `<span class="badge listen">sent to listen</span>`)
			notSent := rowOf(unheard)
			require.Contains(t, notSent, "order.failed")
			require.Contains(t, notSent, " test not sent 1 no webhook URL")
			require.Contains(t, notSent, "set a webhook URL, or run boxoffice listen to get events on your machine")
			_, log, found := strings.Cut(page.Body, `id="deliveries-title"`) // the log is the page's last part
			require.True(t, found)
			require.NotContains(t, log, `<span class="badge failed">failed</span>`, "nothing failed: there was nowhere to send to")
		})

		t.Run("OKOrderPage", func(t *testing.T) {
			res := p.get(demo + "/orders/" + heard)
			require.Equal(t, http.StatusOK, res.Status, res.text())
			show := mustJSON(t, pb.dbURL, "orders", "show", heard, "--json")
			text := res.text()
			ticket := show["tickets"].([]any)[0].(map[string]any)
			event := show["webhook_events"].([]any)[0].(map[string]any)
			for _, want := range []string{
				"Order " + heard + " paid test",
				"Event Highlife Night at the Conference Centre",
				"Total GHS 240.00",
				"Name Ama Mensah Email ama@example.com Phone 024 123 4567",
				"Payment Simulated on the sandbox page; test orders move no money.",
				"Regular · ticket " + fmt.Sprint(ticket["ticket_id"]) + " 2 GHS 120.00 GHS 240.00",
				ticket["id"].(string) + " code " + ticket["code"].(string) + " Regular · 1 of 2 valid —",
				"Ticket email: not sent",
				"order.paid sent to listen",
				event["id"].(string),
				"#1", "not sent", "the app has no webhook URL",
				"Sent to boxoffice listen",
				`"partner_cart": "cart-77"`,
			} {
				require.Contains(t, text, want)
			}
			page := show["tickets_url"].(string)[strings.Index(show["tickets_url"].(string), "/tickets/"):]
			require.Contains(t, res.Body, `href="http://boxoffice.test`+page+`"`, "the buyer's ticket page")
			require.NotContains(t, text, "refund review")

			res = p.get(demo + "/orders/" + flagged)
			require.Equal(t, http.StatusOK, res.Status)
			text = res.text()
			require.Contains(t, text, "Order "+flagged+" expired live refund review")
			require.Contains(t, text, "Flagged for a refund review. Payment "+flagged+" confirmed while the order was expired.")
			require.Contains(t, text, "Payment dev, reference "+flagged)
			require.Contains(t, text, "No tickets: they are issued when the order is paid, and never for a payment under review.")
			fits := p.get(demo + "/orders/" + unheard)
			require.Contains(t, fits.text(), "order.failed not sent")
		})

		t.Run("ErrNotYours", func(t *testing.T) {
			other := pb.person(t)
			res := other.post("/portal/signup", url.Values{"name": {"Other"}, "email": {"other@partner.example"}, "password": {partnerPassword}})
			require.Equal(t, http.StatusCreated, res.Status)
			_, err := runCLI(t, pb.dbURL, "accounts", "set-status", "2", "active")
			require.NoError(t, err)
			other.signIn("other@partner.example", partnerPassword, "/portal/apps")
			res = other.postFrom("/portal/apps", "/portal/apps", url.Values{"name": {"Other shop"}})
			require.Equal(t, http.StatusSeeOther, res.Status)
			own := strings.TrimSuffix(res.Location(), "?done=created")

			for _, tt := range []struct {
				name, path, msg string
			}{
				{"OtherAccountsApp", demo + "/orders/" + heard, "App 1 was not found in your account."},
				{"OtherAccountsOrder", own + "/orders/" + heard, "has no such order."},
				{"UnknownOrder", own + "/orders/sbx_nope", "has no such order."},
				{"NotAReference", own + "/orders/%2e%2e%2fetc", "has no such order."},
			} {
				t.Run(tt.name, func(t *testing.T) {
					res := other.get(tt.path)
					require.Equal(t, http.StatusNotFound, res.Status)
					require.Contains(t, res.text(), tt.msg)
					require.NotContains(t, res.Body, "Ama Mensah")
				})
			}
			require.Equal(t, http.StatusNotFound, p.get(own+"/orders/"+heard).Status, "the owner of the order, on an app not theirs")

			refund := other.postFrom("/portal/apps", demo+"/orders/"+heard+"/refund", url.Values{"what": {"order"}, "step": {"confirm"},
				"key": {"portal-other"}, "reason": {"other"}})
			require.Equal(t, http.StatusNotFound, refund.Status, "no refund of another account's order")
		})

		// Runs last: it refunds heard's first ticket.
		t.Run("OKRefund", func(t *testing.T) {
			orderPath := demo + "/orders/" + heard
			page := p.get(orderPath)
			require.Contains(t, page.text(), "Refunds No refunds. Refund this order")
			first := mustJSON(t, pb.dbURL, "orders", "show", heard, "--json")["tickets"].([]any)[0].(map[string]any)["id"].(string)
			key := regexp.MustCompile(`name="key" value="(portal-[a-z2-7]+)"`).FindStringSubmatch(page.Body)[1]
			choice := url.Values{"key": {key}, "what": {"tickets"}, "ticket": {first}, "amount": {""}, "reason": {"requested_by_customer"}}

			review := p.postFrom(orderPath, orderPath+"/refund", choice)
			require.Equal(t, http.StatusOK, review.Status, review.text())
			require.Contains(t, review.text(), "Refund GHS 120.00 and cancel 1 ticket? "+first+" will no longer be admitted")
			require.Contains(t, review.text(), "A test order moves no money: the refund succeeds at once.")
			require.Empty(t, mustJSON(t, pb.dbURL, "orders", "show", heard, "--json")["refunds"], "a review refunds nothing")

			confirm := url.Values{"step": {"confirm"}}
			for k, v := range choice {
				confirm[k] = v
			}
			csrf := csrfOf(t, review)
			confirm.Set("csrf", csrf)
			done := p.post(orderPath+"/refund", confirm)
			require.Equal(t, http.StatusSeeOther, done.Status, done.text())
			require.Equal(t, orderPath+"?done=refunded#refunds-title", done.Location())
			again := p.post(orderPath+"/refund", confirm)
			require.Equal(t, http.StatusSeeOther, again.Status, "the same form sent twice")
			refunds := mustJSON(t, pb.dbURL, "orders", "show", heard, "--json")["refunds"].([]any)
			require.Len(t, refunds, 1, "one refund for one form")

			after := p.get(orderPath + "?done=refunded")
			text := after.text()
			require.Contains(t, text, "Refund made.")
			require.Contains(t, text, "Refunded GHS 120.00 of 240.00 · partial")
			require.Contains(t, text, refunds[0].(map[string]any)["id"].(string))
			require.Contains(t, text, "GHS 120.00 1 cancelled requested by customer succeeded")
			require.NotContains(t, after.Body, `value="`+first+`"`, "a void ticket is not offered again")

			stale := p.postFrom(orderPath, orderPath+"/refund", url.Values{"key": {"portal-stale"}, "what": {"tickets"},
				"ticket": {first}, "reason": {"requested_by_customer"}})
			require.Equal(t, http.StatusConflict, stale.Status)
			require.Contains(t, stale.text(), "Ticket "+first+" is void already.")
			forged := p.post(orderPath+"/refund", url.Values{"csrf": {"forged"}, "step": {"confirm"}, "key": {"portal-forged"}, "what": {"order"}})
			require.Equal(t, http.StatusForbidden, forged.Status)
			require.Len(t, mustJSON(t, pb.dbURL, "orders", "show", heard, "--json")["refunds"], 1)

			require.NotContains(t, p.get(demo+"/orders/"+flagged).text(), "Refund this order", "an expired order cannot be refunded")
		})
	})
}
