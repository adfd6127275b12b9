package observe

import "context"

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
