// Package ticketdoc renders the tickets of an order for its buyer: a QR
// code per ticket (payload exactly the ticket's code), the tickets as a
// PDF, one ticket per page, the lines the ticket page and the PDF both
// print, and the paths of the ticket page and its PDF (spec/fulfilment.md
// section 2). It speaks no HTTP, so the ticket page (ticketpage) and the
// ticket email (tickets, sent by a job) render the same tickets. It
// renders what it is given; loading an order is the caller's.
package ticketdoc

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Order is what the ticket page and the PDF show of one order.
type Order struct {
	Reference string
	// Test marks a sandbox order: "Test ticket — not valid for entry".
	Test      bool
	EventName string
	// Start and End are the date's instants in the event's timezone
	// (End is zero when the date has no end).
	Start, End time.Time
	// Venue is the venue's name and address lines; empty means online.
	Venue   string
	Address string
	Tickets []Ticket
	// Refunds are the order's refunds, oldest first.
	Refunds []Refund
}

// Refund is money returned on the order, as its buyer sees it.
type Refund struct {
	// Amount is the amount with its currency: "GHS 120.00".
	Amount string
	// Status is the refund's status: pending, succeeded or failed.
	Status string
	// Tickets is how many tickets it cancelled.
	Tickets int
	At      time.Time
}

// RefundLabel is what the buyer reads of a refund's status.
func RefundLabel(status string) string {
	switch status {
	case "succeeded":
		return "Refunded"
	case "pending":
		return "On its way back to you"
	case "failed":
		return "Not returned yet: the seller will contact you"
	}
	return status
}

// What says what a refund cancelled: "2 tickets cancelled".
func (r Refund) What() string {
	switch r.Tickets {
	case 0:
		return "No ticket cancelled"
	case 1:
		return "1 ticket cancelled"
	}
	return strconv.Itoa(r.Tickets) + " tickets cancelled"
}

// Ticket is one admission.
type Ticket struct {
	Code       string
	TicketName string
	// Position is n of Total ("2 of 3").
	Position, Total int
	// Status is StatusValid, StatusCheckedIn or StatusVoid; a void ticket
	// shows VOID and no QR code.
	Status string
}

// Of is the ticket's place in its order: "2 of 3".
func (t Ticket) Of() string {
	return strconv.Itoa(t.Position) + " of " + strconv.Itoa(t.Total)
}

// ErrNotFound is what loading the tickets of a page token returns for a
// token that names no order (or an order without tickets): the buyer gets
// the ticket page's 404.
var ErrNotFound = errors.New("ticketdoc: tickets not found")

// ErrNoTickets refuses to render an order without tickets: its page would
// be an empty wallet and its PDF a blank page.
var ErrNoTickets = errors.New("ticketdoc: the order has no tickets")

// Ticket statuses (spec/fulfilment.md section 1).
const (
	// StatusValid is a ticket that will be admitted.
	StatusValid = "valid"
	// StatusCheckedIn is a ticket that was admitted.
	StatusCheckedIn = "checked_in"
	// StatusVoid is a voided ticket, never admitted.
	StatusVoid = "void"
)

// PagePath is the path of the ticket page of token: /tickets/{token}.
func PagePath(token string) string { return "/tickets/" + token }

// PDFPath is the path of the PDF of token: /tickets/{token}/tickets.pdf.
func PDFPath(token string) string { return PagePath(token) + "/tickets.pdf" }

// PDFName is the file name the PDF of o is offered under, and fits a mail
// attachment: tickets-{reference}.pdf.
func PDFName(o *Order) string {
	ref := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, o.Reference)
	if ref == "" {
		return "tickets.pdf"
	}
	return "tickets-" + ref + ".pdf"
}

// PlausibleToken reports whether token could name a ticket page: 1 to 128
// ASCII letters, digits, '_' and '-'. Anything else names no order, so it
// is answered 404 without looking it up.
func PlausibleToken(token string) bool {
	if token == "" || len(token) > 128 {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Facts are the order's lines that the page and the PDF both print,
// worded once.
type Facts struct {
	// Day is "Thu, 24 Dec 2026", or "Thu, 24 Dec – Sat, 26 Dec 2026" for
	// a date that ends on another day.
	Day string
	// Time is "6:00 PM – 11:00 PM GMT (Africa/Accra)": the clock times
	// and the zone they are in, so a buyer abroad knows which clock.
	Time string
	// Place is the venue, or "Online".
	Place   string
	Address string
}

// When is the date and time in one line: "Thu, 24 Dec 2026 · 6:00 PM –
// 11:00 PM GMT (Africa/Accra)".
func (f Facts) When() string {
	if f.Time == "" {
		return f.Day
	}
	return f.Day + " · " + f.Time
}

// FactsOf words the facts of o: its date and time in the event's zone, and
// its venue or Online.
func FactsOf(o *Order) Facts {
	f := Facts{Place: strings.TrimSpace(o.Venue), Address: strings.TrimSpace(o.Address)}
	if f.Place == "" {
		f.Place, f.Address = "Online", ""
	}
	f.Day, f.Time = when(o.Start, o.End)
	return f
}

// when words a date's start and end in their own zone (the event's).
func when(start, end time.Time) (day, clock string) {
	if start.IsZero() {
		return "Date to be announced", ""
	}
	const dayLayout, clockLayout = "Mon, 2 Jan 2006", "3:04 PM"
	if end.IsZero() || !end.After(start) {
		return start.Format(dayLayout), start.Format(clockLayout) + " " + zoneLabel(start)
	}
	end = end.In(start.Location())
	y1, m1, d1 := start.Date()
	y2, m2, d2 := end.Date()
	switch {
	case y1 == y2 && m1 == m2 && d1 == d2:
		day = start.Format(dayLayout)
	case y1 == y2:
		day = start.Format("Mon, 2 Jan") + " – " + end.Format(dayLayout)
	default:
		day = start.Format(dayLayout) + " – " + end.Format(dayLayout)
	}
	sAbbr, _ := start.Zone()
	eAbbr, _ := end.Zone()
	if sAbbr != eAbbr {
		// The clocks changed during the event (summer time): each time
		// says which it is on.
		return day, start.Format(clockLayout) + " " + zoneAbbr(start) + " – " + end.Format(clockLayout) + " " + zoneLabel(end)
	}
	return day, start.Format(clockLayout) + " – " + end.Format(clockLayout) + " " + zoneLabel(start)
}

// zoneLabel names t's zone as catalog.DisplayInZone does: the abbreviation
// and, when known, the zone's name, "GMT (Africa/Accra)".
func zoneLabel(t time.Time) string {
	abbr := zoneAbbr(t)
	if name := t.Location().String(); name != "" && name != "Local" && name != "UTC" && name != abbr {
		return abbr + " (" + name + ")"
	}
	return abbr
}

// zoneAbbr is t's zone abbreviation, or its offset from UTC ("UTC+04:00")
// where the zone has no letters (Go prints "+04" for those).
func zoneAbbr(t time.Time) string {
	abbr, offset := t.Zone()
	if abbr != "" && abbr[0] != '+' && abbr[0] != '-' {
		return abbr
	}
	if offset == 0 {
		return "UTC"
	}
	return "UTC" + t.Format("-07:00")
}

// StatusLabel is how a status reads on a ticket: "Checked in".
func StatusLabel(status string) string {
	switch status {
	case StatusValid:
		return "Valid"
	case StatusCheckedIn:
		return "Checked in"
	case StatusVoid:
		return "VOID"
	}
	return strings.ReplaceAll(status, "_", " ")
}

// Groups splits a code into groups of four for reading aloud.
func Groups(code string) []string {
	var g []string
	for len(code) > 4 {
		g = append(g, code[:4])
		code = code[4:]
	}
	if code != "" {
		g = append(g, code)
	}
	return g
}
