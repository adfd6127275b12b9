// Package mail sends the service's email through one interface: SMTP when
// SMTP_URL is set, otherwise the development mailbox, a table shown on the
// admin listener at /mail and by `boxoffice mail list|show`.
package mail

import (
	"context"
	"fmt"
	netmail "net/mail"
	"time"

	"github.com/uptrace/bun"
)

// Message is one email: a plain-text and an HTML part, and attachments.
type Message struct {
	From    string
	To      string
	Subject string
	Text    string
	HTML    string
	// Attachments are sent as files (a ticket PDF).
	Attachments []Attachment
	// OrderID links a development-mailbox copy to its order; 0 for none.
	OrderID int64
}

// Attachment is a file sent with a message.
type Attachment struct {
	Name        string
	ContentType string
	Data        []byte
}

// Sender sends messages. An error that IsPermanent says the message will
// never be accepted (an SMTP 5xx); any other error is temporary (a
// connection error, an SMTP 4xx) and the send is worth retrying.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// DefaultFrom is MAIL_FROM's default.
const DefaultFrom = "Boxoffice <tickets@localhost>"

// New returns the sender SMTP_URL asks for: an SMTP sender when smtpURL is
// set (see NewSMTP, which opts tune), else the development mailbox in db.
// Errors: a malformed smtpURL, named as SMTP_URL without its password.
func New(db bun.IDB, smtpURL string, opts ...Option) (Sender, error) {
	if smtpURL == "" {
		return &Mailbox{DB: db}, nil
	}
	s, err := NewSMTP(smtpURL, opts...)
	if err != nil {
		return nil, err // not a nil *SMTP in a non-nil Sender
	}
	return s, nil
}

// FromSeller returns the From of a message sent for seller: MAIL_FROM's
// address, with the seller's name shown first ("Chale Shop via Boxoffice
// <tickets@example.com>"), so a buyer sees who sold the tickets and that
// the platform sent them. from that is not an address is returned as it
// is (the send then fails naming MAIL_FROM).
func FromSeller(from, seller string) string {
	a, err := netmail.ParseAddress(from)
	if err != nil || seller == "" {
		return from
	}
	if a.Name != "" {
		a.Name = seller + " via " + a.Name
	} else {
		a.Name = seller
	}
	return a.String()
}

// CheckFrom reports whether from can be MAIL_FROM: one address, with or
// without a display name ("Boxoffice <tickets@example.com>").
func CheckFrom(from string) error {
	if _, err := netmail.ParseAddress(from); err != nil {
		return fmt.Errorf("MAIL_FROM %q is not an email address (e.g. %q)", from, DefaultFrom)
	}
	return nil
}

// now is the clock of a sender without one of its own.
func now() time.Time { return time.Now().UTC() }
