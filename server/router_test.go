package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestRecoverer: a panic answers 500 internal_error with nothing of the
// internals.
func TestRecoverer(t *testing.T) {
	t.Parallel()
	m := mustNew(t, storetest.MustOpen(t, "sqlite"))
	rec := httptest.NewRecorder()
	m.recoverer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret internals") })).
		ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/events", nil))
	require.Equal(t, 500, rec.Code)
	require.JSONEq(t, `{"error":{"code":"internal_error","message":"Internal error."}}`, rec.Body.String())
}

// TestNever499: a handler that answers a cancelled context with
// client_closed_request (499, a status for the logs) sends 408 instead
// when its request has a body, and a body whose read failed is answered
// 408 whatever the handler makes of it; a complete body changes nothing.
func TestNever499(t *testing.T) {
	t.Parallel()
	m := mustNew(t, storetest.MustOpen(t, "sqlite"))
	for _, tc := range []struct {
		name   string
		body   io.Reader
		status int
		want   int
	}{
		{"OK", strings.NewReader("a=b"), http.StatusCreated, http.StatusCreated},
		{"Err499", strings.NewReader("a=b"), apperr.StatusClientClosedRequest, http.StatusRequestTimeout},
		{"ErrBodyFailed", io.MultiReader(strings.NewReader("a="), iotest.ErrReader(io.ErrUnexpectedEOF)), http.StatusUnprocessableEntity, http.StatusRequestTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := m.limitBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				w.Header().Set("Set-Cookie", "s=1")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, "handler's answer")
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/portal/signin", tc.body))
			require.Equal(t, tc.want, rec.Code)
			if tc.want == http.StatusRequestTimeout {
				require.Equal(t, "The request body did not arrive in time.\n", rec.Body.String())
				require.Equal(t, "close", rec.Header().Get("Connection"))
				require.Empty(t, rec.Header().Get("Set-Cookie"))
			} else {
				require.Equal(t, "handler's answer", rec.Body.String())
			}
		})
	}
}
