// Package ticketpage shows a buyer the tickets of an order: the page at
// tickets_url with a QR code per ticket (payload exactly the ticket's
// code), and the same tickets as a PDF, one ticket per page
// (spec/fulfilment.md section 2). It renders what it is given; loading an
// order by its page token is the caller's (Handler.Load).
package ticketpage

import "time"

// Order is what the page and the PDF show of one order.
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
}

// Ticket is one admission.
type Ticket struct {
	Code       string
	TicketName string
	// Position is n of Total ("2 of 3").
	Position, Total int
	// Status is valid, checked_in or void; a void ticket shows VOID and no
	// QR code.
	Status string
}
