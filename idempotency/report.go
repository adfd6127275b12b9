package idempotency

import "context"

// Report tells the API layer what happened to the key of one request, so
// it can set the Idempotent-Replayed header.
type Report struct {
	// Replayed is true when the answer is a saved one.
	Replayed bool
}

type reportKey struct{}

// WithReport returns a context carrying a fresh Report.
func WithReport(ctx context.Context) (context.Context, *Report) {
	r := &Report{}
	return context.WithValue(ctx, reportKey{}, r), r
}

// MarkReplayed records on ctx's Report, if any, that a saved answer is sent.
func MarkReplayed(ctx context.Context) {
	if r, ok := ctx.Value(reportKey{}).(*Report); ok {
		r.Replayed = true
	}
}
