package webpage

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCSP(t *testing.T) {
	require.Equal(t, "default-src 'none'; base-uri 'none'; frame-ancestors 'none'", CSP())
	require.Equal(t, "default-src 'none'; script-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
		CSP("script-src 'self'", "form-action 'self'"))
}

func TestInlineHashes(t *testing.T) {
	sum := sha256.Sum256([]byte("\n  var a = 1;\n"))
	want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	scripts, styles := InlineHashes(`<script src="/x.js"></script><SCRIPT>
  var a = 1;
</SCRIPT><style media="all">p{}</style><style></style>`)
	require.Equal(t, []string{want}, scripts, "an element with src has no text and no hash")
	require.Equal(t, []string{Hash("p{}")}, styles)
}

func TestPage(t *testing.T) {
	p := NewPage("t", `<html><head><style>b{}</style></head><body>{{.}}</body></html>`, "form-action 'self'")
	require.Equal(t, "default-src 'none'; style-src "+Hash("b{}")+"; form-action 'self'; base-uri 'none'; frame-ancestors 'none'", p.CSP())
	rec := httptest.NewRecorder()
	require.NoError(t, p.Render(rec, http.StatusTeapot, "<i>", "img-src data:"))
	require.Equal(t, http.StatusTeapot, rec.Code)
	require.Contains(t, rec.Body.String(), "&lt;i&gt;")
	requireHeaders(t, rec.Result().Header, p.CSP("img-src data:"))
	require.Contains(t, p.CSP("img-src data:"), "; form-action 'self'; img-src data:; base-uri")
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))

	require.Panics(t, func() { NewPage("bad", `<script>var x = {{.}};</script>`) }, "a hash computed at init must match what is sent")
}

func requireHeaders(t *testing.T, h http.Header, csp string) {
	t.Helper()
	require.Equal(t, csp, h.Get("Content-Security-Policy"))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	require.Equal(t, "same-origin", h.Get("Referrer-Policy"))
	require.Equal(t, "DENY", h.Get("X-Frame-Options"))
	require.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
}

func TestMessage(t *testing.T) {
	rec := httptest.NewRecorder()
	NotFound(rec, "This <checkout> does not exist.")
	require.Equal(t, http.StatusNotFound, rec.Code)
	body := rec.Body.String()
	require.Contains(t, body, "<h1>Not found</h1>")
	require.Contains(t, body, "This &lt;checkout&gt; does not exist.")
	requireHeaders(t, rec.Result().Header, messagePage.CSP())
	_, styles := InlineHashes(body)
	require.Len(t, styles, 1)
	require.Contains(t, rec.Header().Get("Content-Security-Policy"), "style-src "+styles[0]+";", "the sent style is the hashed one")
}

func TestRefuseCrossSite(t *testing.T) {
	reached := 0
	h := RefuseCrossSite(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }))
	tests := []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"OKSameOrigin", map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusOK},
		{"OKOriginMatchesHost", map[string]string{"Origin": "http://example.com"}, http.StatusOK},
		{"OKNoBrowserHeaders", nil, http.StatusOK},
		{"ErrCrossSite", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"ErrSameSite", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"ErrForeignOrigin", map[string]string{"Origin": "https://attacker.example"}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := reached
			req := httptest.NewRequest(http.MethodPost, "http://example.com/form", strings.NewReader("a=b"))
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tt.status, rec.Code)
			if tt.status == http.StatusForbidden {
				require.Equal(t, before, reached, "a refused post never reaches the form")
				require.Contains(t, rec.Body.String(), "sent from another site")
				requireHeaders(t, rec.Result().Header, messagePage.CSP())
			} else {
				require.Equal(t, before+1, reached)
			}
		})
	}
}

func TestFormAction(t *testing.T) {
	require.Equal(t, "form-action 'self'", FormAction())
	require.Equal(t, "form-action 'self' https://shop.example https://pay.example:8443",
		FormAction("https://shop.example/done?x=1", "https://shop.example/cancel", "", "javascript:alert(1)", "https://pay.example:8443/p"))
	require.Equal(t, "", Origin("/relative"))
	require.Equal(t, "http://boxoffice.test", Origin("http://boxoffice.test/checkout/ord_x/return"))
}
