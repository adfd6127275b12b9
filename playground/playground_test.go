package playground

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

const (
	testEndpoint = "/graphql"
	testPrefix   = "/playground/assets/"
)

func serve(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestPage(t *testing.T) {
	h := Handler(testEndpoint, testPrefix)
	rec := serve(t, h, http.MethodGet, "/graphql", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200", rec.Code)
	}
	if got, want := rec.Header().Get("Content-Type"), "text/html; charset=utf-8"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", got)
	}
	body := rec.Body.String()
	for _, want := range []string{
		"<title>Boxoffice GraphQL playground</title>",
		"<code>" + testEndpoint + "</code>",
		"X-API-Key",
		`<input id="bo-key" type="password"`,
		`localStorage.getItem(storageItem)`,
		`var storageItem = "boxoffice.apiKey"`,
		`var subscriptionUrl = ""`,
		"query Catalog",
		"GraphiQL.createFetcher",
		"opts.subscriptionUrl = ws.href",
		`if (ws.protocol === "https:") { ws.protocol = "wss:"; } else if (ws.protocol === "http:") { ws.protocol = "ws:"; }`,
		"subscription Availability",
		"isHeadersEditorEnabled: true",
		"shouldPersistHeaders: true",
		"@media (max-width: 640px)",
		`<link rel="stylesheet" href="` + testPrefix + "graphiql.min.css?v=",
		`<script src="` + testPrefix + "react.production.min.js?v=",
		`<script src="` + testPrefix + "react-dom.production.min.js?v=",
		`<script src="` + testPrefix + "graphiql.min.js?v=",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// React and ReactDOM must load before GraphiQL's UMD bundle, which
	// reads them from globals.
	react := strings.Index(body, "react.production.min.js")
	reactDOM := strings.Index(body, "react-dom.production.min.js")
	graphiql := strings.Index(body, "graphiql.min.js")
	if !(react < graphiql && reactDOM < graphiql) {
		t.Errorf("script order wrong: react@%d react-dom@%d graphiql@%d", react, reactDOM, graphiql)
	}
	if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(rec.Body.Len()) {
		t.Errorf("Content-Length = %q, body is %d bytes", got, rec.Body.Len())
	}
}

// TestPageSubscriptions: the subscription hook reaches the page's fetcher.
func TestPageSubscriptions(t *testing.T) {
	body := serve(t, Handler(testEndpoint, testPrefix, WithSubscriptions("/graphql/ws")), http.MethodGet, "/graphql", nil).Body.String()
	for _, want := range []string{`var subscriptionUrl = "/graphql/ws"`, "opts.wsConnectionParams"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestPageAnyPath: every path outside the asset prefix gets the page, so
// the handler can be mounted wherever the router sends GETs.
func TestPageAnyPath(t *testing.T) {
	h := Handler(testEndpoint, testPrefix)
	for _, target := range []string{"/", "/graphql", "/graphql/", "/playground", "/playground/assets"} {
		rec := serve(t, h, http.MethodGet, target, nil)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Errorf("GET %s = %d %q, want 200 text/html", target, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
}

func TestPageEscapesEndpoint(t *testing.T) {
	h := Handler(`/q"</script><script>alert(1)</script>`, testPrefix)
	body := serve(t, h, http.MethodGet, "/graphql", nil).Body.String()
	if strings.Contains(body, "<script>alert(1)") {
		t.Fatalf("endpoint not escaped:\n%s", body)
	}
}

func TestAssets(t *testing.T) {
	h := Handler(testEndpoint, testPrefix)
	tests := []struct {
		name        string
		contentType string
		minSize     int
	}{
		{"graphiql.min.js", "text/javascript; charset=utf-8", 100_000},
		{"graphiql.min.css", "text/css; charset=utf-8", 10_000},
		{"react.production.min.js", "text/javascript; charset=utf-8", 5_000},
		{"react-dom.production.min.js", "text/javascript; charset=utf-8", 50_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, target := range []string{testPrefix + tt.name, testPrefix + tt.name + "?v=" + assets.Version(tt.name)} {
				rec := serve(t, h, http.MethodGet, target, nil)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s status = %d, want 200", target, rec.Code)
				}
				if got := rec.Header().Get("Content-Type"); got != tt.contentType {
					t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
				}
				if got := rec.Header().Get("Cache-Control"); !strings.Contains(got, "max-age=31536000") {
					t.Errorf("Cache-Control = %q, want a one-year max-age", got)
				}
				if rec.Header().Get("ETag") == "" {
					t.Error("no ETag")
				}
				if rec.Body.Len() < tt.minSize {
					t.Errorf("body is %d bytes, want at least %d", rec.Body.Len(), tt.minSize)
				}
				if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(rec.Body.Len()) {
					t.Errorf("Content-Length = %q, body is %d bytes", got, rec.Body.Len())
				}
			}
		})
	}
}

func TestAssetNotModified(t *testing.T) {
	h := Handler(testEndpoint, testPrefix)
	etag := serve(t, h, http.MethodGet, testPrefix+"graphiql.min.css", nil).Header().Get("ETag")
	rec := serve(t, h, http.MethodGet, testPrefix+"graphiql.min.css", map[string]string{"If-None-Match": etag})
	if rec.Code != http.StatusNotModified {
		t.Fatalf("conditional GET status = %d, want 304", rec.Code)
	}
}

func TestNotFound(t *testing.T) {
	h := Handler(testEndpoint, testPrefix)
	for _, target := range []string{
		testPrefix + "nope.js",
		testPrefix + "VERSIONS.txt",
		testPrefix,
		testPrefix + "assets/graphiql.min.js",
		testPrefix + "../playground.go",
		testPrefix + "GRAPHIQL.MIN.JS",
	} {
		rec := serve(t, h, http.MethodGet, target, nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s status = %d, want 404", target, rec.Code)
		}
	}
}

func TestHead(t *testing.T) {
	h := Handler(testEndpoint, testPrefix)
	tests := []struct {
		target      string
		contentType string
	}{
		{"/graphql", "text/html; charset=utf-8"},
		{testPrefix + "graphiql.min.js", "text/javascript; charset=utf-8"},
		{testPrefix + "graphiql.min.css", "text/css; charset=utf-8"},
	}
	for _, tt := range tests {
		get := serve(t, h, http.MethodGet, tt.target, nil)
		head := serve(t, h, http.MethodHead, tt.target, nil)
		if head.Code != http.StatusOK {
			t.Errorf("HEAD %s status = %d, want 200", tt.target, head.Code)
		}
		if got := head.Header().Get("Content-Type"); got != tt.contentType {
			t.Errorf("HEAD %s Content-Type = %q, want %q", tt.target, got, tt.contentType)
		}
		if got, want := head.Header().Get("Content-Length"), strconv.Itoa(get.Body.Len()); got != want {
			t.Errorf("HEAD %s Content-Length = %q, want %q", tt.target, got, want)
		}
		if head.Body.Len() != 0 {
			t.Errorf("HEAD %s wrote %d body bytes", tt.target, head.Body.Len())
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	h := Handler(testEndpoint, testPrefix)
	tests := []struct{ method, target string }{
		{http.MethodPost, "/graphql"},
		{http.MethodPut, "/graphql"},
		{http.MethodDelete, "/graphql"},
		{http.MethodPost, testPrefix + "graphiql.min.js"},
	}
	for _, tt := range tests {
		rec := serve(t, h, tt.method, tt.target, nil)
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s status = %d, want 405", tt.method, tt.target, rec.Code)
		}
		if got := rec.Header().Get("Allow"); got != "GET, HEAD" {
			t.Errorf("%s %s Allow = %q, want %q", tt.method, tt.target, got, "GET, HEAD")
		}
	}
}

func TestAssetPrefix(t *testing.T) {
	// A prefix without its trailing slash works the same.
	h := Handler(testEndpoint, "/static")
	if rec := serve(t, h, http.MethodGet, "/static/graphiql.min.js", nil); rec.Code != http.StatusOK {
		t.Errorf("asset under /static/ status = %d, want 200", rec.Code)
	}
	if body := serve(t, h, http.MethodGet, "/graphql", nil).Body.String(); !strings.Contains(body, `src="/static/graphiql.min.js?v=`) {
		t.Error("page does not link assets under /static/")
	}

	for _, bad := range []string{"", "static/"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handler(%q, %q) did not panic", testEndpoint, bad)
				}
			}()
			Handler(testEndpoint, bad)
		}()
	}
}
