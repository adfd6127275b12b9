// Package ticketpage shows a buyer the tickets of an order: the page at
// tickets_url with a QR code per ticket (payload exactly the ticket's
// code), and the same tickets as a PDF, one ticket per page
// (spec/fulfilment.md section 2), both drawn by ticketdoc. It renders what
// it is given; loading an order by its page token is the caller's
// (Handler.Load).
package ticketpage

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
)

// Handler serves the buyer's ticket page and its PDF.
type Handler struct {
	// Load returns the order whose ticket page token is token, with its
	// tickets by position. Errors: ticketdoc.ErrNotFound for a token that
	// names no order; any other error is answered 500 and logged, so it
	// must not carry the token.
	Load func(ctx context.Context, token string) (*ticketdoc.Order, error)
	Log  *slog.Logger
	// PDFs renders each version of an order's PDF once and keeps it; nil
	// is a cache of the default size, made by Routes.
	PDFs *ticketdoc.PDFCache
	// Allow counts a request against its client's budget before anything
	// is loaded; an apperr.RateLimitExceeded answers 429 with Retry-After.
	// Nil allows every request.
	Allow func(ctx context.Context) error
}

// Routes registers GET and HEAD of /tickets/{token} (the page) and
// /tickets/{token}/tickets.pdf on r; other methods are answered 405 by
// the handler itself, so the answer is an HTML page with the same headers.
func (h *Handler) Routes(r chi.Router) {
	if h.PDFs == nil {
		h.PDFs = &ticketdoc.PDFCache{}
	}
	r.HandleFunc("/tickets/{token}", h.page)
	r.HandleFunc("/tickets/{token}/tickets.pdf", h.pdf)
}

// The answers' messages.
var (
	notFoundPage = renderMessage("These tickets were not found",
		"Check that you opened the whole link from your ticket email or from the seller. If it still does not work, contact the seller.")
	failedPage = renderMessage("Something went wrong",
		"Your tickets could not be shown just now. Please try again in a moment.")
	notAllowedPage = renderMessage("Method not allowed", "This address answers GET and HEAD only.")
	tooManyPage    = renderMessage("Too many requests",
		"This address opened tickets too often just now. Wait a minute and try again.")
)

// private sets the headers every answer carries: the page's policy, and no
// caching, no Referer and no indexing, since the address alone hands over
// the tickets.
func private(h http.Header) {
	webpage.SetHeaders(h, pageCSP)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex")
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	o, ok := h.load(w, r, token)
	if !ok {
		return
	}
	page, ok := pageNumber(r.URL.Query().Get("page"), len(o.Tickets))
	if !ok {
		respond(w, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage)
		return
	}
	var buf bytes.Buffer
	if err := RenderHTML(&buf, o, token, page); err != nil {
		h.fail(w, r, "ticket page", err)
		return
	}
	respond(w, r, http.StatusOK, "text/html; charset=utf-8", buf.Bytes())
}

func (h *Handler) pdf(w http.ResponseWriter, r *http.Request) {
	o, ok := h.load(w, r, chi.URLParam(r, "token"))
	if !ok {
		return
	}
	pdf, err := h.PDFs.PDF(r.Context(), o)
	if err != nil {
		if r.Context().Err() != nil {
			// The client left; the render stopped unless another waits.
			return
		}
		h.fail(w, r, "ticket PDF", err)
		return
	}
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": ticketdoc.PDFName(o)}))
	respond(w, r, http.StatusOK, "application/pdf", pdf)
}

// load answers everything but an order with tickets: a method other than
// GET or HEAD, a client over its budget, a token that cannot be one
// (without asking Load), an unknown token, a failed load.
func (h *Handler) load(w http.ResponseWriter, r *http.Request, token string) (*ticketdoc.Order, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		respond(w, r, http.StatusMethodNotAllowed, "text/html; charset=utf-8", notAllowedPage)
		return nil, false
	}
	if h.Allow != nil {
		if err := h.Allow(r.Context()); err != nil {
			if e := apperr.From(err); e.Code == apperr.RateLimitExceeded {
				w.Header().Set("Retry-After", strconv.Itoa(max(e.RetryAfter, 1)))
				respond(w, r, http.StatusTooManyRequests, "text/html; charset=utf-8", tooManyPage)
				return nil, false
			}
			h.fail(w, r, "ticket page: the client's budget", err)
			return nil, false
		}
	}
	if !ticketdoc.PlausibleToken(token) {
		respond(w, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage)
		return nil, false
	}
	o, err := h.Load(r.Context(), token)
	if errors.Is(err, ticketdoc.ErrNotFound) || err == nil && (o == nil || len(o.Tickets) == 0) {
		respond(w, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage)
		return nil, false
	}
	if err != nil {
		h.fail(w, r, "ticket page: loading the order", err)
		return nil, false
	}
	return o, true
}

// fail logs err and answers 500 without details. Nothing here adds the
// token to the log (Load's errors must not hold it either).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	log := h.Log
	if log == nil {
		log = slog.Default()
	}
	log.ErrorContext(r.Context(), what, "error", err)
	respond(w, r, http.StatusInternalServerError, "text/html; charset=utf-8", failedPage)
}

// respond writes an answer with the private headers; a HEAD gets the
// headers alone.
func respond(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	h := w.Header()
	private(h)
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// pageNumber reads the page query of an order of n tickets: empty is the
// first page; otherwise a decimal number of a page that exists.
func pageNumber(q string, n int) (int, bool) {
	if q == "" {
		return 1, true
	}
	if len(q) > 6 {
		return 0, false
	}
	p, err := strconv.Atoi(q)
	if err != nil || p < 1 || p > Pages(n) || strconv.Itoa(p) != q {
		return 0, false
	}
	return p, true
}
