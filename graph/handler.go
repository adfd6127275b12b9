package graph

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// QueryCacheBytes bounds each of the parsed-query and persisted-query
// caches, in bytes.
const QueryCacheBytes = 16 << 20

// NewHandler returns the /graphql HTTP handler over the resolvers: POST and
// GET transports, subscriptions over WebSocket (live), a parsed-query
// cache, introspection on, depth and complexity limits, automatic
// persisted queries, errors shaped by Present and panics turned into
// internal_error, plus any further extensions.
func NewHandler(root ResolverRoot, log *slog.Logger, limits DocumentLimits, live Live, exts ...graphql.HandlerExtension) http.Handler {
	srv := handler.New(NewExecutableSchema(Config{Resolvers: root, Complexity: complexity()}))
	if live.Hub != nil {
		srv.AddTransport(live.transport(log))
	}
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	// A parsed document is charged 40 times its text: TestParsedQueryCost
	// measures about 20 times for a nested query, so this errs on the safe side.
	srv.SetQueryCache(newBoundedCache(QueryCacheBytes, func(q string, _ *ast.QueryDocument) int { return 40 * len(q) }))
	srv.Use(extension.Introspection{})
	srv.Use(extension.FixedComplexityLimit(MaxComplexity))
	srv.Use(depthLimit{max: MaxDepth})
	// Automatic persisted queries: clients may send a query's hash alone once
	// the query is known. The cache is per instance; a miss asks the client
	// for the full query, which the APQ protocol handles.
	srv.Use(extension.AutomaticPersistedQuery{Cache: newBoundedCache(QueryCacheBytes, func(h, q string) int { return len(h) + len(q) })})
	// After APQ has filled in the text, before gqlgen parses it.
	srv.Use(documentGuard{limits: limits})
	srv.Use(liveOperations{admit: live.Admit, log: log})
	for _, e := range exts {
		srv.Use(e)
	}
	srv.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		return Present(ctx, err, log)
	})
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in GraphQL resolver", "panic", p, "stack", string(debug.Stack()))
		return apperr.New(apperr.Internal, "Internal error.")
	})
	slots := max(4, 2*runtime.GOMAXPROCS(0))
	operations := readBody(bodyTimeout, admit(slots, slots/2, srv))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsWebSocket(r) {
			// A socket lives for minutes or hours: it must not hold an
			// execution slot. Its subscriptions are bounded by live.Hub.
			srv.ServeHTTP(w, r)
			return
		}
		operations.ServeHTTP(w, r)
	})
}

// Present shapes every GraphQL error: extensions.code is the REST error code
// and extensions.status the HTTP status REST would answer. Query syntax and
// validation errors are validation_failed; anything unexpected is logged and
// reads as internal_error.
func Present(ctx context.Context, err error, log *slog.Logger) *gqlerror.Error {
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	var ae *apperr.Error
	switch {
	case errors.As(err, &ae):
		if ae.Status() >= 500 {
			log.ErrorContext(ctx, "GraphQL resolver failed", "error", err)
		}
	case gqlErr.Err == nil:
		// Produced by gqlgen itself: parsing, validation, argument coercion.
		ae = &apperr.Error{Code: apperr.ValidationFailed, Message: gqlErr.Message}
	default:
		log.ErrorContext(ctx, "GraphQL resolver failed", "error", err)
		ae = apperr.From(err)
	}
	gqlErr.Message = ae.Message
	gqlErr.Extensions = extensions(ae)
	return gqlErr
}

// WriteError answers a GraphQL request that was refused before execution
// (authentication, limits) with a GraphQL-shaped body and err's HTTP status.
func WriteError(w http.ResponseWriter, err error) {
	ae := apperr.From(err)
	ext := extensions(ae)
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ae.Status())
	_ = json.NewEncoder(w).Encode(map[string]any{
		"errors": []map[string]any{{"message": ae.Message, "extensions": ext}},
		"data":   nil,
	})
}

// extensions are the fields every GraphQL error carries.
func extensions(ae *apperr.Error) map[string]any {
	ext := map[string]any{"code": string(ae.Code), "status": ae.Status()}
	if len(ae.Details) > 0 {
		ext["details"] = ae.Details
	}
	if ae.RetryAfter > 0 {
		ext["retryAfter"] = ae.RetryAfter
	}
	return ext
}
