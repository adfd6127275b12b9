package main

import (
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
	r.Use(middleware.RequestID, m.recoverer)
	r.NotFound(rest.NotFound)
	r.MethodNotAllowed(rest.MethodNotAllowed)

	api := &rest.Handler{Resolver: m.Resolver, Log: m.Log}
	r.Route("/api/v1", func(r chi.Router) {
		r.Use(m.Auth.Middleware(func(w http.ResponseWriter, r *http.Request, err error) {
			rest.WriteError(w, r, m.Log, err)
		}))
		r.Use(loaders.Middleware(m.Catalog))
		api.Routes(r)
	})

	(&sandbox.Handler{Checkout: m.Checkout, Now: m.Now, Log: m.Log}).Routes(r)

	gql := chi.Chain(
		m.Auth.Middleware(func(w http.ResponseWriter, _ *http.Request, err error) { graph.WriteError(w, err) }),
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
