package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestWebhookEndpointsEndToEnd: a partner manages endpoints per
// environment over REST (every answer checked against the OpenAPI
// document), and the real job runner delivers each event to each
// endpoint that takes it: the app's own URL keeps its deliveries, a
// filtered endpoint gets only its type, the event log shows each
// endpoint's attempts, and a receiver that never answers holds no worker
// another endpoint of the same app needs.
func TestWebhookEndpointsEndToEnd(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, func(c *Config) { c.AllowPrivateWebhooks = true })
		legacy, orders, door := newReceiver(t, ok), newReceiver(t, ok), newReceiver(t, ok)
		hung := newHungReceiver(t)
		tb.pointWebhooks(t, legacy.srv.URL)
		tb.m.Webhooks.Client.Timeout = 10 * time.Minute
		create := func(url string, events ...string) map[string]any {
			t.Helper()
			body, _ := json.Marshal(map[string]any{"url": url, "enabled_events": events})
			res := tb.do(t, http.MethodPost, "/api/v1/webhook-endpoints", tb.testKey, body)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			return res.data()
		}
		epOrders := create(orders.srv.URL, "order.paid")
		epDoor := create(door.srv.URL, "ticket.checked_in")
		epHung := create(hung.srv.URL, "*")
		require.Regexp(t, `^whsec_`, epOrders["secret"])

		list := tb.get(t, "/api/v1/webhook-endpoints", tb.testKey)
		require.Equal(t, http.StatusOK, list.Status)
		require.Len(t, list.Body["data"].([]any), 4, "the app's URL and the three")
		require.Len(t, tb.get(t, "/api/v1/webhook-endpoints", tb.liveKey).Body["data"].([]any), 1, "live: the app's URL only")
		res := tb.get(t, "/api/v1/webhook-endpoints/"+epOrders["id"].(string), tb.liveKey)
		require.Equal(t, http.StatusForbidden, res.Status)
		require.Equal(t, "environment_mismatch", res.errorCode())
		res = tb.do(t, http.MethodPatch, "/api/v1/webhook-endpoints/we_nope", tb.testKey, []byte(`{"status": "disabled"}`))
		require.Equal(t, http.StatusNotFound, res.Status)
		require.Equal(t, "webhook_endpoint_not_found", res.errorCode())
		res = tb.do(t, http.MethodPost, "/api/v1/webhook-endpoints", tb.testKey, []byte(`{"url": "https://a.example/x", "enabled_events": ["nope"]}`))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)
		require.Equal(t, "validation_failed", res.errorCode())

		tb.startJobs(t)
		t.Cleanup(func() { close(hung.release) })
		// The hung endpoint answers nothing until the test ends (its client
		// waits ten minutes), so every order.paid that reaches the other
		// endpoints while its deliveries hang shows that they wait for no
		// worker it holds; the deadline is only a safety net.
		const rounds = 5
		var refs []string
		for i := range rounds {
			start := time.Now()
			ref := tb.emitFree(t)
			refs = append(refs, ref)
			waitFor(t, 60*time.Second, "order.paid at the order endpoint", func() bool { return len(orders.deliveries()) == i+1 })
			t.Logf("order.paid %d reached the order endpoint after %v while %d deliveries hang", i+1, orders.deliveries()[i].At.Sub(start), hung.inFlight.Load())
			waitFor(t, 60*time.Second, "order.paid at the app's URL", func() bool { return len(legacy.deliveries()) == i+1 })
		}
		require.Positive(t, hung.inFlight.Load(), "the hung endpoint still holds its deliveries")
		require.LessOrEqual(t, int(hung.most.Load()), tb.m.Webhooks.Slots.PerApp(), "and never held more than its share")
		require.Empty(t, door.deliveries(), "the door endpoint takes no order events")

		// The event log: each endpoint's delivery of one event.
		page := tb.get(t, "/api/v1/webhook-events?type=order.paid&limit=2", tb.testKey)
		require.Equal(t, http.StatusOK, page.Status, "%s", page.Raw)
		require.Len(t, page.Body["data"].([]any), 2)
		next := page.Body["meta"].(map[string]any)["next_cursor"].(string)
		page2 := tb.get(t, "/api/v1/webhook-events?type=order.paid&limit=2&cursor="+next, tb.testKey)
		require.Len(t, page2.Body["data"].([]any), 2)
		require.NotEqual(t, page.Body["data"].([]any)[0].(map[string]any)["id"], page2.Body["data"].([]any)[0].(map[string]any)["id"])
		byOrder := tb.get(t, "/api/v1/webhook-events?order_reference="+refs[0], tb.testKey)
		require.Len(t, byOrder.Body["data"].([]any), 1)
		id := byOrder.Body["data"].([]any)[0].(map[string]any)["id"].(string)
		ev := tb.get(t, "/api/v1/webhook-events/"+id, tb.testKey)
		require.Equal(t, http.StatusOK, ev.Status, "%s", ev.Raw)
		deliveries := map[string]map[string]any{}
		for _, d := range ev.data()["deliveries"].([]any) {
			deliveries[d.(map[string]any)["endpoint_id"].(string)] = d.(map[string]any)
		}
		require.Len(t, deliveries, 3, "the app's URL, the order endpoint and the hung one")
		require.Equal(t, "delivered", deliveries[epOrders["id"].(string)]["status"])
		require.Len(t, deliveries[epOrders["id"].(string)]["attempt_history"].([]any), 1)
		require.NotContains(t, deliveries, epDoor["id"])
		require.Equal(t, "pending", deliveries[epHung["id"].(string)]["status"])
		require.Equal(t, "order.paid", ev.data()["body"].(map[string]any)["type"])
		require.Equal(t, http.StatusForbidden, tb.get(t, "/api/v1/webhook-events/"+id, tb.liveKey).Status)
		require.Equal(t, "webhook_event_not_found", tb.get(t, "/api/v1/webhook-events/evt_nope", tb.testKey).errorCode())

		// Redeliver to one endpoint: it gets the event again, no other does.
		res = tb.do(t, http.MethodPost, "/api/v1/webhook-events/"+id+"/redeliver", tb.testKey,
			[]byte(`{"endpoint_id": "`+epOrders["id"].(string)+`"}`))
		require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Raw)
		waitFor(t, 30*time.Second, "the redelivery", func() bool { return len(orders.deliveries()) == rounds+1 })
		require.True(t, strings.Contains(string(orders.deliveries()[rounds].Body), refs[0]))
		require.Len(t, legacy.deliveries(), rounds, "the app's URL got no redelivery")
		res = tb.do(t, http.MethodPost, "/api/v1/webhook-events/"+id+"/redeliver", tb.testKey,
			[]byte(`{"endpoint_id": "`+epDoor["id"].(string)+`"}`))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "the door endpoint does not take order.paid")

		// Rotate, recover and delete answer as the document says.
		res = tb.do(t, http.MethodPost, "/api/v1/webhook-endpoints/"+epDoor["id"].(string)+"/rotate-secret", tb.testKey, nil)
		require.Equal(t, http.StatusOK, res.Status)
		require.NotEqual(t, epDoor["secret"], res.data()["secret"])
		res = tb.do(t, http.MethodPost, "/api/v1/webhook-endpoints/"+epDoor["id"].(string)+"/recover", tb.testKey,
			[]byte(`{"since": "`+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)+`"}`))
		require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Raw)
		require.Equal(t, 0.0, res.data()["recovering"])
		res = tb.do(t, http.MethodPost, "/api/v1/webhook-endpoints/"+epDoor["id"].(string)+"/recover", tb.testKey, []byte(`{"since": "yesterday"}`))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)
		res = tb.do(t, http.MethodDelete, "/api/v1/webhook-endpoints/"+epDoor["id"].(string), tb.testKey, nil)
		require.Equal(t, http.StatusNoContent, res.Status)
		ids := []string{}
		for _, e := range tb.get(t, "/api/v1/webhook-endpoints", tb.testKey).Body["data"].([]any) {
			ids = append(ids, e.(map[string]any)["id"].(string))
		}
		require.False(t, slices.Contains(ids, epDoor["id"].(string)))
	})
}
