package boxcli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestHealthURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, want string }{
		{":8080", "http://127.0.0.1:8080/healthz"},
		{"0.0.0.0:9000", "http://127.0.0.1:9000/healthz"},
		{"[::]:8080", "http://127.0.0.1:8080/healthz"},
		{"127.0.0.1:8081", "http://127.0.0.1:8081/healthz"},
		{"[::1]:8080", "http://[::1]:8080/healthz"},
		{"boxoffice:8080", "http://boxoffice:8080/healthz"},
	}
	for _, tt := range tests {
		got, err := healthURL(tt.addr)
		require.NoError(t, err, tt.addr)
		require.Equal(t, tt.want, got, tt.addr)
	}
	_, err := healthURL("8080")
	require.ErrorContains(t, err, `ADDR "8080" is not host:port`)
}

// TestHealthcheckCommand runs `boxoffice healthcheck` against a running
// server, as a container's HEALTHCHECK does, and against one that is down.
func TestHealthcheckCommand(t *testing.T) {
	t.Parallel()
	tb := serve(t, storetest.MustOpen(t, "sqlite"))
	addr := strings.TrimPrefix(tb.srv.URL, "http://")
	run := func(args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		err := New(&stdout, &stderr).Run(context.Background(), append([]string{"boxoffice"}, args...))
		return stdout.String(), err
	}
	out, err := run("--addr", addr, "healthcheck")
	require.NoError(t, err)
	require.Equal(t, "ok: http://"+addr+"/healthz\n", out)

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	_, err = run("healthcheck", "--url", down.URL+"/healthz")
	require.ErrorContains(t, err, "answered 503")

	down.Close()
	_, err = run("--addr", strings.TrimPrefix(down.URL, "http://"), "healthcheck")
	require.ErrorContains(t, err, "healthcheck:")
}
