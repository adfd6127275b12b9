package observe

import (
	"context"
	"crypto/rand"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"
)

// Request is what a request's log line says about its caller; the
// authentication layer fills it in, the logging middleware reads it.
type Request struct {
	AppID       int64
	Environment string
}

type requestKey struct{}

// WithRequest returns a context carrying a fresh Request.
func WithRequest(ctx context.Context) (context.Context, *Request) {
	r := &Request{}
	return context.WithValue(ctx, requestKey{}, r), r
}

// SetCaller records the authenticated app of the request ctx belongs to.
func SetCaller(ctx context.Context, appID int64, env string) {
	if r, ok := ctx.Value(requestKey{}).(*Request); ok {
		r.AppID, r.Environment = appID, env
	}
}

// MaxRequestIDLen is the longest X-Request-Id taken from a caller.
const MaxRequestIDLen = 128

// WithRequestID returns ctx carrying the id r's log line carries (read
// with chi's middleware.GetReqID): the caller's X-Request-Id when it is at
// most MaxRequestIDLen characters of [A-Za-z0-9._-], so a proxy's id links
// the lines up; a fresh random id otherwise, so a client cannot write
// megabytes or control characters into the logs.
func WithRequestID(ctx context.Context, r *http.Request) context.Context {
	id := r.Header.Get(middleware.RequestIDHeader)
	if !validRequestID(id) {
		id = rand.Text()
	}
	return context.WithValue(ctx, middleware.RequestIDKey, id)
}

func validRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
