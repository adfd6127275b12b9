package webpage

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func TestAssets(t *testing.T) {
	fsys := fstest.MapFS{
		"assets/app.js":       {Data: []byte("console.log(1)")},
		"assets/app.css":      {Data: []byte("body{}")},
		"assets/VERSIONS.txt": {Data: []byte("not served")},
	}
	a := LoadAssets(fsys, "assets", "app.js")
	sum := sha256.Sum256([]byte("console.log(1)"))
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	require.Equal(t, hex.EncodeToString(sum[:])[:12], a.Version("app.js"))
	require.Equal(t, "/x/app.js?v="+a.Version("app.js"), a.URL("/x/", "app.js"))
	require.Panics(t, func() { a.URL("/x/", "nope.js") }, "a page naming a missing file is a build error")
	require.Panics(t, func() { LoadAssets(fsys, "assets", "gone.js") })

	serve := func(method, name string, hdr ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "/x/"+name, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		if !a.Serve(rec, req, name) {
			NotFound(rec, "There is no such file.")
		}
		return rec
	}
	rec := serve(http.MethodGet, "app.js")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/javascript; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Equal(t, "public, max-age=31536000, immutable", rec.Header().Get("Cache-Control"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	require.Equal(t, etag, rec.Header().Get("ETag"))
	require.Equal(t, "console.log(1)", rec.Body.String())
	require.Equal(t, "text/css; charset=utf-8", serve(http.MethodGet, "app.css").Header().Get("Content-Type"))
	require.Equal(t, http.StatusNotModified, serve(http.MethodGet, "app.js", "If-None-Match", etag).Code)

	unknown := httptest.NewRecorder()
	require.False(t, a.Serve(unknown, httptest.NewRequest(http.MethodGet, "/x/nope.js", nil), "nope.js"))
	require.Empty(t, unknown.Header(), "an unknown name is left to the caller's 404 page")
	require.Empty(t, unknown.Body.String())
	for _, name := range []string{"nope.js", "VERSIONS.txt", "../assets/app.js", ""} {
		rec := serve(http.MethodGet, name)
		require.Equal(t, http.StatusNotFound, rec.Code, name)
		require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"), name)
		require.Contains(t, rec.Body.String(), "<h1>Not found</h1>", name)
	}
}

func TestReadOnlyAndServePage(t *testing.T) {
	page := []byte("<!doctype html><p>hi</p>")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ReadOnly(w, r) {
			return
		}
		ServePage(w, r, page, CSP("img-src 'self'"))
	})
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, "BREW"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
		require.Equal(t, http.StatusMethodNotAllowed, rec.Code, method)
		require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"), method)
		require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"), method)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, string(page), rec.Body.String())
	require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	requireHeaders(t, rec.Result().Header, CSP("img-src 'self'"))

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Empty(t, rec.Body.String())
	require.Equal(t, "24", rec.Header().Get("Content-Length"))
}
