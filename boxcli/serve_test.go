package boxcli

import (
	"context"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestServeBanner checks what `make run` (serve --demo) prints on a first
// start: the demo app's keys and redirect domain, then where the REST API,
// its reference and the GraphQL playground are.
func TestServeBanner(t *testing.T) {
	t.Parallel()
	cfg := server.DefaultConfig()
	cfg.PublicBaseURL = "http://localhost:8080"
	m, err := server.New(cfg, storetest.MustOpen(t, "sqlite"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(m.Listener.Close)
	require.NoError(t, m.Migrate(context.Background()))
	var out strings.Builder
	require.NoError(t, seedOnFirstStart(context.Background(), &out, m))
	admin, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	printListening(&out, &net.TCPAddr{IP: net.IPv6zero, Port: 8080}, cfg.PublicBaseURL, admin, nil)
	got := out.String()
	for _, want := range []string{
		"  test key:       svc_test_",
		"  live key:       svc_live_",
		"  webhook secret: whsec_",
		"  redirect domain: partner.example (success_url and cancel_url: https://partner.example/…)",
		"Boxoffice is listening on [::]:8080",
		"  REST:          http://localhost:8080/api/v1/events",
		"  API reference: http://localhost:8080/docs (try requests with your key)",
		"  GraphQL:       http://localhost:8080/graphql (open it in a browser for the playground)",
		"  Ticket emails: http://" + admin.Addr().String() + "/mail (development mailbox; set SMTP_URL to send them)",
	} {
		require.Contains(t, got, want)
	}
	t.Log("\n" + got)
}

// TestDefaultMemoryLimit: serve sets a soft memory limit and GOGC unless
// GOMEMLIMIT and GOGC chose them.
func TestDefaultMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	oldGC := debug.SetGCPercent(100)
	defer debug.SetGCPercent(oldGC)
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	limit, gogc := runtimeDefaults()
	require.Equal(t, int64(DefaultMemoryLimit), limit)
	require.Equal(t, DefaultGCPercent, gogc)
	require.Equal(t, DefaultGCPercent, debug.SetGCPercent(DefaultGCPercent))
	debug.SetMemoryLimit(300 << 20) // as the runtime would from GOMEMLIMIT=300MiB
	debug.SetGCPercent(50)          // and from GOGC=50
	t.Setenv("GOMEMLIMIT", "300MiB")
	t.Setenv("GOGC", "50")
	limit, gogc = runtimeDefaults()
	require.Equal(t, int64(300<<20), limit)
	require.Equal(t, 50, gogc, "GOGC set by the operator is kept")
	require.Equal(t, 50, debug.SetGCPercent(50))
}
