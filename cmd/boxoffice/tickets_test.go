package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// orderQuery asks GraphQL for every field of an order.
const orderQuery = `query($r: String!) { order(reference: $r) {
  reference status statusCode currency createdAt updatedAt paymentReference environment
  eventId eventdateId totalAmount requiresPayment expiresAt checkoutUrl metadata
  items { ticketId name quantity unitPrice amount }
  tickets { id code orderReference ticketId ticketName eventId eventdateId position ticketsInOrder status checkedInAt environment }
  ticketsUrl ticketsEmail { status sentAt }
  refundedAmount refundStatus
  refunds { id orderReference amount currency tickets reason status failureReason metadata environment createdAt updatedAt }
} }`

var camelHump = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// restShaped turns a GraphQL answer into REST's shape: snake_case keys
// (eventdateId is eventdate_id, ticketsUrl tickets_url) and enum values in
// lower case; metadata, the partner's own JSON, is left as sent.
func restShaped(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		if key == "metadata" {
			return x
		}
		out := map[string]any{}
		for k, val := range x {
			snake := strings.ToLower(camelHump.ReplaceAllString(k, "${1}_${2}"))
			out[snake] = restShaped(val, snake)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = restShaped(x[i], key)
		}
		return out
	case string:
		if key == "status" || key == "environment" || key == "refund_status" || key == "reason" {
			return strings.ToLower(x)
		}
	}
	return v
}

// TestOrderParity: one order, item for item and ticket for ticket, is the
// same through REST, GraphQL and its webhook's data.order (spec/fulfilment.md
// sections 1 and 6).
func TestOrderParity(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		tb := setup(t, db)
		for _, c := range []struct {
			name, key string
			body      map[string]any
			tickets   int
		}{
			{"SandboxFree", tb.testKey, tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 3), 3},
			{"LiveFree", tb.liveKey, tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2), 2},
			{"LivePending", tb.liveKey, tb.highlife(2), 0},
		} {
			t.Run(c.name, func(t *testing.T) {
				created := tb.checkout(t, c.key, newIdemKey(), c.body)
				require.Equal(t, http.StatusCreated, created.Status, "%s", created.Raw)
				ref := created.data()["order_reference"].(string)

				rest := tb.get(t, "/api/v1/orders/"+ref, c.key)
				require.Equal(t, http.StatusOK, rest.Status, "%s", rest.Raw)
				order := rest.data()
				require.Len(t, order["tickets"], c.tickets)
				require.Equal(t, map[string]any{"partner_cart": "cart-77"}, order["metadata"])
				require.Len(t, order["items"], 1)
				for _, k := range []string{"customer", "customer_email", "email", "phone", "name"} {
					require.NotContains(t, order, k, "personal data is never returned")
				}
				require.NotContains(t, string(rest.Raw), "ama@example.com")

				gql := tb.graphql(t, c.key, orderQuery, map[string]any{"r": ref})
				require.Nil(t, gql.Body["errors"], "%s", gql.Raw)
				got := restShaped(gql.Body["data"].(map[string]any)["order"], "")
				require.Equal(t, order, got, "GraphQL's order is REST's")

				if c.tickets > 0 {
					var payload string
					require.NoError(t, db.NewSelect().Model((*store.WebhookEvent)(nil)).Column("payload").
						Where("payload LIKE ?", "%"+ref+"%").Scan(t.Context(), &payload))
					var ev struct {
						Data struct {
							Order map[string]any `json:"order"`
						} `json:"data"`
					}
					require.NoError(t, json.Unmarshal([]byte(payload), &ev))
					require.Equal(t, order, ev.Data.Order, "the webhook's data.order is REST's")
				}
			})
		}
	})
}

// TestTicketPage: the order's tickets_url is the buyer's page, with every
// code, and its PDF; an unknown token is a 404 page (spec/fulfilment.md
// section 2).
func TestTicketPage(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	created := tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2))
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Raw)
	order := tb.get(t, "/api/v1/orders/"+created.data()["order_reference"].(string), tb.testKey).data()
	pageURL := order["tickets_url"].(string)
	require.True(t, strings.HasPrefix(pageURL, "http://boxoffice.test/tickets/"), pageURL)
	path := strings.TrimPrefix(pageURL, "http://boxoffice.test")

	checkHeaders := func(t *testing.T, h http.Header) {
		require.Equal(t, "no-store", h.Get("Cache-Control"))
		require.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
		require.Equal(t, "noindex", h.Get("X-Robots-Tag"))
		require.Contains(t, h.Get("Content-Security-Policy"), "default-src 'none'")
	}
	page := tb.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, http.StatusOK, page.Status)
	checkHeaders(t, page.Header)
	html := string(page.Raw)
	for _, tk := range order["tickets"].([]any) {
		code := tk.(map[string]any)["code"].(string)
		require.Contains(t, html, code[len(code)-4:], "each code is printed")
	}
	require.Contains(t, html, "Test ticket — not valid for entry")
	require.Contains(t, html, "1 of 2")
	require.Equal(t, 2, strings.Count(html, `<svg class="qr"`), "a QR code per ticket")

	pdf := tb.do(t, http.MethodGet, path+"/tickets.pdf", "", nil)
	require.Equal(t, http.StatusOK, pdf.Status)
	checkHeaders(t, pdf.Header)
	require.Equal(t, "application/pdf", pdf.Header.Get("Content-Type"))
	require.True(t, strings.HasPrefix(string(pdf.Raw), "%PDF-"))

	for _, p := range []string{"/tickets/" + strings.Repeat("a", 32), "/tickets/%00", "/tickets/" + strings.Repeat("a", 32) + "/tickets.pdf"} {
		missing := tb.do(t, http.MethodGet, p, "", nil)
		require.Equal(t, http.StatusNotFound, missing.Status, p)
		checkHeaders(t, missing.Header)
		require.Contains(t, missing.Header.Get("Content-Type"), "text/html")
	}
}

// TestTicketEmailSwitch: an app that delivers tickets itself switches
// ticket emails off in the portal or with the CLI; its live orders then
// stay not_sent, and the change is audited.
func TestTicketEmailSwitch(t *testing.T) {
	t.Parallel()
	eachPortal(t, func(t *testing.T, pb *portalBundle) {
		p := pb.demoPerson(t)
		demo := fmt.Sprintf("/portal/apps/%d", pb.demo.App.App.ID)
		page := p.get(demo).text()
		require.Contains(t, page, "Ticket emails On When a live order is paid, Boxoffice emails the buyer their tickets")

		res := p.postFrom(demo, demo+"/ticket-emails", url.Values{"ticket-emails": {"maybe"}})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)

		res = p.postFrom(demo, demo+"/ticket-emails", url.Values{"ticket-emails": {"off"}})
		require.Equal(t, http.StatusSeeOther, res.Status)
		page = p.get(res.Location()).text()
		require.Contains(t, page, "Ticket emails are off")
		require.Contains(t, page, "Off Your app delivers tickets itself")
		ref := pb.liveFreeOrder(t, 1)
		require.Equal(t, store.TicketsEmailNotSent, pb.emailStatus(t, ref)["status"])

		res = p.postFrom(demo, demo+"/ticket-emails", url.Values{"ticket-emails": {"on"}})
		require.Equal(t, http.StatusSeeOther, res.Status)
		ref = pb.liveFreeOrder(t, 1)
		require.Equal(t, store.TicketsEmailQueued, pb.emailStatus(t, ref)["status"])

		var actions []string
		require.NoError(t, pb.db.NewSelect().Table("audit_log").Column("detail").
			Where("action = ?", audit.TicketEmails).Order("id").Scan(t.Context(), &actions))
		require.Equal(t, []string{"off", "on"}, actions)
	})
}
