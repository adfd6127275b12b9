package mailpage_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/mailpage"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// page is an answer of the mailbox pages.
type page struct {
	Status int
	Header http.Header
	Body   string
}

func get(t *testing.T, base, path string) page {
	t.Helper()
	res, err := http.Get(base + path)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return page{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

// hostile is an HTML part that would run script, load from other hosts
// and break out of its attribute if it were not contained.
const hostile = `<style>p { color: rgb(19, 122, 75) }</style>` +
	`<p id="hello" style="font-weight: 700">Hello "Ama" & co</p>` +
	`<script>document.body.dataset.ran = "yes"</script>` +
	`<img id="tracker" src="http://tracker.example/pixel.png" onerror="document.body.dataset.ran = 'img'">` +
	`<a id="tickets" href="https://boxoffice.example/tickets/tok_1">Your tickets</a>`

// checkPolicy checks the headers every mailbox page carries: a policy
// that runs no script and loads nothing, no caching, no framing.
func checkPolicy(t *testing.T, p page) {
	t.Helper()
	csp := p.Header.Get("Content-Security-Policy")
	require.True(t, strings.HasPrefix(csp, "default-src 'none'; "), csp)
	require.NotContains(t, csp, "script-src", "no script runs")
	require.NotRegexp(t, `(^|; )(default|img|style|style-src-elem|font|connect|frame)-src[^;]*(https?:|\*)`, csp, "nothing from another host")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.Equal(t, "no-store", p.Header.Get("Cache-Control"))
	require.Equal(t, "nosniff", p.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "DENY", p.Header.Get("X-Frame-Options"))
	require.Equal(t, "text/html; charset=utf-8", p.Header.Get("Content-Type"))
}

func TestPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		box := &mail.Mailbox{DB: db}
		r := chi.NewRouter()
		(&mailpage.Handler{Mailbox: box, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).Routes(r)
		srv := httptest.NewServer(r)
		t.Cleanup(srv.Close)

		t.Run("OKEmpty", func(t *testing.T) {
			p := get(t, srv.URL, "/mail")
			require.Equal(t, http.StatusOK, p.Status)
			checkPolicy(t, p)
			require.Contains(t, p.Body, "No mail yet.")
		})

		order := storetest.MustOrder(t, db, storetest.MustApp(t, db), storetest.MustCatalog(t, db, nil), "ord_pages")
		at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
		pdf := []byte("%PDF-1.7\n\x00\x01\x02\xff binary")
		send := func(m mail.Message, at time.Time) int64 {
			t.Helper()
			require.NoError(t, (&mail.Mailbox{DB: db, Now: func() time.Time { return at }}).Send(ctx, m))
			recent, err := box.Recent(ctx, 1)
			require.NoError(t, err)
			return recent[0].ID
		}
		ticket := send(mail.Message{From: mail.DefaultFrom, To: "Ama <ama@example.com>", Subject: "Your tickets for Highlife Night",
			Text: "Hello Ama,\n<b>not bold</b>\nhttps://boxoffice.example/tickets/tok_1", HTML: hostile, OrderID: order.ID,
			Attachments: []mail.Attachment{{Name: "tickets ord_pages.pdf", ContentType: "application/pdf", Data: pdf}},
		}, at)
		evil := send(mail.Message{From: mail.DefaultFrom, To: "kofi@example.com", Subject: `<script>alert("x")</script> & "quotes"`,
			Text: "plain only"}, at.Add(time.Minute))

		t.Run("OKList", func(t *testing.T) {
			p := get(t, srv.URL, "/mail")
			require.Equal(t, http.StatusOK, p.Status)
			checkPolicy(t, p)
			require.NotContains(t, p.Body, "<script>alert", "a subject is text")
			require.Contains(t, p.Body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#34;quotes&#34;")
			first := strings.Index(p.Body, fmt.Sprintf(`href="/mail/%d"`, evil))
			second := strings.Index(p.Body, fmt.Sprintf(`href="/mail/%d"`, ticket))
			require.True(t, first > 0 && second > first, "newest first")
			require.Contains(t, p.Body, "To Ama &lt;ama@example.com&gt; · <time datetime=\"2026-12-24T18:00:00Z\">2026-12-24 18:00:00 UTC</time> · ord_pages")
			require.Contains(t, p.Body, `name="viewport" content="width=device-width, initial-scale=1"`)
		})

		t.Run("OKMessage", func(t *testing.T) {
			p := get(t, srv.URL, fmt.Sprintf("/mail/%d", ticket))
			require.Equal(t, http.StatusOK, p.Status)
			checkPolicy(t, p)
			csp := p.Header.Get("Content-Security-Policy")
			require.Contains(t, csp, "style-src-elem 'unsafe-inline'", "the message's own look")
			require.Contains(t, csp, "img-src data:;")
			require.Contains(t, csp, "form-action 'none'")

			// One frame, sandboxed: no allow-scripts, no allow-same-origin.
			frames := regexp.MustCompile(`<iframe[^>]*>`).FindAllString(p.Body, -1)
			require.Len(t, frames, 1)
			require.Contains(t, frames[0], `sandbox="allow-popups allow-popups-to-escape-sandbox"`)
			srcdoc := regexp.MustCompile(`srcdoc="([^"]*)"`).FindStringSubmatch(frames[0])
			require.NotNil(t, srcdoc, "the HTML part is one attribute value: %s", frames[0])
			require.True(t, strings.HasSuffix(html.UnescapeString(srcdoc[1]), hostile), "the part, exactly, after the frame's head")
			require.Contains(t, html.UnescapeString(srcdoc[1]), `<base target="_blank">`)
			require.NotContains(t, p.Body, "<script", "no script element outside the attribute")

			require.Contains(t, p.Body, "<h1>Your tickets for Highlife Night</h1>")
			require.Contains(t, p.Body, "<dt>To</dt><dd>&#34;Ama&#34; &lt;ama@example.com&gt;</dd>", "as the message has it")
			require.Contains(t, p.Body, "<dt>Date</dt><dd>Thu, 24 Dec 2026 18:00:00 &#43;0000</dd>")
			require.Regexp(t, `<dt>Message-Id</dt><dd>&lt;[a-z2-7]{26}@localhost&gt;</dd>`, p.Body)
			require.Contains(t, p.Body, "<dt>Order</dt><dd>ord_pages</dd>")
			require.Contains(t, p.Body, "<pre>Hello Ama,\n&lt;b&gt;not bold&lt;/b&gt;\nhttps://boxoffice.example/tickets/tok_1</pre>")
			require.Contains(t, p.Body, fmt.Sprintf(`<a href="/mail/%d/attachments/1" download>tickets ord_pages.pdf</a> <span class="small">application/pdf, 20 bytes</span>`, ticket))
		})

		t.Run("OKMessageTextOnly", func(t *testing.T) {
			p := get(t, srv.URL, fmt.Sprintf("/mail/%d", evil))
			require.Equal(t, http.StatusOK, p.Status)
			require.NotContains(t, p.Body, "<iframe")
			require.NotContains(t, p.Body, "Attachments")
			require.NotContains(t, p.Body, "<script>alert")
			require.Contains(t, p.Body, "<title>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#34;quotes&#34; · Mailbox</title>")
		})

		t.Run("OKAttachment", func(t *testing.T) {
			p := get(t, srv.URL, fmt.Sprintf("/mail/%d/attachments/1", ticket))
			require.Equal(t, http.StatusOK, p.Status)
			require.Equal(t, string(pdf), p.Body)
			require.Equal(t, "application/pdf", p.Header.Get("Content-Type"))
			require.Equal(t, `attachment; filename="tickets ord_pages.pdf"`, p.Header.Get("Content-Disposition"))
			require.Equal(t, "default-src 'none'; sandbox", p.Header.Get("Content-Security-Policy"))
			require.Equal(t, "nosniff", p.Header.Get("X-Content-Type-Options"))
			require.Equal(t, "no-store", p.Header.Get("Cache-Control"))
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			for _, path := range []string{
				"/mail/999999", "/mail/0", "/mail/abc", "/mail/-1",
				fmt.Sprintf("/mail/%d/attachments/0", ticket), fmt.Sprintf("/mail/%d/attachments/2", ticket),
				fmt.Sprintf("/mail/%d/attachments/x", ticket), fmt.Sprintf("/mail/%d/attachments/1", evil),
				"/mail/999999/attachments/1",
			} {
				p := get(t, srv.URL, path)
				require.Equal(t, http.StatusNotFound, p.Status, path)
				require.Equal(t, "text/html; charset=utf-8", p.Header.Get("Content-Type"), path)
				require.Contains(t, p.Body, "<title>Not found</title>", path)
			}
			require.Contains(t, get(t, srv.URL, "/mail/999999").Body, "There is no mail message 999999.")
		})
	})
}
