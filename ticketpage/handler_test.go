package ticketpage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/ticketdoc/ticketdoctest"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a log's output, written from the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type testBundle struct {
	srv   *httptest.Server
	order *ticketdoc.Order
	big   *ticketdoc.Order
	loads atomic.Int32
	log   *lockedBuffer
	// renders counts PDF renders; a render starts once bigLoads reaches
	// renderAfter, so that many requests for bigToken are in at once.
	renders     atomic.Int32
	bigLoads    atomic.Int32
	renderAfter int32
	// allowed is how many requests the client budget lets through when
	// limited is set.
	allowed atomic.Int32
	limited atomic.Bool
}

const (
	goodToken   = "tok_Good-123"
	brokenToken = "tok_broken"
	emptyToken  = "tok_empty"
	bigToken    = "tok_big"
)

// bigOrder is an order of n tickets.
func bigOrder(t *testing.T, n int) *ticketdoc.Order {
	o := ticketdoctest.NewOrder(t, false)
	o.Reference = "ORD-BIG"
	o.Tickets = nil
	for i := range n {
		o.Tickets = append(o.Tickets, ticketdoc.Ticket{Code: ticketdoctest.NewCode(t, false), TicketName: "Regular",
			Position: i + 1, Total: n, Status: ticketdoc.StatusValid})
	}
	return o
}

// setup serves a Handler on a real server, as the service mounts it on its
// chi router. Load knows goodToken, finds an order without tickets for
// emptyToken, fails for brokenToken, and knows no other.
func setup(t *testing.T) *testBundle {
	t.Helper()
	tb := &testBundle{order: ticketdoctest.NewOrder(t, false), big: bigOrder(t, 120), log: &lockedBuffer{}, renderAfter: 1}
	h := &Handler{
		Load: func(_ context.Context, token string) (*ticketdoc.Order, error) {
			tb.loads.Add(1)
			switch token {
			case goodToken:
				return tb.order, nil
			case bigToken:
				tb.bigLoads.Add(1)
				// A copy, as each load from the database is.
				o := *tb.big
				o.Tickets = append([]ticketdoc.Ticket(nil), tb.big.Tickets...)
				return &o, nil
			case brokenToken:
				return nil, errors.New("database is on fire")
			case emptyToken:
				return &ticketdoc.Order{Reference: "ORD-EMPTY"}, nil
			}
			return nil, ticketdoc.ErrNotFound
		},
		Log: slog.New(slog.NewTextHandler(tb.log, nil)),
		PDFs: &ticketdoc.PDFCache{Render: func(ctx context.Context, w io.Writer, o *ticketdoc.Order) error {
			tb.renders.Add(1)
			for o.Reference == tb.big.Reference && tb.bigLoads.Load() < tb.renderAfter {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				runtime.Gosched()
			}
			return ticketdoc.RenderPDFContext(ctx, w, o)
		}},
		Allow: func(context.Context) error {
			if !tb.limited.Load() {
				return nil
			}
			if tb.allowed.Add(-1) < 0 {
				e := apperr.New(apperr.RateLimitExceeded, "Too many ticket page requests from this address.")
				e.RetryAfter = 42
				return e
			}
			return nil
		},
	}
	r := chi.NewRouter()
	h.Routes(r)
	tb.srv = httptest.NewServer(r)
	t.Cleanup(tb.srv.Close)
	return tb
}

func (tb *testBundle) do(t *testing.T, method, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, tb.srv.URL+path, nil)
	require.NoError(t, err)
	res, err := tb.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var body bytes.Buffer
	_, err = body.ReadFrom(res.Body)
	require.NoError(t, err)
	return res, body.Bytes()
}

// requirePrivate checks the headers every answer carries.
func requirePrivate(t *testing.T, res *http.Response) {
	t.Helper()
	h := res.Header
	require.Equal(t, "no-store", h.Get("Cache-Control"))
	require.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
	require.Equal(t, "noindex", h.Get("X-Robots-Tag"))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	csp := h.Get("Content-Security-Policy")
	require.True(t, strings.HasPrefix(csp, "default-src 'none'; style-src 'sha256-"), csp)
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.NotContains(t, csp, "script-src")
	require.NotContains(t, csp, "unsafe")
}

func TestHandler(t *testing.T) {
	t.Parallel()
	t.Run("Page", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		res, body := tb.do(t, http.MethodGet, ticketdoc.PagePath(goodToken))
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
		requirePrivate(t, res)
		page := string(body)
		require.Contains(t, page, `href="/tickets/`+goodToken+`/tickets.pdf"`)
		for _, tk := range tb.order.Tickets {
			require.Contains(t, page, strings.Join(ticketdoc.Groups(tk.Code), "</span> <span>"))
		}
		// The policy allows exactly the style the page has.
		_, styles := webpage.InlineHashes(page)
		require.Len(t, styles, 1)
		require.Contains(t, res.Header.Get("Content-Security-Policy"), "style-src "+styles[0]+";")

		head, headBody := tb.do(t, http.MethodHead, ticketdoc.PagePath(goodToken))
		require.Equal(t, http.StatusOK, head.StatusCode)
		require.Empty(t, headBody)
		// Not len(body) exactly: a code whose QR masks tie may draw
		// differently on each request (see newQR).
		n, err := strconv.Atoi(head.Header.Get("Content-Length"))
		require.NoError(t, err)
		require.InDelta(t, len(body), n, 500)
		requirePrivate(t, head)
	})
	t.Run("PDF", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		res, body := tb.do(t, http.MethodGet, ticketdoc.PDFPath(goodToken))
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "application/pdf", res.Header.Get("Content-Type"))
		require.Equal(t, `attachment; filename=tickets-ORD-7QK2M9.pdf`, res.Header.Get("Content-Disposition"))
		requirePrivate(t, res)
		require.True(t, bytes.HasPrefix(body, []byte("%PDF-")))
		require.Equal(t, len(tb.order.Tickets), ticketdoctest.PDFPages(body), "one page per ticket")
		require.Equal(t, strconv.Itoa(len(body)), res.Header.Get("Content-Length"))

		head, headBody := tb.do(t, http.MethodHead, ticketdoc.PDFPath(goodToken))
		require.Equal(t, http.StatusOK, head.StatusCode)
		require.Empty(t, headBody)
		require.Equal(t, "application/pdf", head.Header.Get("Content-Type"))
		requirePrivate(t, head)
	})
	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		for _, path := range []string{ticketdoc.PagePath("tok_unknown"), ticketdoc.PDFPath("tok_unknown"), ticketdoc.PagePath(emptyToken), ticketdoc.PDFPath(emptyToken)} {
			res, body := tb.do(t, http.MethodGet, path)
			require.Equal(t, http.StatusNotFound, res.StatusCode, path)
			require.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"), path)
			requirePrivate(t, res)
			require.Contains(t, string(body), "<h1>These tickets were not found</h1>", path)
		}
		require.EqualValues(t, 4, tb.loads.Load())
	})
	t.Run("Implausible", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		for _, path := range []string{
			"/tickets/tok.good", "/tickets/" + strings.Repeat("a", 129), "/tickets/%C3%A9t%C3%A9", "/tickets/a%20b",
			"/tickets/a%00b/tickets.pdf", "/tickets/%2e%2e", "/tickets/tok%2Fx",
		} {
			res, body := tb.do(t, http.MethodGet, path)
			require.Equal(t, http.StatusNotFound, res.StatusCode, path)
			if res.Header.Get("Content-Type") == "text/html; charset=utf-8" {
				requirePrivate(t, res)
				require.Contains(t, string(body), "These tickets were not found", path)
			}
		}
		require.Zero(t, tb.loads.Load(), "a token that cannot be one is not looked up")
		res, _ := tb.do(t, http.MethodGet, ticketdoc.PagePath(strings.Repeat("a", 128)))
		require.Equal(t, http.StatusNotFound, res.StatusCode)
		require.EqualValues(t, 1, tb.loads.Load(), "the longest token is looked up")
	})
	t.Run("Failed", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		for _, path := range []string{ticketdoc.PagePath(brokenToken), ticketdoc.PDFPath(brokenToken)} {
			res, body := tb.do(t, http.MethodGet, path)
			require.Equal(t, http.StatusInternalServerError, res.StatusCode)
			requirePrivate(t, res)
			require.Contains(t, string(body), "<h1>Something went wrong</h1>")
			require.NotContains(t, string(body), "fire", "no details")
		}
		logged := tb.log.String()
		require.Contains(t, logged, "database is on fire")
		require.NotContains(t, logged, brokenToken, "the token is never logged")
	})
	t.Run("MethodNotAllowed", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			for _, path := range []string{ticketdoc.PagePath(goodToken), ticketdoc.PDFPath(goodToken)} {
				res, body := tb.do(t, method, path)
				require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, method)
				require.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
				requirePrivate(t, res)
				require.Contains(t, string(body), "Method not allowed")
			}
		}
		require.Zero(t, tb.loads.Load())
	})
}

// TestLargeOrder: a ticket page shows at most PageSize tickets and links
// every page; the PDF of all of them is rendered once for eight
// concurrent downloads, and again only when the order changes; a client
// over its budget is refused before anything is loaded.
func TestLargeOrder(t *testing.T) {
	t.Parallel()
	ticketIDs := regexp.MustCompile(`<li class="ticket[^"]*" id="ticket-(\d+)"`)
	t.Run("Pages", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		for _, tc := range []struct {
			query       string
			first, last int
		}{{"", 1, 50}, {"?page=1", 1, 50}, {"?page=2", 51, 100}, {"?page=3", 101, 120}} {
			res, body := tb.do(t, http.MethodGet, ticketdoc.PagePath(bigToken)+tc.query)
			require.Equal(t, http.StatusOK, res.StatusCode, tc.query)
			page := string(body)
			ids := ticketIDs.FindAllStringSubmatch(page, -1)
			require.Len(t, ids, tc.last-tc.first+1, tc.query)
			require.Equal(t, strconv.Itoa(tc.first), ids[0][1])
			require.Equal(t, strconv.Itoa(tc.last), ids[len(ids)-1][1])
			require.Contains(t, page, "Tickets "+strconv.Itoa(tc.first)+"–"+strconv.Itoa(tc.last)+" of 120")
			if tc.first > 1 {
				require.Contains(t, page, `<a href="/tickets/`+bigToken+`">1–50</a>`+"\n", "links back to the first page")
			}
			require.Contains(t, page, `<a href="/tickets/`+bigToken+`?page=3"`)
			require.Contains(t, page, `aria-current="page">`+strconv.Itoa(tc.first)+"–"+strconv.Itoa(tc.last)+"</a>")
		}
		for _, q := range []string{"?page=0", "?page=4", "?page=-1", "?page=abc", "?page=02", "?page=99999999999999999999"} {
			res, body := tb.do(t, http.MethodGet, ticketdoc.PagePath(bigToken)+q)
			require.Equal(t, http.StatusNotFound, res.StatusCode, q)
			requirePrivate(t, res)
			require.Contains(t, string(body), "These tickets were not found", q)
		}
		// A small order has one page and no page links.
		_, body := tb.do(t, http.MethodGet, ticketdoc.PagePath(goodToken))
		require.NotContains(t, string(body), `class="pages"`)
		require.Len(t, ticketIDs.FindAllString(string(body), -1), 3)
	})
	t.Run("PDFOnceForEightDownloads", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		tb.renderAfter = 8
		bodies := make([][]byte, 8)
		var wg sync.WaitGroup
		for i := range bodies {
			wg.Go(func() {
				res, body := tb.do(t, http.MethodGet, ticketdoc.PDFPath(bigToken))
				require.Equal(t, http.StatusOK, res.StatusCode)
				bodies[i] = body
			})
		}
		wg.Wait()
		require.EqualValues(t, 1, tb.renders.Load(), "eight downloads, one render")
		require.Equal(t, 120, ticketdoctest.PDFPages(bodies[0]))
		for _, b := range bodies {
			require.Equal(t, bodies[0], b)
		}
		_, again := tb.do(t, http.MethodGet, ticketdoc.PDFPath(bigToken))
		require.Equal(t, bodies[0], again)
		require.EqualValues(t, 1, tb.renders.Load(), "the same version is kept")

		tb.big.Tickets[7].Status = ticketdoc.StatusVoid
		_, changed := tb.do(t, http.MethodGet, ticketdoc.PDFPath(bigToken))
		require.NotEqual(t, bodies[0], changed)
		require.EqualValues(t, 2, tb.renders.Load(), "a changed order is rendered again")
	})
	t.Run("ClientBudget", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		tb.allowed.Store(2)
		tb.limited.Store(true)
		for i, path := range []string{ticketdoc.PagePath(goodToken), ticketdoc.PDFPath(goodToken), ticketdoc.PDFPath(goodToken), ticketdoc.PagePath(bigToken)} {
			res, body := tb.do(t, http.MethodGet, path)
			if i < 2 {
				require.Equal(t, http.StatusOK, res.StatusCode, path)
				continue
			}
			require.Equal(t, http.StatusTooManyRequests, res.StatusCode, path)
			require.Equal(t, "42", res.Header.Get("Retry-After"))
			requirePrivate(t, res)
			require.Contains(t, string(body), "Too many requests")
		}
		require.EqualValues(t, 2, tb.loads.Load(), "a refused request loads nothing")
	})
}
