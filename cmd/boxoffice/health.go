package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// AdminHandler returns the handler of the admin listener (ADMIN_ADDR):
// /metrics, which the public port never serves, and the health checks.
func (m *Main) AdminHandler() http.Handler {
	r := chi.NewRouter()
	r.Get("/healthz", m.healthz)
	r.Get("/readyz", m.readyz)
	r.Handle("/metrics", promhttp.HandlerFor(m.Metrics.Registry, promhttp.HandlerOpts{}))
	return r
}

// healthz answers while the process runs.
func (m *Main) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// readyz answers 200 when the database is reachable and fully migrated,
// 503 otherwise, so a load balancer only sends traffic to a ready instance.
func (m *Main) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	reason := ""
	if err := m.DB.PingContext(ctx); err != nil {
		reason = "database unreachable"
	} else if n, err := store.PendingMigrations(ctx, m.DB); err != nil {
		reason = "cannot read migrations"
	} else if n > 0 {
		reason = fmt.Sprintf("%d migrations pending", n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if reason != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "not_ready", "reason": reason})
		return
	}
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}
