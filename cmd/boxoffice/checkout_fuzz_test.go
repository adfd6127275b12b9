package main

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// checkoutSeeds returns interesting checkout bodies for the demo catalog of tb.
func checkoutSeeds(t testing.TB, tb *testBundle) [][]byte {
	t.Helper()
	valid := tb.highlife(1)
	ticket := tb.demo.Catalog.Tickets["DEMO-HIGHLIFE-REG"]
	enc := func(v any) []byte {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return b
	}
	items := func(n int, sameTicket bool) []any {
		out := make([]any, n)
		for i := range out {
			id := ticket + int64(i)
			if sameTicket {
				id = ticket
			}
			out[i] = map[string]any{"ticket_id": id, "quantity": 1}
		}
		return out
	}
	nested := func(depth int) json.RawMessage {
		return json.RawMessage(strings.Repeat(`{"a":`, depth) + `"x"` + strings.Repeat(`}`, depth))
	}
	validRaw := enc(valid)
	return [][]byte{
		validRaw,
		{},
		[]byte(`null`),
		[]byte(`[]`),
		[]byte(`"x"`),
		// Wrong types for every field, then inside items and customer.
		[]byte(`{"event_id":"1","eventdate_id":true,"items":{},"customer":[],"success_url":1,"cancel_url":{},"metadata":"m"}`),
		enc(with(with(with(valid, "items.0.ticket_id", "1"), "items.0.quantity", 1.5), "customer.name", 42)),
		enc(with(valid, "items", items(21, false))),
		enc(with(valid, "items.0.quantity", 0)),
		enc(with(valid, "items.0.quantity", 51)),
		enc(with(valid, "items", items(2, true))),
		[]byte(strings.Replace(string(validRaw), `"quantity":1`, `"quantity":99999999999999999999`, 1)),
		[]byte(strings.Replace(string(validRaw), `"event_id":`, `"event_id":1e309,"x":`, 1)),
		enc(with(valid, "metadata", map[string]any{"big": json.RawMessage(`1e309`), "deep": nested(200)})),
		[]byte(strings.Replace(string(validRaw), `"metadata":{`, `"metadata":{"deeper":`+string(nested(10001))+`,`, 1)),
		[]byte(strings.Replace(string(validRaw), "Ama Mensah", "Ama \xff\xfe Mensah", 1)),
		[]byte(strings.Replace(string(validRaw), "Ama Mensah", `Ama\u0007Mensah\t`, 1)),
		enc(with(valid, "metadata", map[string]any{"pad": strings.Repeat("x", 70<<10)})),
		enc(with(with(valid, "success_url", "http://partner.example/done"), "cancel_url", "javascript:alert(1)")),
		enc(with(valid, "success_url", "https://user:pw@partner.example/done")),
		append(validRaw, []byte(`{}`)...),
	}
}

// FuzzCheckoutRequest posts arbitrary bodies to POST /api/v1/checkout-sessions:
// every answer is a 201 with a sandbox order or a 4xx in the error format,
// never a 5xx.
func FuzzCheckoutRequest(f *testing.F) {
	tb := setup(f, storetest.MustOpen(f, "sqlite"))
	for _, body := range checkoutSeeds(f, tb) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res := tb.checkout(t, tb.testKey, "fuzz-"+rand.Text(), body)
		require.Less(t, res.Status, 500, "a client's body never causes a server error: %s", res.Raw)
		require.GreaterOrEqual(t, res.Status, 200, "%s", res.Raw)
		require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"), "Content-Type %q", res.Header.Get("Content-Type"))
		require.True(t, json.Valid(res.Raw), "body is not JSON: %q", res.Raw)
		meta, _ := res.Body["meta"].(map[string]any)
		require.Equal(t, float64(res.Status), meta["status_code"], "meta.status_code: %s", res.Raw)

		if res.Status == http.StatusCreated {
			ref, _ := res.data()["order_reference"].(string)
			require.True(t, strings.HasPrefix(ref, "sbx_"), "order_reference %q", ref)
			return
		}
		require.GreaterOrEqual(t, res.Status, 400, "%s", res.Raw)
		require.NotEmpty(t, res.errorCode(), "error.code: %s", res.Raw)
		require.NotEmpty(t, res.errorMessage(), "error.message: %s", res.Raw)
	})
}
