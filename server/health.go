package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/pprof"
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
	r.Use(middleware.GetHead)
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
