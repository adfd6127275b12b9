package main

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

const (
	ordersQuery = `query($f: OrderFilter, $first: Int, $after: String) {
		orders(filter: $f, first: $first, after: $after) {
			edges { cursor node { reference status } } pageInfo { hasNextPage endCursor } } }`
	changesQuery = `query($since: String, $first: Int) {
		orderChanges(since: $since, first: $first) { nodes { reference status } nextSince hasMore } }`
	expireMutation = `mutation($ref: String!) {
		expireCheckoutSession(input: {reference: $ref}) { order { reference status } userErrors { code field message } } }`
)

// placed creates a checkout of body with key and returns its reference.
func (tb *testBundle) placed(t testing.TB, key string, body map[string]any) string {
	t.Helper()
	res := tb.checkout(t, key, newIdemKey(), body)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.data()["order_reference"].(string)
}

// synced is what either API answered to an order list, feed or expire
// request that succeeded: the references shown, their statuses, and where
// to go next.
type synced struct {
	Refs, Statuses []string
	HasMore        bool
	Next           string // next_cursor / endCursor when more follow; next_since / nextSince
}

func restSynced(t testing.TB, r *response) synced {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	var s synced
	items, ok := r.Body["data"].([]any)
	if !ok {
		items = []any{r.Body["data"]}
	}
	for _, x := range items {
		o := x.(map[string]any)
		s.Refs, s.Statuses = append(s.Refs, o["reference"].(string)), append(s.Statuses, o["status"].(string))
	}
	meta := r.Body["meta"].(map[string]any)
	s.HasMore, _ = meta["has_more"].(bool)
	s.Next, _ = meta["next_cursor"].(string)
	if since, ok := meta["next_since"].(string); ok {
		s.Next = since
	}
	return s
}

func gqlSynced(t testing.TB, r *response) synced {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Nil(t, r.Body["errors"], "%s", r.Raw)
	data := r.Body["data"].(map[string]any)
	var s synced
	add := func(o map[string]any) {
		s.Refs = append(s.Refs, o["reference"].(string))
		s.Statuses = append(s.Statuses, lower(o["status"].(string)))
	}
	switch {
	case data["orders"] != nil:
		c := data["orders"].(map[string]any)
		for _, e := range c["edges"].([]any) {
			add(e.(map[string]any)["node"].(map[string]any))
		}
		pi := c["pageInfo"].(map[string]any)
		s.HasMore = pi["hasNextPage"].(bool)
		if s.HasMore {
			s.Next = pi["endCursor"].(string)
		}
	case data["orderChanges"] != nil:
		p := data["orderChanges"].(map[string]any)
		for _, o := range p["nodes"].([]any) {
			add(o.(map[string]any))
		}
		s.HasMore, s.Next = p["hasMore"].(bool), p["nextSince"].(string)
	default:
		p := data["expireCheckoutSession"].(map[string]any)
		require.Empty(t, p["userErrors"], "%s", r.Raw)
		add(p["order"].(map[string]any))
	}
	return s
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// TestOrderSyncParity sends the order list's, the feed's and expire's
// rules through both APIs and expects the same answers: the same orders in
// the same order, or the same code, status and message, with validation
// details naming the same parameters in each API's own names.
func TestOrderSyncParity(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		ids := tb.demo.Catalog
		key := tb.testKey
		// Orders of the test key: three pending Highlife carts and two
		// free Chale Wote ones (paid at once); one live order.
		free := tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1)
		var pending, paid []string
		for range 3 {
			pending = append(pending, tb.placed(t, key, tb.highlife(1)))
		}
		for range 2 {
			paid = append(paid, tb.placed(t, key, free))
		}
		live := tb.placed(t, tb.liveKey, tb.highlife(1))
		storetest.ChangesSettled(t, db)

		type tc struct {
			name string
			rest func(t *testing.T) *response
			gql  func(t *testing.T) *response
			// ok is what a request that succeeded shows (the same through
			// both doors); want is a refusal.
			ok   *synced
			want answer
			// fields are the REST names of want's details, gqlFields
			// their GraphQL names, in the same order.
			fields, gqlFields []string
		}
		list := func(query string, vars map[string]any) tc {
			return tc{
				rest: func(t *testing.T) *response { return tb.get(t, "/api/v1/orders?"+query, key) },
				gql:  func(t *testing.T) *response { return tb.graphql(t, key, ordersQuery, vars) },
			}
		}
		changes := func(query string, vars map[string]any) tc {
			return tc{
				rest: func(t *testing.T) *response { return tb.get(t, "/api/v1/order-changes?"+query, key) },
				gql:  func(t *testing.T) *response { return tb.graphql(t, key, changesQuery, vars) },
			}
		}
		expire := func(rest, gql func(t *testing.T) string) tc {
			return tc{
				rest: func(t *testing.T) *response {
					return tb.do(t, http.MethodPost, "/api/v1/checkout-sessions/"+url.PathEscape(rest(t))+"/expire", key, nil)
				},
				gql: func(t *testing.T) *response {
					return tb.graphql(t, key, expireMutation, map[string]any{"ref": gql(t)})
				},
			}
		}
		same := func(ref string) func(*testing.T) string { return func(*testing.T) string { return ref } }
		newPending := func(t *testing.T) string { return tb.placed(t, key, tb.highlife(1)) }
		expired := func(t *testing.T) string {
			ref := newPending(t)
			res := tb.do(t, http.MethodPost, "/api/v1/checkout-sessions/"+ref+"/expire", key, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			return ref
		}
		ok := func(c tc, name string, s synced) tc {
			c.name, c.ok = name, &s
			return c
		}
		refused := func(c tc, name string, want answer, fields ...string) tc {
			c.name, c.want = name, want
			for i := 0; i+1 < len(fields); i += 2 {
				c.fields, c.gqlFields = append(c.fields, fields[i]), append(c.gqlFields, fields[i+1])
			}
			return c
		}
		invalid := answer{Code: "validation_failed", Status: 422, Message: "The request payload failed validation."}
		filter := func(f map[string]any) map[string]any { return map[string]any{"f": f} }
		newestFirst := func(refs ...string) []string {
			out := make([]string, len(refs))
			for i, r := range refs {
				out[len(refs)-1-i] = r
			}
			return out
		}
		all := newestFirst(append(append([]string{}, pending...), paid...)...)

		// A first page of two, to page on from.
		page1 := restSynced(t, tb.get(t, "/api/v1/orders?limit=2", key))
		require.Equal(t, all[:2], page1.Refs)
		tampered := []byte(page1.Next)
		tampered[2] ^= 1
		feed := restSynced(t, tb.get(t, "/api/v1/order-changes", key))

		cases := []tc{
			ok(list("", nil), "OKList", synced{Refs: all, Statuses: []string{"paid", "paid", "pending", "pending", "pending"}}),
			ok(list("limit=2", map[string]any{"first": 2}), "OKFirstPage", page1),
			ok(list("limit=2&cursor="+page1.Next, map[string]any{"first": 2, "after": page1.Next}), "OKNextPage",
				synced{Refs: all[2:4], Statuses: []string{"pending", "pending"}, HasMore: true, Next: restSynced(t,
					tb.get(t, "/api/v1/orders?limit=2&cursor="+page1.Next, key)).Next}),
			ok(list("status=pending", filter(map[string]any{"status": "PENDING"})), "OKFilterStatus",
				synced{Refs: newestFirst(pending...), Statuses: []string{"pending", "pending", "pending"}}),
			ok(list(fmt.Sprintf("event_id=%d", ids.Events["DEMO-CHALEWOTE"]), filter(map[string]any{"eventId": ids.Events["DEMO-CHALEWOTE"]})),
				"OKFilterEvent", synced{Refs: newestFirst(paid...), Statuses: []string{"paid", "paid"}}),
			ok(list(fmt.Sprintf("eventdate_id=%d&status=paid&event_id=%d", ids.EventDates["DEMO-CHALEWOTE-1"], ids.Events["DEMO-CHALEWOTE"]),
				filter(map[string]any{"eventdateId": ids.EventDates["DEMO-CHALEWOTE-1"], "status": "PAID", "eventId": ids.Events["DEMO-CHALEWOTE"]})),
				"OKFilterAll", synced{Refs: newestFirst(paid...), Statuses: []string{"paid", "paid"}}),
			ok(list(fmt.Sprintf("eventdate_id=%d", ids.EventDates["DEMO-CHALEWOTE-2"]), filter(map[string]any{"eventdateId": ids.EventDates["DEMO-CHALEWOTE-2"]})),
				"OKFilterNone", synced{}),
			refused(list("limit=0", map[string]any{"first": 0}), "ErrLimitZero", invalid, "limit", "first"),
			refused(list("limit=101", map[string]any{"first": 101}), "ErrLimitTooHigh", invalid, "limit", "first"),
			refused(list("cursor=nope", map[string]any{"after": "nope"}), "ErrCursorGarbage", invalid, "cursor", "after"),
			refused(list("cursor="+string(tampered), map[string]any{"after": string(tampered)}), "ErrCursorTampered", invalid, "cursor", "after"),
			refused(list("cursor="+feed.Next, map[string]any{"after": feed.Next}), "ErrCursorIsASince", invalid, "cursor", "after"),
			refused(list("status=unknown", filter(map[string]any{"status": "UNKNOWN"})), "ErrStatusUnknown", invalid, "status", "filter.status"),
			refused(list("event_id=0", filter(map[string]any{"eventId": 0})), "ErrEventIDZero", invalid, "event_id", "filter.eventId"),
			refused(list("eventdate_id=-4", filter(map[string]any{"eventdateId": -4})), "ErrEventdateIDNegative", invalid, "eventdate_id", "filter.eventdateId"),
			refused(list("limit=500&event_id=-1&cursor=x", map[string]any{"first": 500, "f": map[string]any{"eventId": -1}, "after": "x"}),
				"ErrSeveral", invalid, "cursor", "after", "event_id", "filter.eventId", "limit", "first"),

			ok(changes("", nil), "OKChanges", feed),
			ok(changes("since="+feed.Next, map[string]any{"since": feed.Next}), "OKChangesCaughtUp", synced{Next: feed.Next}),
			refused(changes("limit=0", map[string]any{"first": 0}), "ErrChangesLimitZero", invalid, "limit", "first"),
			refused(changes("limit=101", map[string]any{"first": 101}), "ErrChangesLimitTooHigh", invalid, "limit", "first"),
			refused(changes("since=nope", map[string]any{"since": "nope"}), "ErrSinceGarbage", invalid, "since", "since"),
			refused(changes("since="+page1.Next, map[string]any{"since": page1.Next}), "ErrSinceIsACursor", invalid, "since", "since"),

			ok(expire(newPending, newPending), "OKExpire", synced{Statuses: []string{"expired"}}),
			ok(expire(expired, expired), "OKAlreadyExpired", synced{Statuses: []string{"expired"}}),
			refused(expire(same(paid[0]), same(paid[0])), "ErrOrderNotPending",
				answer{Code: "order_not_pending", Status: 409, Message: "Order " + paid[0] + " is paid; only a pending order can be expired."}),
			refused(expire(same(live), same(live)), "ErrEnvironmentMismatch",
				answer{Code: "environment_mismatch", Status: 403, Message: "Order " + live + " belongs to the live environment; use a live key to read it."}),
			refused(expire(same("sbx_nope"), same("sbx_nope")), "ErrOrderNotFound",
				answer{Code: "order_not_found", Status: 404, Message: "Order sbx_nope was not found for this app."}),
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r, g := c.rest(t), c.gql(t)
				if c.ok != nil {
					rs, gs := restSynced(t, r), gqlSynced(t, g)
					if c.name == "OKExpire" || c.name == "OKAlreadyExpired" {
						// Each door expired an order of its own.
						rs.Refs, gs.Refs = nil, nil
					}
					require.Equal(t, *c.ok, rs, "REST")
					require.Equal(t, *c.ok, gs, "GraphQL")
					return
				}
				rest := restAnswer(r)
				require.Equal(t, http.StatusOK, g.Status, "GraphQL answers a refusal it ran with 200: %s", g.Raw)
				gql := gqlAnswer(t, g)
				require.Equal(t, c.want, answer{Code: rest.Code, Status: rest.Status, Message: rest.Message}, "REST: %s", r.Raw)
				require.Equal(t, c.want.Code, gql.Code, "GraphQL code: %s", g.Raw)
				if c.want.Code != "validation_failed" {
					require.Equal(t, c.want.Message, gql.Message, "GraphQL message")
				}
				require.ElementsMatch(t, c.fields, rest.fieldNames(), "REST fields: %s", r.Raw)
				require.ElementsMatch(t, c.gqlFields, gql.fieldNames(), "GraphQL fields: %s", g.Raw)
				for i := range c.fields {
					require.Equal(t, rest.Fields[c.fields[i]], gql.Fields[c.gqlFields[i]], "messages of %s", c.fields[i])
				}
				data, _ := g.Body["data"].(map[string]any)
				if p, ok := data["expireCheckoutSession"].(map[string]any); ok {
					require.Nil(t, p["order"], "%s", g.Raw)
					ue := p["userErrors"].([]any)[0].(map[string]any)
					require.Equal(t, []any{"input", "reference"}, ue["field"], "the refusal names the reference")
				}
			})
		}
	})
}

// TestOrderSyncREST: the answers' shapes (every one is also checked
// against the OpenAPI document), expiring a live checkout releases its
// stock at once and emits order.expired once, and the feed carries each
// change, the ticket email's state included.
func TestOrderSyncREST(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		ctx := t.Context()
		ids := tb.demo.Catalog
		available := func() float64 {
			t.Helper()
			res := tb.get(t, fmt.Sprintf("/api/v1/event-dates/%d/tickets", ids.EventDates["DEMO-HIGHLIFE-1"]), tb.liveKey)
			for _, x := range res.Body["data"].([]any) {
				if tk := x.(map[string]any); tk["id"] == float64(ids.Tickets["DEMO-HIGHLIFE-REG"]) {
					return tk["quantity_available"].(float64)
				}
			}
			t.Fatal("no Regular ticket")
			return 0
		}

		storetest.ChangesSettled(t, db)
		start := tb.get(t, "/api/v1/order-changes", tb.liveKey)
		require.Equal(t, http.StatusOK, start.Status, "%s", start.Raw)
		require.Empty(t, start.Body["data"])
		since := start.Body["meta"].(map[string]any)["next_since"].(string)
		require.NotEmpty(t, since, "a place to start from even before the first order")

		before := available()
		ref := tb.placed(t, tb.liveKey, tb.highlife(3))
		require.Equal(t, before-3, available(), "held")

		list := tb.get(t, "/api/v1/orders", tb.liveKey)
		require.Equal(t, map[string]any{"limit": 20.0, "has_more": false, "next_cursor": nil}, list.Body["meta"])
		require.Len(t, list.Body["data"], 1)
		require.Equal(t, tb.get(t, "/api/v1/orders/"+ref, tb.liveKey).data(), list.Body["data"].([]any)[0],
			"the list shows each order as GET order does")

		expire := func() *response {
			return tb.do(t, http.MethodPost, "/api/v1/checkout-sessions/"+ref+"/expire", tb.liveKey, nil)
		}
		first := expire()
		require.Equal(t, http.StatusOK, first.Status, "%s", first.Raw)
		require.Equal(t, map[string]any{"status_code": 200.0}, first.Body["meta"])
		o := first.data()
		require.Equal(t, "expired", o["status"])
		require.Nil(t, o["checkout_url"])
		require.Nil(t, o["expires_at"])
		require.Equal(t, before, available(), "the hold is released at once")
		again := expire()
		require.Equal(t, http.StatusOK, again.Status)
		require.JSONEq(t, string(first.Raw), string(again.Raw), "an expired order: the same answer")
		order, err := store.OrderByReference(ctx, db, ref)
		require.NoError(t, err)
		var types []string
		require.NoError(t, db.NewSelect().Model((*store.WebhookEvent)(nil)).Column("type").Where("order_id = ?", order.ID).Scan(ctx, &types))
		require.Equal(t, []string{"order.expired"}, types, "order.expired once")

		// A free live order: completed, its ticket email queued, then sent.
		freeRef := tb.placed(t, tb.liveKey, tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
		storetest.ChangesSettled(t, db)
		feed := tb.get(t, "/api/v1/order-changes?limit=1&since="+url.QueryEscape(since), tb.liveKey)
		require.Equal(t, ref, feed.Body["data"].([]any)[0].(map[string]any)["reference"])
		require.Equal(t, true, feed.Body["meta"].(map[string]any)["has_more"])
		feed = tb.get(t, "/api/v1/order-changes?since="+feed.Body["meta"].(map[string]any)["next_since"].(string), tb.liveKey)
		require.Len(t, feed.Body["data"], 1)
		require.Equal(t, freeRef, feed.Body["data"].([]any)[0].(map[string]any)["reference"])
		require.Equal(t, false, feed.Body["meta"].(map[string]any)["has_more"])
		since = feed.Body["meta"].(map[string]any)["next_since"].(string)

		freeOrder, err := store.OrderByReference(ctx, db, freeRef)
		require.NoError(t, err)
		require.NoError(t, store.SetTicketsEmail(ctx, db, freeOrder.ID, store.TicketsEmailSent, tb.m.Now()))
		storetest.ChangesSettled(t, db)
		feed = tb.get(t, "/api/v1/order-changes?since="+since, tb.liveKey)
		require.Len(t, feed.Body["data"], 1, "%s", feed.Raw)
		email := feed.Body["data"].([]any)[0].(map[string]any)["tickets_email"].(map[string]any)
		require.Equal(t, "sent", email["status"])
		require.NotNil(t, email["sent_at"])
		since = feed.Body["meta"].(map[string]any)["next_since"].(string)

		// A refund changes the order: the feed has it once more, refunded.
		refund := tb.do(t, http.MethodPost, "/api/v1/orders/"+freeRef+"/refunds", tb.liveKey, []byte(`{"reason": "duplicate"}`),
			"Idempotency-Key", "sync-refund")
		require.Equal(t, http.StatusCreated, refund.Status, "%s", refund.Raw)
		storetest.ChangesSettled(t, db)
		feed = tb.get(t, "/api/v1/order-changes?since="+since, tb.liveKey)
		require.Len(t, feed.Body["data"], 1, "%s", feed.Raw)
		changed := feed.Body["data"].([]any)[0].(map[string]any)
		require.Equal(t, freeRef, changed["reference"])
		require.Equal(t, "full", changed["refund_status"])
		require.Equal(t, "0.00", changed["refunded_amount"])
		require.Len(t, changed["refunds"], 1)
		require.Equal(t, "void", changed["tickets"].([]any)[0].(map[string]any)["status"])

		res := tb.get(t, "/api/v1/orders?limit=abc&event_id=x", tb.liveKey)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)
		require.Equal(t, map[string]any{"limit": []any{"must be a positive integer"}, "event_id": []any{"must be a positive integer"}}, res.details())
		require.Equal(t, http.StatusMethodNotAllowed, tb.get(t, "/api/v1/checkout-sessions/"+ref+"/expire", tb.liveKey).Status)
		require.Equal(t, http.StatusMethodNotAllowed, tb.do(t, http.MethodPost, "/api/v1/order-changes", tb.liveKey, nil).Status)
	})
}
