package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/hosted"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/observe"
	"github.com/boxoffice/boxoffice/openapi"
	"github.com/boxoffice/boxoffice/playground"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/rest"
	"github.com/boxoffice/boxoffice/sandbox"
	"github.com/boxoffice/boxoffice/store"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler returns the service's HTTP handler: REST under /api/v1, GraphQL
// and its playground at /graphql.
func (m *Main) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, m.logRequests, m.recoverer, m.clientIP, m.limitBody)
	r.Get("/healthz", m.healthz)
	r.Get("/readyz", m.readyz)
	r.Handle("/metrics", promhttp.HandlerFor(m.Metrics.Registry, promhttp.HandlerOpts{}))
	r.NotFound(rest.NotFound)
	r.MethodNotAllowed(rest.MethodNotAllowed)

	// The contract is public: partners read it before they have a key.
	r.Method(http.MethodGet, "/api/v1/openapi.json", openapi.Handler())
	api := &rest.Handler{Resolver: m.Resolver, Log: m.Log}
	r.Route("/api/v1", func(r chi.Router) {
		r.Use(m.Admission.Middleware(func(w http.ResponseWriter, r *http.Request, err error) {
			rest.WriteError(w, r, m.Log, err)
		}))
		r.Use(loaders.Middleware(m.Catalog))
		// Not a resource of the spec: the partner's own events, streamed
		// to `boxoffice listen`, behind the same admission.
		r.Method(http.MethodGet, "/webhook-events/stream", m.Streams)
		api.Routes(r)
	})

	(&sandbox.Handler{Checkout: m.Checkout, Now: m.Now, Log: m.Log}).Routes(r)
	(&hosted.Handler{Checkout: m.Checkout, Payments: m.Payments, Now: m.Now, Log: m.Log}).Routes(r)
	if m.devPay != nil {
		m.devPay.Routes(r)
	}

	gql := chi.Chain(
		m.Admission.Middleware(func(w http.ResponseWriter, _ *http.Request, err error) { graph.WriteError(w, err) }),
		loaders.Middleware(m.Catalog),
	).Handler(graph.NewHandler(m.Resolver, m.Log, m.Config.GraphQLLimits, graph.NewResponseCache(m.Catalog)))
	play := playground.Handler("/graphql", "/playground/assets/")
	r.Handle("/playground/assets/*", play)
	r.Post("/graphql", gql.ServeHTTP)
	r.Options("/graphql", gql.ServeHTTP)
	r.Get("/graphql", func(w http.ResponseWriter, r *http.Request) {
		// A GET with a query is a GraphQL request; without one, a person
		// opening the URL gets the playground.
		if r.URL.Query().Has("query") {
			gql.ServeHTTP(w, r)
			return
		}
		play.ServeHTTP(w, r)
	})
	return r
}

// recoverer turns a panic into 500 internal_error, logging the stack but
// never sending it.
func (m *Main) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				m.Log.ErrorContext(r.Context(), "panic", "panic", p, "path", r.URL.Path, "stack", string(debug.Stack()))
				rest.WriteError(w, r, nil, apperr.New(apperr.Internal, "Internal error."))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// clientIP records the request's client address: the socket peer, or what
// a trusted proxy says (TRUSTED_PROXIES).
func (m *Main) clientIP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := ratelimit.ClientIP(r, m.trusted)
		next.ServeHTTP(w, r.WithContext(ratelimit.WithClientIP(r.Context(), ip)))
	})
}

// limitBody refuses bodies larger than MaxBodyBytes with a clear error.
func (m *Main) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > m.Config.MaxBodyBytes {
			err := apperr.Validation(apperr.Details{"body": {fmt.Sprintf("must be at most %d bytes", m.Config.MaxBodyBytes)}})
			if r.URL.Path == "/graphql" {
				graph.WriteError(w, err)
			} else {
				rest.WriteError(w, r, nil, err)
			}
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, m.Config.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// logRequests writes one log line per request (request id, route, status,
// latency, app and environment; never headers, keys or bodies) and records
// the request metrics.
func (m *Main) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, info := observe.WithRequest(r.Context())
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r.WithContext(ctx))
		took := time.Since(start)
		route := "unmatched"
		if rc := chi.RouteContext(ctx); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
			if strings.HasSuffix(route, "/*") && rc.Routes != nil {
				// Refused before routing (authentication, limits): name the
				// route it was meant for.
				if p := rc.Routes.Find(chi.NewRouteContext(), r.Method, r.URL.Path); p != "" {
					route = p
				}
			}
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		m.Metrics.Request(route, r.Method, strconv.Itoa(status), took)
		attrs := []slog.Attr{
			slog.String("request_id", middleware.GetReqID(ctx)), slog.String("method", r.Method),
			slog.String("route", route), slog.Int("status", status),
			slog.Float64("latency_ms", float64(took.Microseconds())/1000), slog.Int("bytes", ww.BytesWritten()),
		}
		if info.AppID != 0 {
			attrs = append(attrs, slog.Int64("app_id", info.AppID), slog.String("environment", info.Environment))
		}
		m.Log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
	})
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
