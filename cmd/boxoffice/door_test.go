package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/stretchr/testify/require"
)

// scannerKey makes a scanner key for the door of a demo event in env.
func (tb *testBundle) scannerKey(t testing.TB, event, env string) (key string, id int64) {
	t.Helper()
	s, err := tb.m.Provision.CreateScanner(context.Background(), provision.ScannerInput{
		EventID: tb.demo.Catalog.Events[event], Environment: env, Name: "Main gate"})
	require.NoError(t, err)
	return s.Key, s.Scanner.ID
}

// freeTickets checks out qty free wristbands of Chale Wote's first day
// with an app key (a sandbox free cart for the test key, a live one for
// the live key) and returns the order's tickets.
func (tb *testBundle) freeTickets(t testing.TB, key string, qty int) []map[string]any {
	t.Helper()
	res := tb.checkout(t, key, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", qty))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	order := tb.get(t, "/api/v1/orders/"+res.data()["order_reference"].(string), key)
	require.Equal(t, http.StatusOK, order.Status, "%s", order.Raw)
	var out []map[string]any
	for _, tk := range order.data()["tickets"].([]any) {
		out = append(out, tk.(map[string]any))
	}
	require.Len(t, out, qty)
	return out
}

// scan is a check-in body for a code at a demo date.
func (tb *testBundle) scan(code, date string, more ...any) map[string]any {
	b := map[string]any{"code": code, "eventdate_id": tb.demo.Catalog.EventDates[date]}
	for i := 0; i+1 < len(more); i += 2 {
		b[more[i].(string)] = more[i+1]
	}
	return b
}

// checkIn posts a scan; body is marshalled unless it is []byte.
func (tb *testBundle) checkIn(t testing.TB, key string, body any, headers ...string) *response {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	return tb.do(t, http.MethodPost, "/api/v1/check-ins", key, raw, headers...)
}

func requireError(t testing.TB, res *response, status int, code string) {
	t.Helper()
	require.Equal(t, status, res.Status, "%s", res.Raw)
	require.Equal(t, code, res.errorCode(), "%s", res.Raw)
}

// TestCheckInREST: the door's routes end to end, each answer checked
// against the OpenAPI document: scans admitted and rejected, which key
// opens which route, idempotent retries, validation and the counts.
func TestCheckInREST(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		tb := setup(t, db)
		door, doorID := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
		liveDoor, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvLive)
		sandbox := tb.freeTickets(t, tb.testKey, 2)
		code := sandbox[0]["code"].(string)
		const day1 = "DEMO-CHALEWOTE-1"

		t.Run("OK", func(t *testing.T) {
			res := tb.checkIn(t, door, tb.scan(code, day1, "gate", "North"))
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Equal(t, map[string]any{"status_code": 200.0}, res.Body["meta"])
			v := res.data()
			require.Equal(t, "admitted", v["result"])
			require.Nil(t, v["reason"])
			require.Nil(t, v["previous"])
			tk := v["ticket"].(map[string]any)
			require.Equal(t, "checked_in", tk["status"])
			require.Equal(t, v["scanned_at"], tk["checked_in_at"])
			require.Empty(t, res.Header.Get("X-RateLimit-Limit"), "the apps' limits are not the door's")

			again := tb.checkIn(t, door, tb.scan(strings.ToLower(code), day1)).data()
			require.Equal(t, "rejected", again["result"])
			require.Equal(t, "already_checked_in", again["reason"])
			require.Equal(t, map[string]any{"scanned_at": v["scanned_at"], "gate": "North"}, again["previous"])

			order := tb.get(t, "/api/v1/orders/"+tk["order_reference"].(string), tb.testKey).data()
			require.Equal(t, tk, order["tickets"].([]any)[0], "the order shows the check-in")
		})
		t.Run("Environments", func(t *testing.T) {
			liveCode := tb.freeTickets(t, tb.liveKey, 1)[0]["code"].(string)
			v := tb.checkIn(t, door, tb.scan(liveCode, day1)).data()
			require.Equal(t, "unknown_code", v["reason"], "a test door never sees a live ticket")
			require.Nil(t, v["ticket"])
			require.Equal(t, "test_ticket", tb.checkIn(t, liveDoor, tb.scan(sandbox[1]["code"].(string), day1)).data()["reason"])
			require.Equal(t, "admitted", tb.checkIn(t, liveDoor, tb.scan(liveCode, day1)).data()["result"])
		})
		t.Run("Idempotent", func(t *testing.T) {
			c := tb.freeTickets(t, tb.testKey, 1)[0]["code"].(string)
			first := tb.checkIn(t, door, tb.scan(c, day1), "Idempotency-Key", "retry-1")
			require.Equal(t, "admitted", first.data()["result"])
			require.Empty(t, first.Header.Get("Idempotent-Replayed"))
			retry := tb.checkIn(t, door, tb.scan(c, day1), "Idempotency-Key", "retry-1")
			require.Equal(t, http.StatusOK, retry.Status)
			require.Equal(t, "true", retry.Header.Get("Idempotent-Replayed"))
			require.Equal(t, first.data(), retry.data(), "the same check-in, not already_checked_in")
			requireError(t, tb.checkIn(t, door, tb.scan(c, day1, "direction", "exit"), "Idempotency-Key", "retry-1"),
				http.StatusConflict, "idempotency_conflict")
			requireError(t, tb.checkIn(t, door, tb.scan(c, day1), "Idempotency-Key", strings.Repeat("k", 129)),
				http.StatusBadRequest, "invalid_idempotency_key")
		})
		t.Run("ErrValidation", func(t *testing.T) {
			for _, tc := range []struct {
				body []byte
				want map[string]any
			}{
				{[]byte(`nope`), map[string]any{"body": []any{"is not valid JSON (invalid character 'o' in literal null (expecting 'u'))"}}},
				{[]byte(`[]`), map[string]any{"body": []any{"must be a JSON object"}}},
				{[]byte(`{"code": 7, "eventdate_id": "13"}`), map[string]any{"code": []any{"must be a string"}, "eventdate_id": []any{"must be an integer"}}},
				{[]byte(`{"code": "TEST\u0000X", "eventdate_id": 1, "gate": "` + strings.Repeat("g", 65) + `"}`),
					map[string]any{"code": []any{"must be UTF-8 text without control characters"}, "gate": []any{"must be at most 64 characters"}}},
				{[]byte(`{"code": "X", "eventdate_id": 1, "direction": "in", "scanned_at": "2020-01-01T00:00:00Z"}`),
					map[string]any{"direction": []any{"must be entry or exit"}, "scanned_at": []any{"must not be more than 7 days old"}}},
			} {
				res := tb.checkIn(t, door, tc.body)
				requireError(t, res, http.StatusUnprocessableEntity, "validation_failed")
				require.Equal(t, tc.want, res.details(), "%s", tc.body)
			}
			requireError(t, tb.checkIn(t, door, tb.scan(code, "DEMO-HIGHLIFE-1")), http.StatusNotFound, "event_date_not_found")
		})
		t.Run("Stats", func(t *testing.T) {
			date := tb.demo.Catalog.EventDates[day1]
			res := tb.get(t, fmt.Sprintf("/api/v1/check-ins/stats?eventdate_id=%d", date), door)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			st := res.data()
			require.Equal(t, float64(date), st["eventdate_id"])
			require.Equal(t, []string{"checked_in", "eventdate_id", "inside", "issued", "offline_conflicts", "rejected_scans"}, sortedKeys(st))
			require.GreaterOrEqual(t, st["checked_in"], 2.0)
			requireError(t, tb.get(t, "/api/v1/check-ins/stats", door), http.StatusUnprocessableEntity, "validation_failed")
			requireError(t, tb.get(t, "/api/v1/check-ins/stats?eventdate_id=0", door), http.StatusUnprocessableEntity, "validation_failed")
			requireError(t, tb.get(t, fmt.Sprintf("/api/v1/check-ins/stats?eventdate_id=%d", tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]), door),
				http.StatusNotFound, "event_date_not_found")
		})
		t.Run("ErrKeys", func(t *testing.T) {
			for _, path := range []string{"/api/v1/events", "/api/v1/orders/" + sandbox[0]["order_reference"].(string),
				"/api/v1/webhook-events/stream", "/api/v1/no-such-route"} {
				requireError(t, tb.get(t, path, door), http.StatusForbidden, "scanner_key_not_allowed")
			}
			requireError(t, tb.checkout(t, door, newIdemKey(), tb.highlife(1)), http.StatusForbidden, "scanner_key_not_allowed")
			requireError(t, tb.checkIn(t, tb.testKey, tb.scan(code, day1)), http.StatusForbidden, "scanner_key_required")
			requireError(t, tb.get(t, "/api/v1/check-ins/stats?eventdate_id=1", tb.liveKey), http.StatusForbidden, "scanner_key_required")
			requireError(t, tb.get(t, "/api/v1/check-ins", door), http.StatusMethodNotAllowed, "method_not_allowed")

			gql := tb.graphql(t, door, orderQuery, map[string]any{"r": sandbox[0]["order_reference"]})
			require.Equal(t, "scanner_key_not_allowed", gql.gqlErrorExt(t)["code"], "%s", gql.Raw)
			gql = tb.graphql(t, door, `{ events { nodes { id } } }`, nil)
			require.Equal(t, "scanner_key_not_allowed", gql.gqlErrorExt(t)["code"], "the catalog too: %s", gql.Raw)

			requireError(t, tb.checkIn(t, "svc_scan_test_"+strings.Repeat("a", 32), tb.scan(code, day1)), http.StatusUnauthorized, "invalid_api_key")
			_, err := tb.m.Provision.RevokeScanner(context.Background(), doorID)
			require.NoError(t, err)
			requireError(t, tb.checkIn(t, door, tb.scan(code, day1)), http.StatusUnauthorized, "invalid_api_key")
		})
	})
}

func sortedKeys(m map[string]any) []string {
	out := keys(m)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestCheckInFailedAuth: a key of the wrong kind, and a revoked scanner
// key, count in the failed-auth bucket like every refused key.
func TestCheckInFailedAuth(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(3, 100, 100, 100))
	door, id := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
	requireError(t, tb.get(t, "/api/v1/events", door), http.StatusForbidden, "scanner_key_not_allowed")
	requireError(t, tb.checkIn(t, tb.testKey, tb.scan("X", "DEMO-CHALEWOTE-1")), http.StatusForbidden, "scanner_key_required")
	_, err := tb.m.Provision.RevokeScanner(context.Background(), id)
	require.NoError(t, err)
	requireError(t, tb.checkIn(t, door, tb.scan("X", "DEMO-CHALEWOTE-1")), http.StatusUnauthorized, "invalid_api_key")
	requireLimited(t, tb.get(t, "/api/v1/events", tb.testKey), 3, "auth")
}

// TestCheckInWebhooks: an admitted entry delivers ticket.checked_in and a
// void ticket.voided to the app that sold the order, signed, with the
// order's next sequences, each checked against the OpenAPI document.
func TestCheckInWebhooks(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"), fastJobs)
	rc := newReceiver(t, ok)
	tb.pointWebhooks(t, rc.srv.URL)
	tb.startJobs(t)
	door, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
	tk := tb.freeTickets(t, tb.testKey, 1)[0]
	ref := tk["order_reference"].(string)
	admitted := tb.checkIn(t, door, tb.scan(tk["code"].(string), "DEMO-CHALEWOTE-1", "gate", "North")).data()

	ev := rc.waitType(t, "ticket.checked_in").event(t)
	require.Equal(t, 2.0, ev["sequence"], "after the order's order.paid")
	require.Equal(t, "test", ev["environment"])
	data := ev["data"].(map[string]any)
	require.Equal(t, ref, data["order_reference"])
	require.Equal(t, admitted, data["check_in"])
	require.Equal(t, admitted["ticket"], data["ticket"])

	voided, err := tb.m.Tickets.Void(context.Background(), tickets.VoidRequest{Code: tk["code"].(string), Reason: "Refunded"})
	require.NoError(t, err)
	require.Equal(t, 1, voided.Voided)
	ev = rc.waitType(t, "ticket.voided").event(t)
	require.Equal(t, 3.0, ev["sequence"])
	data = ev["data"].(map[string]any)
	require.Equal(t, ref, data["order_reference"])
	ticket := data["ticket"].(map[string]any)
	require.Equal(t, "void", ticket["status"])
	require.Equal(t, admitted["ticket"].(map[string]any)["checked_in_at"], ticket["checked_in_at"], "voiding keeps the admission")
	require.Len(t, rc.deliveries(), 3, "order.paid, ticket.checked_in, ticket.voided")
}

// postScan posts a scan to an instance from any goroutine (no require),
// checking the answer against the OpenAPI document.
func postScan(t testing.TB, base, key string, body map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/check-ins", bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	contractCheck(t, req, res, got)
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", res.StatusCode, got)
	}
	var v struct {
		Data map[string]any `json:"data"`
	}
	return v.Data, json.Unmarshal(got, &v)
}

// TestCheckInExactlyOnceTwoInstances: 50 concurrent entry scans of one
// code, split across two instances (each its own Main, server and
// database handle) on one database, admit it exactly once; every other
// answer is already_checked_in naming that admission. (That a subscriber
// on one instance hears the scans made through the other is
// TestCheckInSubscriptionTwoInstances'.)
func TestCheckInExactlyOnceTwoInstances(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			rawURL := storetest.MigratedURL(t, kind)
			a := liveSetup(t, storetest.OpenURL(t, rawURL))
			b := a.peer(t, rawURL)
			door, _ := a.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
			code := a.freeTickets(t, a.testKey, 1)[0]["code"].(string)
			date := a.demo.Catalog.EventDates["DEMO-CHALEWOTE-1"]

			const n = 50
			answers := make([]map[string]any, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					base, gate := a.srv.URL, "A"
					if i%2 == 1 {
						base, gate = b.srv.URL, "B"
					}
					v, err := postScan(t, base, door, a.scan(code, "DEMO-CHALEWOTE-1", "gate", gate))
					if err != nil {
						t.Errorf("scan %d: %v", i, err)
					}
					answers[i] = v
				})
			}
			wg.Wait()
			var winner map[string]any
			for _, v := range answers {
				require.NotNil(t, v)
				if v["result"] == "admitted" {
					require.Nil(t, winner, "admitted twice")
					winner = v
				}
			}
			require.NotNil(t, winner, "admitted never")
			for _, v := range answers {
				if v["id"] != winner["id"] {
					require.Equal(t, "already_checked_in", v["reason"])
					require.Equal(t, map[string]any{"scanned_at": winner["scanned_at"], "gate": winner["gate"]}, v["previous"])
				}
			}
			st := b.get(t, fmt.Sprintf("/api/v1/check-ins/stats?eventdate_id=%d", date), door).data()
			require.Equal(t, map[string]any{"eventdate_id": float64(date), "issued": 1.0, "checked_in": 1.0, "inside": 1.0,
				"rejected_scans": float64(n - 1), "offline_conflicts": 0.0}, st)
		})
	}
}
