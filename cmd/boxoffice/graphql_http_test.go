package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// gqlHTTP sends a raw request to /graphql and decodes the answer, checking
// the rule every GraphQL answer keeps: each error's extensions.status is
// the HTTP status sent, or absent when that is 200.
func (tb *testBundle) gqlHTTP(t *testing.T, method, rawQuery, contentType, accept string, body string) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	u := tb.srv.URL + "/graphql"
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	req, err := http.NewRequest(method, u, rd)
	require.NoError(t, err)
	req.Header.Set("X-API-Key", tb.testKey)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := tb.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out map[string]any
	if method != http.MethodHead {
		require.NoError(t, json.Unmarshal(raw, &out), "%d %s", res.StatusCode, raw)
	}
	errs, _ := out["errors"].([]any)
	for _, e := range errs {
		ext, _ := e.(map[string]any)["extensions"].(map[string]any)
		require.NotEmpty(t, ext["code"], "every error has a code: %s", raw)
		if res.StatusCode == http.StatusOK {
			require.NotContains(t, ext, "status", "%s", raw)
		} else {
			require.EqualValues(t, res.StatusCode, ext["status"], "%s", raw)
		}
	}
	return res, out
}

func firstCode(out map[string]any) string {
	errs, _ := out["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	code, _ := errs[0].(map[string]any)["extensions"].(map[string]any)["code"].(string)
	return code
}

// TestGraphQLOverHTTP: the transport rules README states, over real HTTP.
func TestGraphQLOverHTTP(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	const js, gqlResp = "application/json", "application/graphql-response+json"
	query := `{ events { pageInfo { total } } }`
	sum := sha256.Sum256([]byte(query))
	hash := hex.EncodeToString(sum[:])
	persisted := url.Values{"extensions": {`{"persistedQuery":{"version":1,"sha256Hash":"` + hash + `"}}`}}.Encode()

	t.Run("PersistedQueryOverGET", func(t *testing.T) {
		res, out := tb.gqlHTTP(t, http.MethodGet, persisted, "", js, "")
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", firstCode(out), "a GET with a hash alone is GraphQL, not the playground")
		require.Equal(t, "PersistedQueryNotFound", out["errors"].([]any)[0].(map[string]any)["message"])
		require.NotContains(t, out, "data")
		require.Equal(t, "no-store", res.Header.Get("Cache-Control"))

		res, out = tb.gqlHTTP(t, http.MethodGet, persisted, "", gqlResp, "")
		require.Equal(t, http.StatusNotFound, res.StatusCode, "graphql-response+json answers a request without data with a 4xx")
		require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", firstCode(out))

		// Register the query with its text, then the hash alone runs it.
		res, out = tb.gqlHTTP(t, http.MethodGet, persisted+"&"+url.Values{"query": {query}}.Encode(), "", "", "")
		require.Equal(t, http.StatusOK, res.StatusCode, "%v", out)
		res, out = tb.gqlHTTP(t, http.MethodGet, persisted, "", "", "")
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Nil(t, out["errors"])
		require.Equal(t, 7.0, out["data"].(map[string]any)["events"].(map[string]any)["pageInfo"].(map[string]any)["total"])
	})
	t.Run("ErrMutationOverGET", func(t *testing.T) {
		q := url.Values{"query": {`mutation { createCheckoutSession(input: {idempotencyKey: "k"}) { replayed } }`}}.Encode()
		res, out := tb.gqlHTTP(t, http.MethodGet, q, "", "", "")
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
		require.Equal(t, "POST", res.Header.Get("Allow"))
		require.Equal(t, "method_not_allowed", firstCode(out))
	})
	t.Run("ErrMethod", func(t *testing.T) {
		res, out := tb.gqlHTTP(t, http.MethodPut, "", js, "", `{"query":"{ __typename }"}`)
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
		require.Equal(t, "GET, HEAD, POST, OPTIONS", res.Header.Get("Allow"))
		require.Equal(t, "method_not_allowed", firstCode(out))
	})
	t.Run("ErrUnsupportedMediaType", func(t *testing.T) {
		for _, ct := range []string{"", "text/plain", "application/graphql", "application/x-www-form-urlencoded", "application/json; charset=latin1"} {
			res, out := tb.gqlHTTP(t, http.MethodPost, "", ct, "", `{"query":"{ __typename }"}`)
			require.Equal(t, http.StatusUnsupportedMediaType, res.StatusCode, ct)
			require.Equal(t, "unsupported_media_type", firstCode(out), ct)
		}
		res, _ := tb.gqlHTTP(t, http.MethodPost, "", "application/json; charset=UTF-8", "", `{"query":"{ __typename }"}`)
		require.Equal(t, http.StatusOK, res.StatusCode)
	})
	t.Run("MediaTypes", func(t *testing.T) {
		for accept, want := range map[string]string{
			"": js, "*/*": js, js: js, gqlResp: gqlResp,
			"application/graphql-response+json, application/json;q=0.9": gqlResp,
			"application/json, application/graphql-response+json;q=0.5": js,
		} {
			res, out := tb.gqlHTTP(t, http.MethodPost, "", js, accept, `{"query":"{ __typename }"}`)
			require.Equal(t, http.StatusOK, res.StatusCode, accept)
			require.Equal(t, want+"; charset=utf-8", res.Header.Get("Content-Type"), accept)
			require.Equal(t, map[string]any{"__typename": "Query"}, out["data"])
		}
	})
	t.Run("ErrDocument", func(t *testing.T) {
		for name, body := range map[string]string{
			"Syntax":     `{"query":"{"}`,
			"Validation": `{"query":"{ nope }"}`,
			"Variables":  `{"query":"query($id: Int!) { event(id: $id) { id } }","variables":{"id":null}}`,
		} {
			res, out := tb.gqlHTTP(t, http.MethodPost, "", js, js, body)
			require.Equal(t, http.StatusOK, res.StatusCode, "application/json: %s", name)
			require.Equal(t, "validation_failed", firstCode(out), name)
			require.NotContains(t, out, "data", name)
			res, out = tb.gqlHTTP(t, http.MethodPost, "", js, gqlResp, body)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "graphql-response+json: %s", name)
			require.Equal(t, "validation_failed", firstCode(out), name)
			require.NotContains(t, out, "data", name)
		}
	})
	t.Run("ErrRequest", func(t *testing.T) {
		for name, body := range map[string]string{
			"NotJSON":          `{ "not a JSON`,
			"NoQuery":          `{"qeury":"{ __typename }"}`,
			"QueryNotString":   `{"query":{"obj":"ect"}}`,
			"VariablesString":  `{"query":"{ __typename }","variables":"x"}`,
			"ExtensionsArray":  `{"query":"{ __typename }","extensions":[]}`,
			"OperationNameInt": `{"query":"{ __typename }","operationName":0}`,
		} {
			res, out := tb.gqlHTTP(t, http.MethodPost, "", js, js, body)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, name)
			require.Equal(t, "validation_failed", firstCode(out), name)
		}
	})
	t.Run("ErrDocumentTooLarge", func(t *testing.T) {
		body, _ := json.Marshal(map[string]string{"query": "{ " + strings.Repeat("__typename ", 5000) + "}"})
		res, out := tb.gqlHTTP(t, http.MethodPost, "", js, gqlResp, string(body))
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
		require.Equal(t, "document_too_large", firstCode(out))
	})
	t.Run("ErrAuthentication", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, tb.srv.URL+"/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
		req.Header.Set("Content-Type", js)
		req.Header.Set("Accept", gqlResp)
		res, err := tb.srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		require.Equal(t, gqlResp+"; charset=utf-8", res.Header.Get("Content-Type"))
		require.NotContains(t, out, "data", "a request refused before execution has no data entry")
		ext := out["errors"].([]any)[0].(map[string]any)["extensions"].(map[string]any)
		require.Equal(t, map[string]any{"code": "missing_api_key", "status": 401.0}, ext)
	})
	t.Run("Playground", func(t *testing.T) {
		res, err := tb.srv.Client().Get(tb.srv.URL + "/graphql")
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Contains(t, res.Header.Get("Content-Type"), "text/html")
	})
}

// graphqlHTTPVersion is the graphql-http package whose audit
// TestGraphQLHTTPAudit runs (cmd/boxoffice/testdata/graphql-http).
const graphqlHTTPVersion = "1.23.1"

// TestGraphQLHTTPAudit runs graphql-http's server audit (the GraphQL over
// HTTP specification's conformance checks) against the real server and
// fails on any MUST or SHOULD it does not meet. It installs the pinned
// package with npm into testdata/graphql-http/node_modules (git-ignored)
// and skips only when npm or its registry cannot be reached.
func TestGraphQLHTTPAudit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the audit installs an npm package")
	}
	node, errNode := exec.LookPath("node")
	npm, errNPM := exec.LookPath("npm")
	if errNode != nil || errNPM != nil {
		t.Skip("node and npm are needed for graphql-http's audit; install Node.js 18 or later")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "graphql-http"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "graphql-http", "package.json")); err != nil {
		install := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		install.Dir = dir
		out, err := install.CombinedOutput()
		if err != nil {
			if unreachable(string(out)) {
				t.Skipf("npm could not reach its registry to install graphql-http@%s: %s", graphqlHTTPVersion, out)
			}
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	cmd := exec.Command(node, "audit.mjs", tb.srv.URL+"/graphql", tb.testKey)
	cmd.Dir = dir
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		t.Fatalf("audit.mjs: %v\n%s", err, exitErr.Stderr)
	}
	require.NoError(t, err)

	var results []struct{ ID, Name, Status, Reason string }
	require.NoError(t, json.Unmarshal(out, &results), "%s", out)
	require.Greater(t, len(results), 40, "the audit ran its checks")
	var failed []string
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Status]++
		if r.Status != "ok" {
			t.Logf("%s %s %s: %s", r.Status, r.ID, r.Name, r.Reason)
		}
		if r.Status != "ok" && (strings.HasPrefix(r.Name, "MUST") || strings.HasPrefix(r.Name, "SHOULD")) {
			failed = append(failed, r.ID+" "+r.Name+": "+r.Reason)
		}
	}
	t.Logf("graphql-http %s audit: %d checks, %v", graphqlHTTPVersion, len(results), counts)
	require.Empty(t, failed, "GraphQL over HTTP: every MUST and SHOULD holds")
}

// unreachable reports whether npm's output says the registry could not be
// reached (as opposed to any other failure, which fails the test).
func unreachable(out string) bool {
	for _, s := range []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "network"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}
