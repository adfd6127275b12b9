package ticketpage

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/ticketdoc/ticketdoctest"
	"github.com/stretchr/testify/require"
)

// mustHTML renders o's page under token.
func mustHTML(tb testing.TB, o *ticketdoc.Order, token string) string {
	tb.Helper()
	var buf bytes.Buffer
	require.NoError(tb, RenderHTML(&buf, o, token, 1))
	return buf.String()
}

// cards splits a page into its tickets' cards, in order.
func cards(tb testing.TB, page string) []string {
	tb.Helper()
	parts := strings.Split(page, `<li class="ticket`)[1:]
	for i, p := range parts {
		parts[i] = p[:strings.Index(p, "</li>")]
	}
	return parts
}

func TestRenderHTML(t *testing.T) {
	t.Parallel()
	t.Run("TestOrder", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, true)
		page := mustHTML(t, o, "tok_AbC-123")
		require.Contains(t, page, "<title>Tickets · Café Ñoño — New Year’s Eve Gala</title>")
		require.Contains(t, page, `class="banner"`, "a test order says so at the top")
		require.Contains(t, page, `href="/tickets/tok_AbC-123/tickets.pdf"`, "the PDF by the token's absolute path")
		require.Contains(t, page, "3 tickets · Order ORD-7QK2M9")
		cs := cards(t, page)
		require.Len(t, cs, 3)
		for i, c := range cs {
			tk := o.Tickets[i]
			require.Contains(t, c, "Test ticket — not valid for entry", "ticket %d", i+1)
			require.Contains(t, c, "Café Ñoño — New Year’s Eve Gala")
			require.Contains(t, c, tk.TicketName)
			require.Contains(t, c, []string{"1 of 3", "2 of 3", "3 of 3"}[i])
			require.Contains(t, c, "Thu, 24 Dec 2026")
			require.Contains(t, c, "6:00 PM – 11:00 PM GMT (Africa/Accra)")
			require.Contains(t, c, "National Theatre")
			require.Contains(t, c, "South Liberia Road\nAccra, Ghana")
			require.Contains(t, c, "<span>"+strings.Join(ticketdoc.Groups(tk.Code), "</span> <span>")+"</span>", "the code in groups of four")
			shown := regexp.MustCompile(`(?s)<p class="code"[^>]*>(.*?)</p>`).FindStringSubmatch(c)[1]
			require.Equal(t, tk.Code, strings.NewReplacer("<span>", "", "</span>", "", " ", "").Replace(shown), "the code, and only it")
		}
		require.Contains(t, cs[0], `<p class="status status-valid">Valid</p>`)
		require.Contains(t, cs[1], `<p class="status status-checked_in">Checked in</p>`)
		require.Contains(t, cs[2], `<p class="status status-void">VOID</p>`)
		require.Contains(t, cs[2], `<p class="void" aria-hidden="true">VOID</p>`)
		for i, c := range cs[:2] {
			require.Equal(t, 1, strings.Count(c, `<svg class="qr"`), "ticket %d has its QR code", i+1)
			svg := regexp.MustCompile(`<svg class="qr".*?</svg>`).FindString(c)
			require.Equal(t, o.Tickets[i].Code, ticketdoctest.Decode(t, ticketdoctest.Raster(ticketdoctest.FromSVG(t, svg), 4)), "the page's QR code reads as the code")
		}
		require.NotContains(t, cs[2], "<svg", "a void ticket has no QR code")
		require.Equal(t, 2, strings.Count(page, `<svg class="qr"`))
		noOtherHost(t, page)
		require.NotRegexp(t, `(?i)(https?|ftp|ws):`, page, "no address of any site, ours included")
	})
	t.Run("LiveOrder", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, false)
		o.Venue, o.Address = "", "Should not show"
		o.Tickets = o.Tickets[:1]
		page := mustHTML(t, o, "tok")
		require.NotContains(t, page, "not valid for entry")
		require.NotContains(t, page, `class="banner"`)
		require.Contains(t, page, "1 ticket · Order")
		require.Contains(t, page, "<dd>Online</dd>", "no venue reads Online")
		require.NotContains(t, page, "Should not show")
		require.Contains(t, page, o.Tickets[0].Code[:4])
		noOtherHost(t, page)
		require.NotRegexp(t, `(?i)(https?|ftp|ws):`, page, "no address of any site, ours included")
	})
	t.Run("Refunds", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, false)
		plain := mustHTML(t, o, "tok")
		require.NotContains(t, plain, `class="refunds"`, "no refund, no section")
		at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
		o.Refunds = []ticketdoc.Refund{
			{Amount: "GHS 120.00", Status: "succeeded", Tickets: 1, At: at},
			{Amount: "GHS 10.00", Status: "pending", At: at},
			{Amount: "GHS 5.00", Status: "failed", Tickets: 2, At: at},
		}
		page := mustHTML(t, o, "tok")
		section := page[strings.Index(page, `<section class="refunds"`):]
		section = section[:strings.Index(section, "</section>")]
		items := strings.Split(section, "<li>")[1:]
		require.Len(t, items, 3, "one line per refund, oldest first")
		require.Contains(t, items[0], "GHS 120.00")
		require.Contains(t, items[0], "1 ticket cancelled · 29 Nov 2026")
		require.Contains(t, items[0], `<span class="rstatus rstatus-succeeded">Refunded</span>`)
		require.Contains(t, items[1], "No ticket cancelled")
		require.Contains(t, items[1], "On its way back to you")
		require.Contains(t, items[2], "2 tickets cancelled")
		require.Contains(t, items[2], "the seller will contact you")
		noOtherHost(t, page)
	})
	t.Run("Escaped", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, false)
		o.EventName = `<script>alert("x")</script><img src=https://evil.example/x.png>`
		o.Venue, o.Address = `"><svg onload=alert(1)>`, `</style><link rel=stylesheet href=//evil.example/a.css>`
		o.Tickets[0].TicketName = `<b onmouseover=alert(1)>VIP</b>`
		o.Tickets[0].Status = `valid" onclick="alert(1)`
		page := mustHTML(t, o, "tok")
		for _, s := range []string{"<script", "<img", "<svg onload", "<link rel=stylesheet", "<b ", `" onclick="`} {
			require.NotContains(t, page, s)
		}
		require.Contains(t, page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;")
		require.Contains(t, page, "&lt;b onmouseover=alert(1)&gt;VIP&lt;/b&gt;")
		noOtherHost(t, page)
	})
	t.Run("ErrNoTickets", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, false)
		o.Tickets = nil
		require.ErrorIs(t, RenderHTML(&bytes.Buffer{}, o, "tok", 1), ticketdoc.ErrNoTickets)
	})
}

// noOtherHost checks a page loads nothing and links nowhere else: no
// element that loads, no URL in its style, and every src or href of its
// tags a path on its own site (or the data: favicon). Text is not looked
// at: an escaped hostile name may read "https://…" harmlessly.
func noOtherHost(tb testing.TB, page string) {
	tb.Helper()
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(page)
	require.NotNil(tb, style)
	require.NotContains(tb, style[1], "url(")
	require.NotContains(tb, style[1], "@import")
	tags := regexp.MustCompile(`<[a-zA-Z][^>]*>`).FindAllString(page, -1)
	require.NotEmpty(tb, tags)
	for _, tag := range tags {
		require.NotRegexp(tb, `(?i)^<(script|iframe|object|embed|img|link rel="?stylesheet|base|form|meta http-equiv)\b`, tag)
		require.NotRegexp(tb, `(?i)\s(srcset|action|formaction|xlink:href|style)\s*=`, tag)
		for _, m := range regexp.MustCompile(`(?i)\s(?:src|href)\s*=\s*("[^"]*"|'[^']*'|[^\s>]*)`).FindAllStringSubmatch(tag, -1) {
			v := strings.Trim(m[1], `"'`)
			require.True(tb, v == "data:," || strings.HasPrefix(v, "/tickets/"), "%s: link %q", tag, v)
		}
	}
}
