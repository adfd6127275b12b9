package main

import (
	"fmt"
	"strconv"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/ratelimit"
	"net/http"
	"runtime/debug"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/playground"
	"github.com/boxoffice/boxoffice/rest"
	"github.com/boxoffice/boxoffice/sandbox"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// Handler returns the service's HTTP handler: REST under /api/v1, GraphQL
// and its playground at /graphql.
func (m *Main) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, m.recoverer, m.clientIP, m.limitBody)
	r.NotFound(rest.NotFound)
	r.MethodNotAllowed(rest.MethodNotAllowed)

	api := &rest.Handler{Resolver: m.Resolver, Log: m.Log}
	r.Route("/api/v1", func(r chi.Router) {
		r.Use(m.guard(func(w http.ResponseWriter, r *http.Request, err error) {
			rest.WriteError(w, r, m.Log, err)
		}))
		r.Use(loaders.Middleware(m.Catalog))
		api.Routes(r)
	})

	(&sandbox.Handler{Checkout: m.Checkout, Now: m.Now, Log: m.Log}).Routes(r)

	gql := chi.Chain(
		m.guard(func(w http.ResponseWriter, _ *http.Request, err error) { graph.WriteError(w, err) }),
		loaders.Middleware(m.Catalog),
	).Handler(graph.NewHandler(m.Resolver, m.Log))
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

// guard admits API requests in the spec's order: a client IP over its
// failed-authentication limit is refused before any key lookup; then the
// key is authenticated (a rejection counts against the IP); then the app's
// request limit applies. Refusals are answered by fail.
func (m *Main) guard(fail func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := ratelimit.WithHeaders(r.Context(), w.Header())
			r = r.WithContext(ctx)
			ip := ratelimit.ClientIPFrom(ctx)
			if err := m.Limits.FailedAuth.Blocked(ctx, ip, "failed authentication attempts from this address"); err != nil {
				fail(w, r, err)
				return
			}
			p, err := m.Auth.Authenticate(ctx, r.Header.Get(auth.Header))
			if err != nil {
				if s := apperr.From(err).Status(); s == http.StatusUnauthorized || s == http.StatusForbidden {
					m.Limits.FailedAuth.Count(ctx, ip)
				}
				fail(w, r, err)
				return
			}
			key := p.Environment + ":" + strconv.FormatInt(p.AppID, 10)
			if err := m.Limits.App(p.Live()).Allow(ctx, key, "requests for this app"); err != nil {
				fail(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(ctx, p)))
		})
	}
}
