package apiref

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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

var testConfig = Config{DocumentURL: "/api/v1/openapi.json", AssetPrefix: "/docs/assets", APIBaseURL: "http://localhost:8080"}

func TestPage(t *testing.T) {
	h := Handler(testConfig)
	rec := serve(t, h, http.MethodGet, "/docs", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	body := rec.Body.String()
	for _, want := range []string{
		"<title>Boxoffice API reference</title>",
		`<div id="reference" data-document="/api/v1/openapi.json"></div>`,
		`<script src="/docs/assets/scalar-api-reference.js?v=` + assets.Version(scalarJS) + `"></script>`,
		`<script src="/docs/assets/reference.js?v=` + assets.Version(referenceJS) + `"></script>`,
	} {
		require.Contains(t, body, want)
	}
	// Scalar's bundle loads before the script that mounts it.
	require.Less(t, strings.Index(body, scalarJS), strings.Index(body, referenceJS))
	// Nothing inline, nothing from elsewhere.
	require.NotContains(t, body, "<script>")
	require.NotContains(t, body, "<style")
	require.NotContains(t, body, "https://")
	require.Equal(t, rec.Body.Len(), len(h.(*handler).page))

	head := serve(t, h, http.MethodHead, "/docs", nil)
	require.Equal(t, http.StatusOK, head.Code)
	require.Zero(t, head.Body.Len())
	require.Equal(t, rec.Header().Get("Content-Length"), head.Header().Get("Content-Length"))
}

func TestContentSecurityPolicy(t *testing.T) {
	tests := []struct {
		name, apiBase, connect string
	}{
		{"SameOrigin", "http://localhost:8080", "connect-src 'self' http://localhost:8080"},
		{"AnotherOrigin", "https://api.boxoffice.test/base", "connect-src 'self' https://api.boxoffice.test"},
		{"NoBase", "", "connect-src 'self'"},
		{"NotHTTP", "javascript:alert(1)", "connect-src 'self'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig
			cfg.APIBaseURL = tt.apiBase
			rec := serve(t, Handler(cfg), http.MethodGet, "/docs", nil)
			directives := map[string]string{}
			for _, d := range strings.Split(rec.Header().Get("Content-Security-Policy"), ";") {
				d = strings.TrimSpace(d)
				name, _, _ := strings.Cut(d, " ")
				directives[name] = d
			}
			require.Equal(t, map[string]string{
				"default-src":     "default-src 'none'",
				"script-src":      "script-src 'self'",
				"style-src":       "style-src 'self' 'unsafe-inline'",
				"img-src":         "img-src 'self' data:",
				"font-src":        "font-src 'self' data:",
				"connect-src":     tt.connect,
				"base-uri":        "base-uri 'none'",
				"form-action":     "form-action 'none'",
				"frame-ancestors": "frame-ancestors 'none'",
			}, directives)
		})
	}
}

func TestAssets(t *testing.T) {
	h := Handler(testConfig)
	for _, name := range []string{scalarJS, referenceJS} {
		t.Run(name, func(t *testing.T) {
			body := embedded(t, name)
			sum := sha256.Sum256(body)
			etag := `"` + hex.EncodeToString(sum[:]) + `"`
			rec := serve(t, h, http.MethodGet, "/docs/assets/"+name+"?v="+assets.Version(name), nil)
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, "text/javascript; charset=utf-8", rec.Header().Get("Content-Type"))
			require.Equal(t, "public, max-age=31536000, immutable", rec.Header().Get("Cache-Control"))
			require.Equal(t, etag, rec.Header().Get("ETag"))
			require.Equal(t, body, rec.Body.Bytes())

			notModified := serve(t, h, http.MethodGet, "/docs/assets/"+name, map[string]string{"If-None-Match": etag})
			require.Equal(t, http.StatusNotModified, notModified.Code)
		})
	}
	// The bundle is Scalar's standalone build, which mounts through this global.
	require.Contains(t, string(embedded(t, scalarJS)), "window.Scalar={createApiReference:")
	// The mounting script keeps the page offline.
	mount := string(embedded(t, referenceJS))
	for _, want := range []string{"withDefaultFonts: false", "telemetry: false", "agent: { disabled: true }",
		"mcp: { disabled: true }", "hideClientButton: true", `preferredSecurityScheme: "ApiKeyAuth"`} {
		require.Contains(t, mount, want)
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	h := Handler(testConfig)
	for _, target := range []string{"/docs/assets/VERSIONS.txt", "/docs/assets/nope.js", "/docs/assets/"} {
		require.Equal(t, http.StatusNotFound, serve(t, h, http.MethodGet, target, nil).Code, target)
	}
	rec := serve(t, h, http.MethodPost, "/docs", nil)
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
	require.Panics(t, func() { Handler(Config{AssetPrefix: "docs/assets/"}) })
}

// embedded returns the embedded file name, as the binary holds it.
func embedded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := assetFS.ReadFile("assets/" + name)
	require.NoError(t, err)
	return b
}
