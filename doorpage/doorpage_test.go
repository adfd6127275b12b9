package doorpage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a log's output, written from the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

const (
	goodKey   = "svc_scan_live_Good0123456789abcdefABCDEF"
	brokenKey = "svc_scan_live_Broken0123456789abcdefABCD"
	busyKey   = "svc_scan_live_Busy0123456789abcdefABCDEF"
	emptyKey  = "svc_scan_live_Empty0123456789abcdefABCDE"
)

type testBundle struct {
	srv  *httptest.Server
	log  *lockedBuffer
	mu   sync.Mutex
	keys []string // the keys Event was asked about
}

// setup serves a Handler on a real server, mounted on a chi router as the
// service mounts it. Event knows goodKey (an event of four dates around
// the fixed clock), fails for brokenKey, rate-limits busyKey, returns
// nothing for emptyKey, and answers every other key as the service does.
func setup(t *testing.T, opts ...func(*Handler)) *testBundle {
	t.Helper()
	tb := &testBundle{log: &lockedBuffer{}}
	accra, err := time.LoadLocation("Africa/Accra")
	require.NoError(t, err)
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, accra)
		require.NoError(t, err)
		return v
	}
	h := &Handler{
		Event: func(_ context.Context, key string) (*Event, error) {
			tb.mu.Lock()
			tb.keys = append(tb.keys, key)
			tb.mu.Unlock()
			switch key {
			case goodKey:
				return &Event{ID: 12, Name: "Highlife <Night>", Environment: "live", Dates: []Date{
					{ID: 1, Start: at("2026-12-23 18:00"), End: at("2026-12-23 23:00"), Venue: "National Theatre"},
					{ID: 2, Start: at("2026-12-24 18:00"), End: at("2026-12-25 02:00"), Venue: "National Theatre"},
					{ID: 3, Start: at("2026-12-24 09:00")},
					{ID: 4, Start: at("2026-12-31 20:00"), End: at("2026-12-31 23:30"), Venue: "Osu Castle"},
				}}, nil
			case brokenKey:
				return nil, errors.New("database is on fire")
			case busyKey:
				return nil, &apperr.Error{Code: apperr.RateLimitExceeded, Message: "Too many failed authentication attempts.", RetryAfter: 42}
			case emptyKey:
				return nil, nil
			case "":
				return nil, apperr.New(apperr.MissingAPIKey, "The X-API-Key header is missing.")
			}
			return nil, apperr.New(apperr.InvalidAPIKey, "The API key is not valid.")
		},
		Now: func() time.Time { return at("2026-12-24 10:30") },
		Log: slog.New(slog.NewTextHandler(tb.log, nil)),
	}
	for _, o := range opts {
		o(h)
	}
	r := chi.NewRouter()
	h.Routes(r)
	tb.srv = httptest.NewServer(r)
	t.Cleanup(tb.srv.Close)
	return tb
}

// asked returns the keys Event was asked about.
func (tb *testBundle) asked() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.keys...)
}

func (tb *testBundle) do(t *testing.T, method, path string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, tb.srv.URL+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := tb.srv.Client().Do(req)
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(body)
}

// directives splits a Content-Security-Policy into its directives, by
// name.
func directives(t *testing.T, csp string) map[string]string {
	t.Helper()
	d := map[string]string{}
	for _, part := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(part), " ")
		require.NotContains(t, d, name, "directive %s given twice", name)
		d[name] = value
	}
	return d
}

func TestPage(t *testing.T) {
	tb := setup(t)
	res, body := tb.do(t, http.MethodGet, PagePath)
	require.Equal(t, http.StatusOK, res.StatusCode)
	h := res.Header
	require.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
	require.Equal(t, "no-store", h.Get("Cache-Control"))
	require.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	require.Equal(t, "DENY", h.Get("X-Frame-Options"))
	require.Equal(t, "noindex", h.Get("X-Robots-Tag"))
	require.Equal(t, "camera=(self), microphone=(), geolocation=()", h.Get("Permissions-Policy"))
	require.Equal(t, strconv.Itoa(len(body)), h.Get("Content-Length"))

	csp := h.Get("Content-Security-Policy")
	d := directives(t, csp)
	_, styles := webpage.InlineHashes(body)
	require.Len(t, styles, 1, "one inline style")
	require.Equal(t, map[string]string{
		"default-src":     "'none'",
		"script-src":      "'self'",
		"worker-src":      "'self'",
		"style-src":       styles[0],
		"img-src":         "data:",
		"connect-src":     "'self'",
		"form-action":     "'none'",
		"base-uri":        "'none'",
		"frame-ancestors": "'none'",
	}, d)
	require.NotContains(t, csp, "unsafe", "nothing inline runs but the hashed style")
	require.NotRegexp(t, `https?:|\*|wss?:`, csp, "no other host is allowed anything")

	scripts, _ := webpage.InlineHashes(body)
	require.Empty(t, scripts, "no inline script: the page's script is a file of its own")
	require.NotRegexp(t, `(?i)(src|href)="(https?:)?//`, body, "nothing is loaded from another host")
	require.NotContains(t, body, "localStorage")
	for _, want := range []string{
		`<script src="` + AssetPrefix + `jsQR.js?v=` + assets.Version(jsQRJS) + `"></script>`,
		`<script src="` + AssetPrefix + `door.js?v=` + assets.Version(doorJS) + `"></script>`,
		`data-dates="/door/dates" data-checkins="/api/v1/check-ins" data-stats="/api/v1/check-ins/stats"`,
		`data-manifest="/api/v1/check-ins/manifest" data-batch="/api/v1/check-ins/batch" data-worker="/door/sw.js" data-scope="/door"`,
		`<a href="/door/licenses.txt">`,
		`<input id="key" type="password" autocomplete="off"`,
		`<video id="video" playsinline muted></video>`,
		`<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">`,
	} {
		require.Contains(t, body, want)
	}
	require.Less(t, strings.Index(body, "jsQR.js"), strings.Index(body, "door.js"), "the decoder loads before the script that calls it")

	res, headBody := tb.do(t, http.MethodHead, PagePath)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Empty(t, headBody)
	require.Equal(t, strconv.Itoa(len(body)), res.Header.Get("Content-Length"))

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		res, body := tb.do(t, method, PagePath)
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, method)
		require.Equal(t, "GET, HEAD", res.Header.Get("Allow"), method)
		require.Contains(t, body, "<h1>Method not allowed</h1>", method)
	}

	res, body = tb.do(t, http.MethodGet, "/door/nothing/here")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	require.Contains(t, body, "There is no door page at this address.")
	require.Empty(t, tb.asked(), "the page and its files never ask for a key")
}

// TestDoorScript: the page's own script keeps the key in the tab, sends
// it as X-API-Key with an Idempotency-Key per scan, and writes no markup
// from what it is told.
func TestDoorScript(t *testing.T) {
	src, err := assetFS.ReadFile("assets/door.js")
	require.NoError(t, err)
	js := string(src)
	for _, want := range []string{"sessionStorage", `"X-API-Key"`, `"Idempotency-Key"`, "getUserMedia", `facingMode: { ideal: "environment" }`, "jsQR(",
		"indexedDB.open", `crypto.subtle.digest("SHA-256"`, "serviceWorker.register"} {
		require.Contains(t, js, want)
	}
	for _, banned := range []string{"localStorage", "document.cookie", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "http://", "https://"} {
		require.NotContains(t, js, banned)
	}
}

// TestWorker: the service worker is served at a stable address with the
// header that lets it control /door itself, a policy of its own, and the
// exact URLs of what it caches: the page, its content-hashed scripts and
// the licence; its cache is named by the page's content.
func TestWorker(t *testing.T) {
	tb := setup(t)
	res, body := tb.do(t, http.MethodGet, WorkerPath)
	require.Equal(t, http.StatusOK, res.StatusCode)
	h := res.Header
	require.Equal(t, "text/javascript; charset=utf-8", h.Get("Content-Type"))
	require.Equal(t, "/door", h.Get("Service-Worker-Allowed"))
	require.Equal(t, "no-cache", h.Get("Cache-Control"))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	require.Equal(t, strconv.Itoa(len(body)), h.Get("Content-Length"))
	require.Equal(t, map[string]string{"default-src": "'none'", "connect-src": "'self'", "base-uri": "'none'", "frame-ancestors": "'none'"},
		directives(t, h.Get("Content-Security-Policy")))
	sum := sha256.Sum256(renderedPage)
	require.Contains(t, body, `var CACHE = "boxoffice-door-`+hex.EncodeToString(sum[:8])+`";`)
	require.Contains(t, body, `var PAGE = "/door";`)
	require.Contains(t, body, `var FILES = [PAGE, "/door/assets/jsQR.js?v=`+assets.Version(jsQRJS)+`", "/door/assets/door.js?v=`+assets.Version(doorJS)+`", "/door/licenses.txt"];`)
	require.NotContains(t, body, "{{", "every template action rendered")
	require.NotContains(t, body, "/api/", "the worker leaves the API alone")

	res, headBody := tb.do(t, http.MethodHead, WorkerPath)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Empty(t, headBody)
	res, _ = tb.do(t, http.MethodPost, WorkerPath)
	require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	require.Empty(t, tb.asked(), "the worker never asks for a key")
}

func TestAssets(t *testing.T) {
	tb := setup(t)
	for _, name := range []string{jsQRJS, doorJS} {
		res, body := tb.do(t, http.MethodGet, assets.URL(AssetPrefix, name))
		require.Equal(t, http.StatusOK, res.StatusCode, name)
		require.Equal(t, "text/javascript; charset=utf-8", res.Header.Get("Content-Type"), name)
		require.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"), name)
		require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), name)
		sum := sha256.Sum256([]byte(body))
		require.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, res.Header.Get("ETag"), name)
		require.Equal(t, hex.EncodeToString(sum[:])[:12], assets.Version(name), "the URL names the content: %s", name)
		res, _ = tb.do(t, http.MethodGet, assets.URL(AssetPrefix, name), "If-None-Match", res.Header.Get("ETag"))
		require.Equal(t, http.StatusNotModified, res.StatusCode, name)
	}
	for _, name := range []string{"nope.js", "jsQR.LICENSE", "VERSIONS.txt", "page.html"} {
		res, body := tb.do(t, http.MethodGet, AssetPrefix+name)
		require.Equal(t, http.StatusNotFound, res.StatusCode, name)
		require.Contains(t, body, "<h1>Not found</h1>", name)
	}
	res, _ := tb.do(t, http.MethodPost, assets.URL(AssetPrefix, doorJS))
	require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
}

// TestDecoderAndLicence: the embedded decoder is the file VERSIONS.txt
// names, its UMD build defines the jsQR global the page calls, and its
// Apache 2.0 licence ships in the binary and is served.
func TestDecoderAndLicence(t *testing.T) {
	versions, err := os.ReadFile("assets/VERSIONS.txt")
	require.NoError(t, err)
	m := regexp.MustCompile(`sha256 of jsQR.js: ([0-9a-f]{64})`).FindSubmatch(versions)
	require.NotNil(t, m, "VERSIONS.txt records the decoder's hash")
	js, err := assetFS.ReadFile("assets/jsQR.js")
	require.NoError(t, err)
	sum := sha256.Sum256(js)
	require.Equal(t, string(m[1]), hex.EncodeToString(sum[:]), "assets/jsQR.js is the file VERSIONS.txt names (copied unmodified from jsqr 1.4.0)")
	require.Contains(t, string(js), `root["jsQR"] = factory();`)
	require.Contains(t, string(versions), "jsqr     1.4.0")

	lic, err := assetFS.ReadFile("assets/jsQR.LICENSE")
	require.NoError(t, err)
	require.Contains(t, string(lic), "Apache License")
	require.Contains(t, string(lic), "Version 2.0, January 2004")

	tb := setup(t)
	res, body := tb.do(t, http.MethodGet, LicensesPath)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/plain; charset=utf-8", res.Header.Get("Content-Type"))
	require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	require.True(t, strings.HasPrefix(body, "The door page decodes QR codes with jsQR 1.4.0"))
	require.True(t, strings.HasSuffix(body, string(lic)), "the licence in full")

	pkg, err := os.ReadFile("assets-src/package.json")
	require.NoError(t, err)
	require.Contains(t, string(pkg), `"jsqr": "1.4.0"`, "the npm pin matches the copied file")
	lock, err := os.ReadFile("assets-src/package-lock.json")
	require.NoError(t, err)
	require.Contains(t, string(lock), `"node_modules/jsqr": {
      "version": "1.4.0",`)
}

func TestDates(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		tb := setup(t)
		res, body := tb.do(t, http.MethodGet, DatesPath, "X-API-Key", goodKey)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "application/json", res.Header.Get("Content-Type"))
		require.Equal(t, "no-store", res.Header.Get("Cache-Control"))
		require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		require.JSONEq(t, `{"data": {
			"event": {"id": 12, "name": "Highlife <Night>"},
			"environment": "live",
			"dates": [
				{"id": 1, "day": "Wed, 23 Dec 2026", "time": "6:00 PM – 11:00 PM", "label": "Wed, 23 Dec 2026 · 6:00 PM – 11:00 PM",
				 "short": "Wed, 23 Dec · 6:00 PM", "venue": "National Theatre", "startdate_iso": "2026-12-23T18:00:00Z", "today": false, "over": true},
				{"id": 2, "day": "Thu, 24 Dec 2026", "time": "6:00 PM – Fri, 25 Dec 2:00 AM", "label": "Thu, 24 Dec 2026 · 6:00 PM – Fri, 25 Dec 2:00 AM",
				 "short": "Thu, 24 Dec · 6:00 PM", "venue": "National Theatre", "startdate_iso": "2026-12-24T18:00:00Z", "today": true, "over": false},
				{"id": 3, "day": "Thu, 24 Dec 2026", "time": "9:00 AM", "label": "Thu, 24 Dec 2026 · 9:00 AM",
				 "short": "Thu, 24 Dec · 9:00 AM", "venue": "Online", "startdate_iso": "2026-12-24T09:00:00Z", "today": true, "over": false},
				{"id": 4, "day": "Thu, 31 Dec 2026", "time": "8:00 PM – 11:30 PM", "label": "Thu, 31 Dec 2026 · 8:00 PM – 11:30 PM",
				 "short": "Thu, 31 Dec · 8:00 PM", "venue": "Osu Castle", "startdate_iso": "2026-12-31T20:00:00Z", "today": false, "over": false}
			]}}`, body)
		require.Equal(t, []string{goodKey}, tb.asked(), "Event is asked about the key as sent")

		res, head := tb.do(t, http.MethodHead, DatesPath, "X-API-Key", goodKey)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Empty(t, head)
	})

	tests := []struct {
		name, key string
		status    int
		code      string
	}{
		{"ErrMissingAPIKey", "", http.StatusUnauthorized, "missing_api_key"},
		{"ErrInvalidAPIKey", "svc_scan_live_unknown", http.StatusUnauthorized, "invalid_api_key"},
		{"ErrRateLimitExceeded", busyKey, http.StatusTooManyRequests, "rate_limit_exceeded"},
		{"ErrInternal", brokenKey, http.StatusInternalServerError, "internal_error"},
		{"ErrNoEvent", emptyKey, http.StatusInternalServerError, "internal_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := setup(t)
			var hdr []string
			if tt.key != "" {
				hdr = []string{"X-API-Key", tt.key}
			}
			res, body := tb.do(t, http.MethodGet, DatesPath, hdr...)
			require.Equal(t, tt.status, res.StatusCode)
			require.Equal(t, "application/json", res.Header.Get("Content-Type"))
			require.Equal(t, "no-store", res.Header.Get("Cache-Control"))
			require.Regexp(t, `^\{"error":\{"code":"`+tt.code+`","message":"[^"]+"\}\}$`, body)
			require.Equal(t, []string{tt.key}, tb.asked())
			if tt.status == http.StatusInternalServerError {
				require.Contains(t, body, `"message":"Internal error."`, "nothing of the cause is sent")
				require.Contains(t, tb.log.String(), "door dates")
				require.NotContains(t, tb.log.String(), tt.key, "the key never reaches the log")
			} else {
				require.Empty(t, tb.log.String())
			}
			if tt.code == "rate_limit_exceeded" {
				require.Equal(t, "42", res.Header.Get("Retry-After"))
			}
		})
	}

	t.Run("ErrMethodNotAllowed", func(t *testing.T) {
		tb := setup(t)
		res, body := tb.do(t, http.MethodPost, DatesPath, "X-API-Key", goodKey)
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
		require.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
		require.Contains(t, body, `"code":"method_not_allowed"`)
		require.Empty(t, tb.asked(), "a wrong method never gets to the key")
	})

	t.Run("WriteError", func(t *testing.T) {
		got := make(chan error, 1)
		tb := setup(t, func(h *Handler) {
			h.WriteError = func(w http.ResponseWriter, _ *http.Request, err error) {
				got <- err
				w.WriteHeader(apperr.From(err).Status())
			}
		})
		res, _ := tb.do(t, http.MethodGet, DatesPath, "X-API-Key", "svc_scan_live_unknown")
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		require.Equal(t, apperr.InvalidAPIKey, apperr.CodeOf(<-got), "the service's own error writer renders Event's errors")
	})
}
