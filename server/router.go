package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/admission"
	"github.com/boxoffice/boxoffice/apiref"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/devpaypage"
	"github.com/boxoffice/boxoffice/doorpage"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/hosted"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/observe"
	"github.com/boxoffice/boxoffice/openapi"
	"github.com/boxoffice/boxoffice/playground"
	"github.com/boxoffice/boxoffice/portal"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/readcache"
	"github.com/boxoffice/boxoffice/resolvers"
	"github.com/boxoffice/boxoffice/rest"
	"github.com/boxoffice/boxoffice/sandbox"
	"github.com/boxoffice/boxoffice/ticketpage"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// Handler returns the service's HTTP handler: REST under /api/v1, its API
// reference at /docs, GraphQL and its playground at /graphql.
func (m *Main) Handler() http.Handler {
	r := chi.NewRouter()
	// GetHead: HEAD is answered wherever GET is (chi's r.Get is GET only).
	r.Use(m.logRequests, m.recoverer, m.limitBody, Compress, middleware.GetHead)
	r.Get("/healthz", m.healthz)
	r.Get("/readyz", m.readyz)
	r.NotFound(notFound)
	r.MethodNotAllowed(rest.MethodNotAllowed)

	// The contract is public: partners read it before they have a key.
	r.Method(http.MethodGet, "/api/v1/openapi.json", openapi.Handler(m.Config.PublicBaseURL))
	ref := apiref.Handler(apiref.Config{DocumentURL: "/api/v1/openapi.json", AssetPrefix: "/docs/assets/", APIBaseURL: m.Config.PublicBaseURL})
	r.Handle("/docs", ref)
	r.Handle("/docs/assets/*", ref)
	api := &rest.Handler{Resolver: m.Resolver, Log: m.Log}
	r.Route("/api/v1", func(r chi.Router) {
		r.Use(m.Admission.Middleware(apiKeys, func(w http.ResponseWriter, r *http.Request, err error) {
			rest.WriteError(w, r, m.Log, err)
		}))
		r.Use(m.catalogReads)
		// Not a resource of the spec: the partner's own events, streamed
		// to `boxoffice listen`, behind the same admission.
		r.Method(http.MethodGet, "/webhook-events/stream", m.Streams)
		api.Routes(r)
	})

	r.Mount("/portal", (&portal.Handler{Service: m.Portal, Log: m.Log}).Routes())
	(&sandbox.Handler{Checkout: m.Checkout, Now: m.Now, Log: m.Log}).Routes(r)
	(&hosted.Handler{Checkout: m.Checkout, Payments: m.Payments, Now: m.Now, Log: m.Log, Refunds: m.Refunds}).Routes(r)
	(&ticketpage.Handler{Load: m.Tickets.Page, Log: m.Log, PDFs: m.TicketPDFs, Allow: func(ctx context.Context) error {
		return m.Limits.TicketPages.Allow(ctx, ratelimit.ClientKey(ratelimit.ClientIPFrom(ctx)), "ticket page requests from this address")
	}}).Routes(r)
	(&doorpage.Handler{Event: m.doorEvent, WriteError: func(w http.ResponseWriter, r *http.Request, err error) {
		rest.WriteError(w, r, m.Log, err)
	}, Now: m.Now, Log: m.Log}).Routes(r)
	if m.devPay != nil {
		(&devpaypage.Handler{Provider: m.devPay, Log: m.Log}).Routes(r)
	}

	// GraphQL takes both kinds of key and gives each its own fields: the
	// check-in fields to scanner keys, every other field to app keys.
	subscriptions := graph.Live{Admit: m.Admission.Admit, Hub: m.Live,
		InitTimeout: m.Config.LiveInitTimeout, PingInterval: m.Config.LivePingInterval}
	graphQL := graph.NewHandler(graph.Config{Resolvers: m.Resolver, Complexity: resolvers.Complexity()}, m.Log, m.Config.GraphQLLimits, subscriptions, readcache.NewResponseCache(m.Catalog))
	gql := chi.Chain(
		// Both kinds of key: GraphQL gives scanners their own fields only.
		m.Admission.Middleware(anyKeys, func(w http.ResponseWriter, r *http.Request, err error) { graph.WriteError(w, r, err) }),
		m.catalogReads,
	).Handler(graphQL)
	play := playground.Handler("/graphql", "/playground/assets/", playground.WithSubscriptions("/graphql"))
	r.Handle("/playground/assets/*", play)
	r.Handle("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A WebSocket carries its key in connection_init, where the GraphQL
		// handler admits it. A GET (or HEAD) with neither a query nor a
		// persisted-query hash is a person opening the URL: the playground.
		// Everything else is GraphQL over HTTP, which answers wrong methods
		// and media types.
		if graph.IsWebSocket(r) {
			graphQL.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !q.Has("query") && !q.Has("extensions") {
			play.ServeHTTP(w, r)
			return
		}
		gql.ServeHTTP(w, r)
	}))
	return r
}

// apiKeys says which key a REST route takes: a scanner's on the check-in
// routes, an app's everywhere else.
func apiKeys(r *http.Request) admission.Keys {
	if rest.CheckInRoute(r) {
		return admission.ScannerKeys
	}
	return admission.AppKeys
}

func anyKeys(*http.Request) admission.Keys { return admission.AnyKeys }

// pagePrefixes are where the pages a browser shows live (sandbox, hosted
// checkout and its return page, the development provider).
var pagePrefixes = []string{"/sandbox/", "/checkout/", "/dev-pay/", "/tickets/", "/door/"}

// notFound answers an unknown address: the HTML 404 page under the pages'
// paths, the API's JSON error everywhere else.
func notFound(w http.ResponseWriter, r *http.Request) {
	for _, p := range pagePrefixes {
		if strings.HasPrefix(r.URL.Path, p) {
			webpage.NotFound(w, "There is no page at this address.")
			return
		}
	}
	rest.NotFound(w, r)
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

// catalogReads gives a request the catalog as its reads see it: the read
// cache's snapshot (readcache.Middleware) and the loaders
// (loaders.Middleware), in one WithContext.
func (m *Main) catalogReads(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := readcache.WithSnapshot(r.Context(), m.ReadCache.Snapshot())
		next.ServeHTTP(w, r.WithContext(loaders.With(ctx, m.Catalog)))
	})
}

// limitBody refuses bodies larger than MaxBodyBytes with a clear error,
// and answers a body that does not arrive with 408 (watchBody).
func (m *Main) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > m.Config.MaxBodyBytes {
			err := apperr.Validation(apperr.Details{"body": {fmt.Sprintf("must be at most %d bytes", m.Config.MaxBodyBytes)}})
			if r.URL.Path == "/graphql" {
				graph.WriteError(w, r, err)
			} else {
				rest.WriteError(w, r, nil, err)
			}
			return
		}
		w, r = watchBody(w, r)
		r.Body = http.MaxBytesReader(w, r.Body, m.Config.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// logRequests gives every request what it carries throughout — its id
// (observe.WithRequestID), the record its log line reads
// (observe.WithRequest) and its client address, the socket peer or what a
// trusted proxy says (TRUSTED_PROXIES) — in one WithContext, then writes
// one log line per request (request id, route, status, latency, app and
// environment; never headers, keys or bodies) and records the request
// metrics.
func (m *Main) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, info := observe.WithRequest(observe.WithRequestID(r.Context(), r))
		ctx = ratelimit.WithClientIP(ctx, ratelimit.ClientIP(r, m.trusted))
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r.WithContext(ctx))
		took := time.Since(start)
		route := observe.Unmatched
		if rc := chi.RouteContext(ctx); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
			if strings.HasSuffix(route, "/*") && rc.Routes != nil {
				// Refused before routing (authentication, limits): name the
				// route it was meant for.
				// RouteMethod: GET for a HEAD that GetHead routed as one.
				if p := rc.Routes.Find(chi.NewRouteContext(), cmp.Or(rc.RouteMethod, r.Method), r.URL.Path); p != "" {
					route = p
				}
			}
		}
		status := ww.Status()
		if r.Context().Err() != nil {
			// The client left before the handler returned, so before the
			// answer was complete: whatever the handler made of its
			// cancelled work (a 500, a GraphQL error in a 200), nobody read
			// it and the server did not fail.
			status = apperr.StatusClientClosedRequest
		}
		if status == 0 {
			status = http.StatusOK
		}
		m.Metrics.Request(route, r.Method, status, took)
		attrs := []slog.Attr{
			slog.String("request_id", middleware.GetReqID(ctx)), slog.String("method", observe.Method(r.Method)),
			slog.String("route", route), slog.Int("status", status),
			slog.Float64("latency_ms", float64(took.Microseconds())/1000), slog.Int("bytes", ww.BytesWritten()),
		}
		if info.AppID != 0 {
			attrs = append(attrs, slog.Int64("app_id", info.AppID), slog.String("environment", info.Environment))
		}
		m.Log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
	})
}

// doorEvent is the door page's scanner key check and its event: the key
// is admitted as the check-in routes admit it (the failed-authentication
// bucket included), then its event and dates are read.
func (m *Main) doorEvent(ctx context.Context, key string) (*doorpage.Event, error) {
	p, err := m.Admission.AdmitScanner(ctx, key)
	if err != nil {
		return nil, err
	}
	d, err := m.CheckIns.Door(ctx, checkin.Scanner{ID: p.KeyID, EventID: p.EventID, Environment: p.Environment})
	if err != nil {
		return nil, err
	}
	out := &doorpage.Event{ID: d.Event.ID, Name: d.Event.Name, Environment: p.Environment}
	for _, dd := range d.Dates {
		out.Dates = append(out.Dates, doorpage.Date{ID: dd.Date.ID, Start: dd.Date.StartAt, End: dd.Date.EndAt, Venue: dd.Venue})
	}
	return out, nil
}
