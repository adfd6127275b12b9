package server

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/boxoffice/boxoffice/apperr"
)

// bodyWatch records that a request's body failed to arrive: a read that
// ended in an error other than its end (the read timeout of a client that
// stalled or trickled, a connection the client cut).
type bodyWatch struct {
	io.ReadCloser
	failed atomic.Bool
}

func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.failed.Store(true)
	}
	return n, err
}

// stallWriter answers 408 Request Timeout, and closes the connection,
// instead of whatever a handler makes of a body that never arrived: its
// read failed, so the request's context is cancelled too, and a handler
// would otherwise answer a validation error about a half body, or the
// client_closed_request that apperr gives a cancelled context, whose 499
// belongs in the logs only. A 499 is never sent by any route.
type stallWriter struct {
	http.ResponseWriter
	body  *bodyWatch
	wrote bool
	cut   bool
}

// stallMessage is the body of the 408.
const stallMessage = "The request body did not arrive in time.\n"

func (w *stallWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if !w.body.failed.Load() && code != apperr.StatusClientClosedRequest {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.cut = true
	h := w.Header()
	clear(h)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(stallMessage)))
	h.Set("Connection", "close")
	w.ResponseWriter.WriteHeader(http.StatusRequestTimeout)
	_, _ = io.WriteString(w.ResponseWriter, stallMessage)
}

func (w *stallWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.cut {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes a flush on unless the answer was cut.
func (w *stallWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.cut {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// watchBody gives a request that carries a body a bodyWatch and its
// writer a stallWriter. A request without one (GET, a WebSocket upgrade)
// keeps its writer as it is.
func watchBody(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return w, r
	}
	b := &bodyWatch{ReadCloser: r.Body}
	r.Body = b
	return &stallWriter{ResponseWriter: w, body: b}, r
}
