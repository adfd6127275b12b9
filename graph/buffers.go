package graph

import (
	"bytes"
	"context"
	"errors"
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
// one, as for subscriptions, or a later response of the same operation),
// bounded by the answer's limit when ctx carries one (answerLimits).
func responseBuffer(ctx context.Context) *answerBuffer {
	b := &answerBuffer{limit: answerLimitOf(ctx)}
	if lent, ok := ctx.Value(bufferKey{}).(*lentBuffer); ok && !lent.taken && lent.buf != nil {
		lent.taken = true
		b.buf = lent.buf
	} else {
		b.buf = new(bytes.Buffer)
	}
	return b
}

// answerBuffer is an answer being written. Past its limit's bytes it
// takes nothing more and marks the limit exceeded, so an answer too large
// to send is never held whole in memory either.
type answerBuffer struct {
	buf   *bytes.Buffer
	limit *answerLimit // nil: unbounded
}

var errAnswerTooLarge = errors.New("graph: the answer is over its limit")

func (b *answerBuffer) room(n int) bool {
	if b.limit == nil {
		return true
	}
	if b.limit.exceeded || b.buf.Len()+n > b.limit.max {
		b.limit.exceeded = true
		return false
	}
	return true
}

// Write implements io.Writer.
func (b *answerBuffer) Write(p []byte) (int, error) {
	if !b.room(len(p)) {
		return 0, errAnswerTooLarge
	}
	return b.buf.Write(p)
}

// WriteString implements io.StringWriter, which io.WriteString uses.
func (b *answerBuffer) WriteString(s string) (int, error) {
	if !b.room(len(s)) {
		return 0, errAnswerTooLarge
	}
	return b.buf.WriteString(s)
}

// AvailableBuffer is bytes.Buffer's: intValue appends digits to it
// rather than allocating them.
func (b *answerBuffer) AvailableBuffer() []byte { return b.buf.AvailableBuffer() }

// Bytes returns the answer written, nil when it was cut.
func (b *answerBuffer) Bytes() []byte {
	if b.limit != nil && b.limit.exceeded {
		return nil
	}
	return b.buf.Bytes()
}
