package graph

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/live"
	"github.com/boxoffice/boxoffice/observe"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Live configures subscriptions: GraphQL over WebSocket at the GraphQL
// endpoint (graphql-transport-ws), the key in connection_init's payload.
type Live struct {
	// Admit authenticates a key, of either kind (keyFields holds each to
	// its own fields), and counts it against the limits, as the HTTP
	// admission does (admission.Gate.Admit): for connection_init and
	// again for every subscribe.
	Admit func(ctx context.Context, key string) (*auth.Principal, error)
	// Hub bounds each app's, and each scanner key's, connections and ends
	// them at shutdown; nil serves no WebSocket.
	Hub *live.Hub
	// InitTimeout bounds how long a connection may take to send
	// connection_init.
	InitTimeout time.Duration
	// PingInterval is how often the server pings; a client that has not
	// answered for twice as long is disconnected.
	PingInterval time.Duration
}

// DefaultLive returns the timeouts serve starts with (Admit and Hub unset).
func DefaultLive() Live {
	return Live{InitTimeout: 10 * time.Second, PingInterval: 30 * time.Second}
}

// IsWebSocket reports whether r asks to open a WebSocket. Such requests
// carry no key (browsers cannot set one); it arrives in connection_init.
func IsWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// initPayloadKeys are where connection_init's payload may carry the key:
// the header's name (what GraphiQL's header editor sends) or apiKey.
var initPayloadKeys = []string{"X-API-Key", "x-api-key", "apiKey"}

// socketKey marks the context of a WebSocket connection's operations.
type socketKey struct{}

// socket is an admitted WebSocket connection.
type socket struct {
	key     string
	release func()
}

// transport is the WebSocket transport: connection_init is admitted
// like a request (failed-auth bucket, key, the app's limit) and counts
// against the app's connections; a refusal closes the socket with
// 4401 (401), 4403 (403), 4429 (429) or 4500 and closeReason as the
// reason.
func (l Live) transport(log *slog.Logger) transport.Websocket {
	return transport.Websocket{
		InitTimeout:      l.InitTimeout,
		PingPongInterval: l.PingInterval,
		InitFunc: func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			key := ""
			for _, k := range initPayloadKeys {
				if key = payload.GetString(k); key != "" {
					break
				}
			}
			p, err := l.Admit(ctx, key)
			if err == nil {
				var conn context.Context
				var release func()
				if conn, release, err = l.Hub.Connect(ctx, liveTenant(p)); err == nil {
					ctx = auth.WithPrincipal(conn, p)
					return context.WithValue(ctx, socketKey{}, &socket{key: key, release: release}), nil, nil
				}
			}
			ae := apperr.From(err)
			if ae.Status() >= 500 {
				log.ErrorContext(ctx, "GraphQL WebSocket connection refused", "error", err)
			}
			reason := closeReason(ae)
			ctx = transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, closeCode(ae.Status())), reason)
			return ctx, nil, refusal(reason)
		},
		CloseFunc: func(ctx context.Context, _ int) {
			if s, ok := ctx.Value(socketKey{}).(*socket); ok {
				s.release()
			}
		},
	}
}

// liveTenant is whom a connection counts against: the app (and its
// account), or a scanner key on its own.
func liveTenant(p *auth.Principal) live.Tenant {
	if p.Scanner() {
		return live.ScannerTenant(p.KeyID)
	}
	return live.TenantOf(p.AccountID, p.AppID, p.Environment)
}

// refusal is the error gqlgen reports for a refused connection: the code
// and message only, never an internal cause.
type refusal string

func (r refusal) Error() string { return string(r) }

// closeCode is the graphql-transport-ws close code of an HTTP status.
func closeCode(status int) int {
	switch {
	case status == http.StatusUnauthorized:
		return 4401
	case status == http.StatusForbidden:
		return 4403
	case status == http.StatusTooManyRequests:
		return 4429
	case status >= 500:
		return 4500
	}
	return 4400
}

// closeReason is "code: message", or "code: retry after N s" when the
// client should wait (its message points at a header a socket does not
// have), cut to the 123 bytes a close frame holds.
func closeReason(ae *apperr.Error) string {
	r := string(ae.Code) + ": " + ae.Message
	if ae.RetryAfter > 0 {
		r = fmt.Sprintf("%s: retry after %d s", ae.Code, ae.RetryAfter)
	}
	if len(r) > 123 {
		r = r[:123]
		for !utf8.ValidString(r) {
			r = r[:len(r)-1]
		}
	}
	return r
}

// liveOperations keeps each operation on its transport (subscriptions over
// WebSocket, queries and mutations over HTTP) and admits every subscribe
// of a WebSocket again, so a key revoked since connection_init starts
// nothing more and every subscribe counts against the app's limit.
type liveOperations struct {
	admit func(ctx context.Context, key string) (*auth.Principal, error)
	log   *slog.Logger
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.OperationInterceptor
} = liveOperations{}

func (liveOperations) ExtensionName() string                   { return "LiveOperations" }
func (liveOperations) Validate(graphql.ExecutableSchema) error { return nil }

func (liveOperations) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	_, ws := ctx.Value(socketKey{}).(*socket)
	sub := oc.Operation.Operation == ast.Subscription
	switch {
	case ws && !sub:
		return gqlerror.Errorf("Over WebSocket only subscriptions run; send queries and mutations to POST /graphql.")
	case !ws && sub:
		return gqlerror.Errorf("Subscriptions run over WebSocket at /graphql (graphql-transport-ws), the key in connection_init's payload.")
	}
	return nil
}

func (o liveOperations) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	s, ok := ctx.Value(socketKey{}).(*socket)
	if !ok {
		return next(ctx)
	}
	// The connection's log line already names its app; subscribes run
	// concurrently, so each gets its own (unlogged) request facts.
	admitCtx, _ := observe.WithRequest(ctx)
	p, err := o.admit(admitCtx, s.key)
	if err != nil {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{Present(ctx, err, o.log)}})
	}
	return next(auth.WithPrincipal(ctx, p))
}
