package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

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
