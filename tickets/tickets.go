// Package tickets issues the tickets of a paid order, delivers them to
// its buyer (spec/fulfilment.md sections 1 to 3) and voids them when the
// operator says so (section 4). Tickets are issued once, in the
// transaction that makes the order paid or completed, together with the
// token of the buyer's ticket page and, for a live order whose app sends
// ticket emails, the email's job (the outbox): a crash can lose neither.
// Codes and tokens come from crypto/rand.
package tickets

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// Service issues tickets and sends ticket emails.
type Service struct {
	DB  *store.DB
	Now func() time.Time
	// PublicBaseURL is the base of every tickets_url.
	PublicBaseURL string
	// EnqueueEmail schedules the ticket email of an order inside tx, the
	// transaction that issues its tickets (jobs.Runner.EnqueueTicketEmail).
	EnqueueEmail func(ctx context.Context, tx bun.Tx, orderID int64) error
	// Mail sends ticket emails, from From.
	Mail mail.Sender
	From string
	// Webhooks emits ticket.voided.
	Webhooks *webhook.Service
	// PDFs renders the PDF the email attaches, shared with the ticket
	// page so an order's version is drawn once for both; nil renders
	// each email's own.
	PDFs *ticketdoc.PDFCache
	// ObserveIssued, when set, learns of n tickets issued in an
	// environment; ObserveEmail of each ticket email attempt's outcome
	// (sent, retry, failed). The server gives them its metrics.
	ObserveIssued func(env string, n int)
	ObserveEmail  func(outcome string)
}

// TestCodePrefix begins the code of every test ticket; no live code does.
const TestCodePrefix = "TEST"

// codeBytes of randomness make a code: 160 bits, 32 characters of A-Z2-7.
const codeBytes = 20

var codec = base32.StdEncoding.WithPadding(base32.NoPadding)

// randomText returns n random bytes as unpadded base32.
func randomText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return codec.EncodeToString(b)
}

// NewCode returns a new ticket code of an environment: 32 random
// characters of A-Z2-7 (160 bits), after TEST for a test ticket. A live
// code never begins with TEST, so a live door can tell a test ticket by
// its code alone.
func NewCode(env string) string {
	for {
		c := randomText(codeBytes)
		if env == store.EnvTest {
			return TestCodePrefix + c
		}
		if !strings.HasPrefix(c, TestCodePrefix) {
			return c
		}
	}
}

// NewToken returns a ticket page token: 160 random bits, lower-case.
func NewToken() string { return strings.ToLower(randomText(codeBytes)) }

// newTicketID returns an issued ticket's API id (itk_…).
func newTicketID() string { return "itk_" + strings.ToLower(randomText(16)) }

// URL is the ticket page of a token.
func URL(base, token string) string { return strings.TrimRight(base, "/") + ticketdoc.PagePath(token) }

// Issue issues the tickets of order o, in tx, the transaction that moves it
// to paid or completed: one per admission, positions 1…n in item order,
// each with a fresh code; the order's ticket page token; and, for a live
// order whose app sends ticket emails, the email's job with the email
// queued (otherwise not_sent). o receives the token and email state.
// Called once per order, since an order leaves pending once; the unique
// (order, position) index refuses a second issuance should a caller err.
func (s *Service) Issue(ctx context.Context, tx bun.Tx, o *store.Order, items []store.OrderItem) ([]store.IssuedTicket, error) {
	if o.Status != store.OrderPaid && o.Status != store.OrderCompleted {
		return nil, fmt.Errorf("tickets: order %s is %s, not paid or completed", o.Reference, o.Status)
	}
	now := s.Now().UTC()
	var ts []store.IssuedTicket
	for _, it := range items {
		for range it.Quantity {
			ts = append(ts, store.IssuedTicket{
				PublicID: newTicketID(), Code: NewCode(o.Environment), OrderID: o.ID, AppID: o.AppID,
				Environment: o.Environment, TicketID: it.TicketID, TicketName: it.Name,
				EventID: o.EventID, EventDateID: o.EventDateID, Position: int64(len(ts) + 1),
				Status: store.TicketValid, CreatedAt: now, UpdatedAt: now,
			})
		}
	}
	for i := range ts {
		ts[i].TicketsInOrder = int64(len(ts))
	}
	if err := store.InsertIssuedTickets(ctx, tx, ts); err != nil {
		return nil, fmt.Errorf("tickets: issue for order %s: %w", o.Reference, err)
	}
	email := store.TicketsEmailNotSent
	if o.Environment == store.EnvLive {
		app, err := store.AppByID(ctx, tx, o.AppID)
		if err != nil {
			return nil, err
		}
		if app.TicketEmails {
			email = store.TicketsEmailQueued
		}
	}
	token := NewToken()
	if err := store.SetOrderFulfilment(ctx, tx, o.ID, token, email); err != nil {
		return nil, err
	}
	if email == store.TicketsEmailQueued {
		if err := s.EnqueueEmail(ctx, tx, o.ID); err != nil {
			return nil, fmt.Errorf("tickets: enqueue the email of order %s: %w", o.Reference, err)
		}
	}
	o.TicketsToken, o.TicketsEmailStatus = &token, email
	// Counted in the transaction that issues them: one that fails after
	// this (at its commit) counts tickets its retry issues and counts again.
	if s.ObserveIssued != nil {
		s.ObserveIssued(o.Environment, len(ts))
	}
	return ts, nil
}
