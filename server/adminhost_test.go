package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestAdminHosts: the admin listener answers a Host that is an IP
// literal, localhost or a name of ADMIN_HOSTS, and refuses every other
// (a DNS-rebinding page's requests carry its own name) before any route
// runs, the mailbox and the metrics included.
func TestAdminHosts(t *testing.T) {
	t.Parallel()
	m := mustNew(t, storetest.MustOpen(t, "sqlite"), func(c *Config) { c.AdminHosts = []string{"Metrics.Internal."} })
	h := m.AdminHandler()
	for _, tc := range []struct {
		name, host string
		want       int
	}{
		{"IPv4", "127.0.0.1:9090", http.StatusOK},
		{"IPv4NoPort", "10.1.2.3", http.StatusOK},
		{"IPv6", "[::1]:9090", http.StatusOK},
		{"Localhost", "localhost:9090", http.StatusOK},
		{"LocalhostUpper", "LOCALHOST", http.StatusOK},
		{"Named", "metrics.internal:9090", http.StatusOK},
		{"NamedTrailingDot", "metrics.internal.", http.StatusOK},
		{"ErrOtherName", "evil.example:9090", http.StatusMisdirectedRequest},
		{"ErrSubdomainOfLocalhost", "evil.localhost", http.StatusMisdirectedRequest},
		{"ErrLookalikeIP", "127.0.0.1.evil.example", http.StatusMisdirectedRequest},
		{"ErrEmpty", "", http.StatusMisdirectedRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/mail", "/metrics", "/healthz", "/debug/pprof/"} {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Host = tc.host
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				require.Equal(t, tc.want, rec.Code, "%s %s", tc.host, path)
				if tc.want != http.StatusOK {
					require.Contains(t, rec.Body.String(), "ADMIN_HOSTS")
					require.NotContains(t, rec.Body.String(), "boxoffice_")
				}
			}
		})
	}
}
