package server

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// compressMinSize is the smallest answer compressed: below about a packet,
// gzip's header and the CPU cost buy nothing.
const compressMinSize = 1024

// gzipWrapper gzips answers for clients that accept it (gzhttp: Vary:
// Accept-Encoding, no compression of already compressed types such as
// images, nothing below compressMinSize).
var gzipWrapper = func() func(http.Handler) http.HandlerFunc {
	w, err := gzhttp.NewWrapper(gzhttp.MinSize(compressMinSize),
		gzhttp.ExceptContentTypes([]string{"text/event-stream"}))
	if err != nil {
		panic(err) // constant options: a mistake here is the program's
	}
	return w
}()

// Compress gzips JSON, HTML, scripts and styles for clients that send
// Accept-Encoding: gzip (the reference page's script is 4.3 MB raw). The
// streams pass by untouched: a WebSocket upgrade (GraphQL subscriptions)
// and Server-Sent Events (boxoffice listen), whose events must reach the
// client as they are written, not when a compressor's block fills.
func Compress(next http.Handler) http.Handler {
	gz := gzipWrapper(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			next.ServeHTTP(w, r)
			return
		}
		gz.ServeHTTP(w, r)
	})
}
