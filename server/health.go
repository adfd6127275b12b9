package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/boxoffice/boxoffice/mailpage"
	"github.com/boxoffice/boxoffice/store"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// AdminHandler returns the handler of the admin listener (ADMIN_ADDR):
// /metrics and the development mailbox (/mail), which the public port
// never serves, and the health checks.
func (m *Main) AdminHandler() http.Handler {
	r := chi.NewRouter()
	r.Use(adminHosts(m.Config.AdminHosts), middleware.GetHead)
	r.Get("/healthz", m.healthz)
	r.Get("/readyz", m.readyz)
	(&mailpage.Handler{Mailbox: m.Mailbox, Log: m.Log}).Routes(r)
	r.Handle("/metrics", promhttp.HandlerFor(m.Metrics.Registry, promhttp.HandlerOpts{}))
	// Go's profiler, for an operator on the admin network: CPU
	// (/debug/pprof/profile?seconds=N), heap, goroutines. Never on the
	// public listener.
	r.HandleFunc("/debug/pprof/*", pprof.Index)
	r.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	r.HandleFunc("/debug/pprof/profile", pprof.Profile)
	r.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	r.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return r
}

// healthz answers while the process runs.
func (m *Main) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// readyz answers 200 when the database is reachable and fully migrated,
// 503 otherwise, so a load balancer only sends traffic to a ready instance.
// It answers from a state at most readyEvery old.
func (m *Main) readyz(w http.ResponseWriter, r *http.Request) {
	reason := m.ready.reason(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if reason != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "not_ready", "reason": reason})
		return
	}
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}

// readyEvery is how old the readiness state may be.
const readyEvery = time.Second

// readiness is the state /readyz answers from, checked at most once per
// readyEvery: /readyz is public, and a flood of probes must not become a
// flood of database round trips.
type readiness struct {
	db  *store.DB
	now func() time.Time

	mu      sync.Mutex
	checked time.Time // when last is from; zero before the first check
	last    string
}

// reason returns why the service is not ready, "" when it is. A stale
// state is checked again, by one caller while the others wait for it.
func (r *readiness) reason(ctx context.Context) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if age := r.now().Sub(r.checked); !r.checked.IsZero() && age >= 0 && age < readyEvery {
		return r.last
	}
	// Not the probe's own context: a client that goes away must not leave
	// "database unreachable" behind for everyone else.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	r.last = r.check(ctx)
	r.checked = r.now()
	return r.last
}

func (r *readiness) check(ctx context.Context) string {
	if err := r.db.PingContext(ctx); err != nil {
		return "database unreachable"
	}
	n, err := store.PendingMigrations(ctx, r.db)
	if err != nil {
		return "cannot read migrations"
	}
	if n > 0 {
		return fmt.Sprintf("%d migrations pending", n)
	}
	return ""
}

// adminHosts refuses a request whose Host header is not an IP literal,
// localhost or one of names (ADMIN_HOSTS) with 421 Misdirected Request.
// The admin listener serves buyers' ticket links (/mail) and the metrics
// to whoever reaches it; a page of another site that rebinds its own DNS
// name to the listener's address reaches it from an operator's browser,
// but its requests still carry that site's name as their Host.
func adminHosts(names []string) func(http.Handler) http.Handler {
	allowed := map[string]bool{"localhost": true}
	for _, n := range names {
		if n = canonicalHost(n); n != "" {
			allowed[n] = true
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !adminHostAllowed(r.Host, allowed) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Header().Set("Cache-Control", "no-store")
				w.WriteHeader(http.StatusMisdirectedRequest)
				_, _ = w.Write([]byte("This listener answers only its IP address, localhost or a name in ADMIN_HOSTS.\n"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// adminHostAllowed reports whether hostport (a Host header, with or
// without a port) names the admin listener: an IP literal, or a name in
// allowed.
func adminHostAllowed(hostport string, allowed map[string]bool) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return allowed[canonicalHost(host)]
}

// canonicalHost is a host name as the admin listener compares it: lower
// case, without a trailing dot.
func canonicalHost(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
}
