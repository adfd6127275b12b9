package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// batch posts {scans} to /api/v1/check-ins/batch.
func (tb *testBundle) batch(t testing.TB, key string, scans ...map[string]any) *response {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"scans": scans})
	require.NoError(t, err)
	return tb.do(t, http.MethodPost, "/api/v1/check-ins/batch", key, raw)
}

// TestOfflineDoorREST: the offline door's routes end to end, each answer
// checked against the OpenAPI document: the manifest holds hashes and
// never a code, and follows a scan with since; a batch answers one
// result per scan, in order, the same again when resent; which key opens
// what; a scanner key's guesses beyond its budget answer 429 with
// Retry-After and are not recorded.
func TestOfflineDoorREST(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		const budget = 5
		tb := setup(t, db, func(c *Config) { c.RateLimits.ScannerUnknownCodes = budget })
		stillLimits(tb)
		door, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
		const day1 = "DEMO-CHALEWOTE-1"
		dateID := tb.demo.Catalog.EventDates[day1]
		tks := tb.freeTickets(t, tb.testKey, 3)
		manifest := func(q url.Values) *response {
			t.Helper()
			q.Set("eventdate_id", strconv.FormatInt(dateID, 10))
			return tb.get(t, "/api/v1/check-ins/manifest?"+q.Encode(), door)
		}

		first := manifest(url.Values{})
		require.Equal(t, http.StatusOK, first.Status, "%s", first.Raw)
		entries := first.Body["data"].([]any)
		require.Len(t, entries, 3)
		for i, e := range entries {
			sum := sha256.Sum256([]byte(tks[i]["code"].(string)))
			require.Equal(t, map[string]any{"ticket_id": tks[i]["id"], "code_hash": hex.EncodeToString(sum[:]),
				"ticket_name": tks[i]["ticket_name"], "position": float64(i + 1), "tickets_in_order": 3.0,
				"status": "valid", "inside": false}, e)
			require.NotContains(t, string(first.Raw), tks[i]["code"], "never a code")
			require.NotContains(t, string(first.Raw), tks[i]["order_reference"], "never an order reference")
		}
		meta := first.Body["meta"].(map[string]any)
		require.Equal(t, false, meta["has_more"])
		since := meta["next_since"].(string)

		offlineAt := time.Now().UTC().Add(-10 * time.Minute)
		scans := []map[string]any{
			tb.scan(tks[0]["code"].(string), day1, "scanned_at", offlineAt.Format(time.RFC3339), "idempotency_key", "q-1"),
			tb.scan(tks[1]["code"].(string), day1, "scanned_at", offlineAt.Add(time.Second).Format(time.RFC3339), "idempotency_key", "q-2"),
			tb.scan(tks[0]["code"].(string), day1, "direction", "exit", "scanned_at", offlineAt.Add(-time.Hour).Format(time.RFC3339),
				"idempotency_key", "q-3"),
			tb.scan(tks[2]["code"].(string), day1),
		}
		res := tb.batch(t, door, scans...)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		data := res.Body["data"].([]any)
		require.Len(t, data, 4)
		for i := range 2 {
			require.Equal(t, "admitted", data[i].(map[string]any)["result"], "%s", res.Raw)
			require.Equal(t, true, data[i].(map[string]any)["offline"])
		}
		require.Equal(t, "not_inside", data[2].(map[string]any)["reason"], "an exit dated before the admission")
		missing := data[3].(map[string]any)["error"].(map[string]any)
		require.Equal(t, "validation_failed", missing["code"])
		require.Equal(t, map[string]any{"idempotency_key": []any{"is required"}}, missing["details"])
		again := tb.batch(t, door, scans...)
		require.JSONEq(t, string(res.Raw), string(again.Raw), "the same batch again answers the same")

		// The two admissions are listed; on a busy PostgreSQL server a
		// ticket may be listed again as it was (at least once), never
		// anything else.
		changed := manifest(url.Values{"since": {since}})
		require.Equal(t, http.StatusOK, changed.Status, "%s", changed.Raw)
		require.Equal(t, false, changed.Body["meta"].(map[string]any)["has_more"])
		listed := map[any]map[string]any{}
		for _, e := range changed.Body["data"].([]any) {
			listed[e.(map[string]any)["ticket_id"]] = e.(map[string]any)
		}
		for _, tk := range tks[:2] {
			require.Equal(t, true, listed[tk["id"]]["inside"], "%s", changed.Raw)
			require.Equal(t, "checked_in", listed[tk["id"]]["status"])
		}
		if e, ok := listed[tks[2]["id"]]; ok {
			require.Equal(t, entries[2], e)
		}

		st := tb.get(t, fmt.Sprintf("/api/v1/check-ins/stats?eventdate_id=%d", dateID), door)
		require.Equal(t, http.StatusOK, st.Status, "%s", st.Raw)
		require.Equal(t, 0.0, st.data()["offline_conflicts"])
		other, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
		conflict := tb.batch(t, other, tb.scan(tks[0]["code"].(string), day1, "scanned_at", offlineAt.Add(-time.Minute).Format(time.RFC3339),
			"idempotency_key", "other-1"))
		require.Equal(t, "already_checked_in", conflict.Body["data"].([]any)[0].(map[string]any)["reason"])
		st = tb.get(t, fmt.Sprintf("/api/v1/check-ins/stats?eventdate_id=%d", dateID), door)
		require.Equal(t, 1.0, st.data()["offline_conflicts"])

		t.Run("Refusals", func(t *testing.T) {
			requireError(t, tb.get(t, fmt.Sprintf("/api/v1/check-ins/manifest?eventdate_id=%d", dateID), tb.testKey),
				http.StatusForbidden, "scanner_key_required")
			requireError(t, tb.batch(t, tb.testKey, scans[0]), http.StatusForbidden, "scanner_key_required")
			requireError(t, manifest(url.Values{"limit": {"1001"}}), http.StatusUnprocessableEntity, "validation_failed")
			requireError(t, manifest(url.Values{"since": {"forged"}}), http.StatusUnprocessableEntity, "validation_failed")
			requireError(t, tb.get(t, "/api/v1/check-ins/manifest", door), http.StatusUnprocessableEntity, "validation_failed")
			requireError(t, tb.get(t, fmt.Sprintf("/api/v1/check-ins/manifest?eventdate_id=%d",
				tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]), door), http.StatusNotFound, "event_date_not_found")
			requireError(t, tb.batch(t, door), http.StatusUnprocessableEntity, "validation_failed")
			many := make([]map[string]any, 501)
			for i := range many {
				many[i] = scans[0]
			}
			requireError(t, tb.batch(t, door, many...), http.StatusUnprocessableEntity, "validation_failed")
			requireError(t, tb.do(t, http.MethodPost, "/api/v1/check-ins/batch", door, []byte(`{"scans": 3}`)),
				http.StatusUnprocessableEntity, "validation_failed")
			requireError(t, tb.do(t, http.MethodPost, "/api/v1/check-ins/batch", door, []byte(`[`)),
				http.StatusUnprocessableEntity, "validation_failed")
		})

		t.Run("UnknownCodeBudget", func(t *testing.T) {
			guesser, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
			for i := range budget {
				res := tb.checkIn(t, guesser, tb.scan(fmt.Sprintf("GUESS%d", i), day1))
				require.Equal(t, "unknown_code", res.data()["reason"], "%s", res.Raw)
			}
			var before int
			require.NoError(t, db.NewSelect().Model((*store.CheckIn)(nil)).ColumnExpr("COUNT(*)").Scan(t.Context(), &before))
			over := tb.checkIn(t, guesser, tb.scan("GUESSMORE", day1))
			requireError(t, over, http.StatusTooManyRequests, "rate_limit_exceeded")
			require.NotEmpty(t, over.Header.Get("Retry-After"))
			var after int
			require.NoError(t, db.NewSelect().Model((*store.CheckIn)(nil)).ColumnExpr("COUNT(*)").Scan(t.Context(), &after))
			require.Equal(t, before, after, "not recorded")
			real := tb.freeTickets(t, tb.testKey, 1)[0]["code"].(string)
			require.Equal(t, "admitted", tb.checkIn(t, guesser, tb.scan(real, day1)).data()["result"], "a real ticket is never limited")
		})
	})
}
