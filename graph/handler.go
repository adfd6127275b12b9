package graph

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode/utf8"

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

// NewHandler returns the /graphql HTTP handler over cfg (the resolvers and
// their complexity estimates): GraphQL
// over HTTP (httpTransport: POST, GET for queries; OPTIONS), subscriptions
// over WebSocket (live), a parsed-query cache, introspection on, depth and
// complexity limits, automatic persisted queries, each kind of key held
// to its own fields (keyFields), errors shaped by Present and panics
// turned into internal_error, plus any further extensions.
func NewHandler(cfg Config, log *slog.Logger, limits DocumentLimits, live Live, exts ...graphql.HandlerExtension) http.Handler {
	srv := handler.New(NewExecutableSchema(cfg))
	if live.Hub != nil {
		srv.AddTransport(live.transport(log))
	}
	// Before Options, which would answer HEAD 405; it leaves OPTIONS to it.
	srv.AddTransport(httpTransport{log: log})
	srv.AddTransport(transport.Options{})
	// A parsed document is charged 40 times its text, twice what
	// TestParsedQueryCost measures for a nested query, to err on the safe
	// side.
	// Kept from a text's second sighting on (secondSight).
	srv.SetQueryCache(newSecondSight(newBoundedCache(QueryCacheBytes, func(q string, _ *ast.QueryDocument) int { return 40 * len(q) })))
	// gqlparser's rules, with a linear overlapping-fields rule and at most
	// MaxErrors errors a document.
	srv.SetValidationRulesFn(validationRules)
	srv.Use(extension.Introspection{})
	srv.Use(extension.FixedComplexityLimit(MaxComplexity))
	srv.Use(depthLimit{max: MaxDepth})
	// Automatic persisted queries: clients may send a query's hash alone once
	// the query is known. The cache is per instance; a miss asks the client
	// for the full query, which the APQ protocol handles. Only documents
	// that validated are kept.
	srv.Use(newPersistedQueries(QueryCacheBytes))
	// After APQ has filled in the text, before gqlgen parses it.
	srv.Use(documentGuard{limits: limits})
	srv.Use(liveOperations{admit: live.Admit, log: log})
	srv.Use(keyFields{})
	srv.Use(answerLimits{})
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
	// Four operations a core (eight at least), so that operations waiting
	// on the database leave the cores to others; for one account (or one
	// scanner key), half the cores' worth at a time. An operation is CPU
	// work while it parses, validates and shapes its answer: an account
	// that sends large documents back to back, within its request limit,
	// keeps at most half the cores busy, and every other tenant finds the
	// rest. (With four a core per account, one account's documents kept
	// every core busy and another tenant's latency rose badly in the soak
	// bench: docs/benchmarks.md.)
	slots := max(8, 4*runtime.GOMAXPROCS(0))
	operations := readBody(bodyTimeout, admit(slots, max(1, runtime.GOMAXPROCS(0)/2), srv))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsWebSocket(r) {
			if r.ContentLength != 0 {
				// An upgrade has no body; one announced and never sent
				// would hold the connection past the read timeout.
				WriteError(w, r, apperr.Validation(apperr.Details{"body": {"a WebSocket upgrade has no body"}}))
				return
			}
			// A socket lives for minutes or hours: it must not hold an
			// execution slot. Its subscriptions are bounded by live.Hub.
			srv.ServeHTTP(w, r)
			return
		}
		operations.ServeHTTP(w, r)
	})
}

// Present shapes every GraphQL error: extensions.code is the REST error code
// (details and retryAfter where it has them). Query syntax and validation
// errors are validation_failed; a persisted-query miss keeps gqlgen's
// PERSISTED_QUERY_NOT_FOUND, which Apollo clients match on; anything
// unexpected is logged and reads as internal_error. extensions.status is
// the transport's to set (httpTransport, WriteError): it is the status
// actually sent, which an error resolved inside a 200 answer does not have.
func Present(ctx context.Context, err error, log *slog.Logger) *gqlerror.Error {
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	if code, _ := gqlErr.Extensions["code"].(string); code == persistedQueryMissing && gqlErr.Err == nil {
		return gqlErr
	}
	var ae *apperr.Error
	switch {
	case errors.As(err, &ae):
		if ae.Status() >= 500 {
			log.ErrorContext(ctx, "GraphQL resolver failed", "error", err)
		}
	case gqlErr.Err == nil && strings.HasPrefix(gqlErr.Message, undecodable):
		// gqlgen's message quotes the whole body back: a megabyte sent is
		// more than a megabyte answered.
		ae = &apperr.Error{Code: apperr.ValidationFailed,
			Message: `The request body is not a JSON GraphQL request such as {"query": "…", "variables": {…}}.`}
	case errors.Is(err, context.Canceled):
		// The client left: nobody reads this answer, and it is no failure.
		ae = apperr.From(err)
	case gqlErr.Err == nil:
		// Produced by gqlgen itself: parsing, validation, argument coercion.
		ae = &apperr.Error{Code: apperr.ValidationFailed, Message: clip(gqlErr.Message)}
	default:
		log.ErrorContext(ctx, "GraphQL resolver failed", "error", err)
		ae = apperr.From(err)
	}
	gqlErr.Message = ae.Message
	gqlErr.Extensions = extensions(ae)
	return gqlErr
}

// maxMessage bounds gqlgen's own messages, which quote names and values
// of the document: a field named with 900 KB must not be answered with
// 900 KB.
const maxMessage = 256

func clip(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// undecodable starts the message of gqlgen's POST transport for a body
// that is not a JSON GraphQL request.
const undecodable = "json request body could not be decoded"

// WriteError answers a GraphQL request that was refused before execution
// (authentication, limits, an unreadable body) with err's HTTP status, as
// extensions.status too, and Retry-After when err has one; the body is
// errors without data, in the media type the client accepts.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	ae := apperr.From(err)
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	writeRequestErrors(w, responseType(r.Header.Get("Accept")), ae.Status(),
		gqlerror.List{{Message: ae.Message, Extensions: extensions(ae)}})
}

// extensions are the fields every GraphQL error carries.
func extensions(ae *apperr.Error) map[string]any {
	ext := map[string]any{"code": string(ae.Code)}
	if len(ae.Details) > 0 {
		ext["details"] = ae.Details
	}
	if ae.RetryAfter > 0 {
		ext["retryAfter"] = ae.RetryAfter
	}
	return ext
}
