package graph

import (
	"bytes"
	"context"
	"sync"
)

// A query's answer is written by gqlgen into a buffer that grows by
// doubling: about 250 KB allocated and copied for a 90 KB catalog answer,
// a tenth of what such a request allocates. The HTTP transport lends the
// executor a buffer from a pool instead (through the context) and takes it
// back once the answer is written; `make generate` rewrites the generated
// executor to write into it (graph/sequential).

// maxPooledBuffer bounds the buffers kept for reuse, so one huge answer
// does not stay allocated for ever.
const maxPooledBuffer = 1 << 20

var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

type bufferKey struct{}

// lentBuffer is a pooled buffer lent to one operation's first response.
type lentBuffer struct {
	buf   *bytes.Buffer
	taken bool
}

// withResponseBuffer lends ctx's operation a pooled buffer for its answer;
// release returns it, after which nothing may read the answer's Data.
func withResponseBuffer(ctx context.Context) (_ context.Context, release func()) {
	lent := &lentBuffer{buf: responseBuffers.Get().(*bytes.Buffer)}
	return context.WithValue(ctx, bufferKey{}, lent), func() {
		if lent.buf.Cap() <= maxPooledBuffer {
			lent.buf.Reset()
			responseBuffers.Put(lent.buf)
		}
		lent.buf = nil
	}
}

// responseBuffer returns the buffer to write an answer into: the one lent
// by the transport the first time, a new one otherwise (no transport lent
// one, as for subscriptions, or a later response of the same operation).
func responseBuffer(ctx context.Context) *bytes.Buffer {
	if lent, ok := ctx.Value(bufferKey{}).(*lentBuffer); ok && !lent.taken && lent.buf != nil {
		lent.taken = true
		return lent.buf
	}
	return new(bytes.Buffer)
}
