package ticketpage

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strconv"

	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/webpage"
)

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("tickets").Parse(pageHTML))

// pageCSP is the policy of the page and its message pages: nothing but the
// page's own inline style (by its hash, which webpage.NewPage computes and
// checks) and its data: favicon. The QR codes are inline SVG, so no image
// is fetched. The page is not rendered by webpage.Page: its answers carry
// Referrer-Policy: no-referrer (they have no forms), where Page.Render
// sets same-origin.
var pageCSP = webpage.NewPage("tickets", pageHTML, "img-src data:").CSP()

// pageView is what the template shows: the order's facts once, and each
// ticket with what it needs to draw.
type pageView struct {
	ticketdoc.Facts
	Message     bool
	Title, Text string
	Test        bool
	EventName   string
	Reference   string
	Count       string
	PDF         string
	Tickets     []ticketView
	Refunds     []refundView
	// Pages links every page of a large order; nil when one page holds
	// them all.
	Pages []pageLink
}

type refundView struct {
	Amount, What, Status, Label, Day string
}

// pageLink is a link to one page of an order's tickets.
type pageLink struct {
	Href    string
	Label   string
	Current bool
}

// PageSize is how many tickets one ticket page shows: a page of a
// thousand QR codes is megabytes and seconds of a core, and no phone
// shows it; the rest are on further pages (?page=2) and all of them in
// the PDF.
const PageSize = 50

// Pages is how many pages the tickets of an order of n tickets take.
func Pages(n int) int {
	return max(1, (n+PageSize-1)/PageSize)
}

// pageHref is the address of page p of token's tickets.
func pageHref(token string, p int) string {
	if p == 1 {
		return ticketdoc.PagePath(token)
	}
	return ticketdoc.PagePath(token) + "?page=" + strconv.Itoa(p)
}

type ticketView struct {
	TicketName string
	Position   int
	Of         string
	Status     string
	Label      string
	Void       bool
	QR         template.HTML
	Groups     []string
}

// RenderHTML writes page page (from 1) of the ticket page of o, whose page
// token is token (the page links its PDF and its other pages by that
// token's path): PageSize tickets at most, and links to every page when
// there is more than one; a card per ticket with the
// event, its date and time in the event's zone, the venue (or Online), the
// ticket type, "n of N", the status, and the QR code of the ticket's code
// with the code in groups of four under it; a void ticket shows VOID and
// no QR code, and a test order says on every ticket that it is not valid
// for entry; the order's refunds follow the tickets. The page loads
// nothing: its style is inline and the QR codes are inline SVG. Errors: ticketdoc.ErrNoTickets for an order without
// tickets (Handler answers those 404 before rendering), from the QR
// encoder, or w's; ErrNoPage for a page the order does not have.
func RenderHTML(w io.Writer, o *ticketdoc.Order, token string, page int) error {
	if len(o.Tickets) == 0 {
		return ticketdoc.ErrNoTickets
	}
	n := len(o.Tickets)
	if page < 1 || page > Pages(n) {
		return ErrNoPage
	}
	v := pageView{Facts: ticketdoc.FactsOf(o), Test: o.Test, EventName: o.EventName, Reference: o.Reference, PDF: ticketdoc.PDFPath(token)}
	v.Count = strconv.Itoa(n) + " tickets"
	if n == 1 {
		v.Count = "1 ticket"
	}
	first, last := (page-1)*PageSize, min(page*PageSize, n)
	if Pages(n) > 1 {
		v.Count = fmt.Sprintf("Tickets %d–%d of %d", first+1, last, n)
		for p := 1; p <= Pages(n); p++ {
			v.Pages = append(v.Pages, pageLink{Href: pageHref(token, p), Current: p == page,
				Label: fmt.Sprintf("%d–%d", (p-1)*PageSize+1, min(p*PageSize, n))})
		}
	}
	for _, t := range o.Tickets[first:last] {
		tv := ticketView{TicketName: t.TicketName, Position: t.Position, Of: t.Of(), Status: t.Status,
			Label: ticketdoc.StatusLabel(t.Status), Void: t.Status == ticketdoc.StatusVoid, Groups: ticketdoc.Groups(t.Code)}
		if !tv.Void {
			m, err := ticketdoc.NewQR(t.Code)
			if err != nil {
				return fmt.Errorf("ticket %s: %w", tv.Of, err)
			}
			tv.QR = m.SVG("QR code of ticket " + tv.Of)
		}
		v.Tickets = append(v.Tickets, tv)
	}
	for _, r := range o.Refunds {
		v.Refunds = append(v.Refunds, refundView{Amount: r.Amount, What: r.What(), Status: r.Status,
			Label: ticketdoc.RefundLabel(r.Status), Day: r.At.Format("2 Jan 2006")})
	}
	return pageTemplate.Execute(w, v)
}

// ErrNoPage refuses a page number beyond an order's tickets.
var ErrNoPage = errors.New("ticketpage: the order has no such page")

// renderMessage renders the page's message form: a title and a sentence in
// the ticket page's style (not found, failed).
func renderMessage(title, text string) []byte {
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, pageView{Message: true, Title: title, Text: text}); err != nil {
		panic("ticketpage: the message page does not render: " + err.Error())
	}
	return buf.Bytes()
}
