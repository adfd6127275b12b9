package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestHEAD(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	admin := httptest.NewServer(tb.m.AdminHandler())
	t.Cleanup(admin.Close)
	order := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).data()["order_reference"].(string)
	live := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).data()["order_reference"].(string)
	query := "/graphql?query=" + url.QueryEscape(`{ events { pageInfo { total } } }`)
	tests := []struct {
		name, url, key string
		status         int
	}{
		{"Events", tb.srv.URL + "/api/v1/events", tb.testKey, 200},
		{"ErrEventsWithoutKey", tb.srv.URL + "/api/v1/events", "", 401},
		{"Event", tb.srv.URL + "/api/v1/events/" + strconv.FormatInt(tb.demo.Catalog.Events["DEMO-HIGHLIFE"], 10), tb.testKey, 200},
		{"OpenAPI", tb.srv.URL + "/api/v1/openapi.json", "", 200},
		{"Healthz", tb.srv.URL + "/healthz", "", 200},
		{"Readyz", tb.srv.URL + "/readyz", "", 200},
		{"Playground", tb.srv.URL + "/graphql", "", 200},
		{"GraphQLQuery", tb.srv.URL + query, tb.testKey, 200},
		{"SandboxPage", tb.srv.URL + "/sandbox/checkout/" + order, "", 200},
		{"HostedPage", tb.srv.URL + "/checkout/" + live, "", 200},
		{"AdminHealthz", admin.URL + "/healthz", "", 200},
		{"AdminMetrics", admin.URL + "/metrics", "", 200},
		{"ErrNotFound", tb.srv.URL + "/api/v1/nope", tb.testKey, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			get, getBody := send(t, http.MethodGet, tt.url, "X-API-Key", tt.key)
			require.Equal(t, tt.status, get.StatusCode, "GET: %s", getBody)
			head, headBody := send(t, http.MethodHead, tt.url, "X-API-Key", tt.key)
			require.Equal(t, tt.status, head.StatusCode, "HEAD answers as GET does")
			require.Empty(t, headBody)
			require.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"))
		})
	}
	t.Run("ErrPostOnlyRoute", func(t *testing.T) {
		res, _ := send(t, http.MethodHead, tb.srv.URL+"/api/v1/checkout-sessions", "X-API-Key", tb.testKey)
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, "HEAD is not POST")
	})
}

func TestGraphQLErrorsDoNotEcho(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	const marker = "never-echoed"
	huge := strings.Repeat(marker+"-", 200_000/len(marker+"-"))
	post := func(t *testing.T, body []byte) (*http.Response, []byte) {
		t.Helper()
		require.Less(t, len(body), int(tb.m.Config.MaxBodyBytes), "under the body limit: it reaches the handler")
		req, err := http.NewRequest(http.MethodPost, tb.srv.URL+"/graphql", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", tb.testKey)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Less(t, len(raw), 1024, "a short answer: %.2000s", raw)
		require.NotContains(t, string(raw), huge[:100])
		return res, raw
	}
	t.Run("ErrUndecodableBody", func(t *testing.T) {
		body := []byte(`{"query": "` + strings.Repeat(marker+" ", 1_000_000/len(marker+" ")))
		res, raw := post(t, body)
		require.Equal(t, http.StatusBadRequest, res.StatusCode)
		require.NotContains(t, string(raw), marker)
		require.JSONEq(t, `{"errors":[{"message":"The request body must be a JSON object with a query.",
			"extensions":{"code":"validation_failed","status":400}}]}`, string(raw), "one short fixed message, the status it was sent with")
	})
	for name, query := range map[string]string{
		"ErrHugeFieldName":       "{ " + strings.ReplaceAll(huge, "-", "_") + " }",
		"ErrHugeArgument":        `{ events(q: ` + strings.ReplaceAll(huge, "-", "_") + `) { pageInfo { total } } }`,
		"ErrHugeOperationName":   "query " + strings.ReplaceAll(huge, "-", "_") + " { nope }",
		"ErrHugeUnknownArgument": `{ events(` + strings.ReplaceAll(huge, "-", "_") + `: 1) { pageInfo { total } } }`,
	} {
		t.Run(name, func(t *testing.T) {
			body, err := json.Marshal(map[string]any{"query": query})
			require.NoError(t, err)
			res, raw := post(t, body)
			require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "%s", raw)
			require.NotContains(t, string(raw), strings.ReplaceAll(huge, "-", "_")[:300])
		})
	}
}
