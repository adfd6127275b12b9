package mail

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Mailbox is the development mailbox: Send keeps each message in the
// database, byte for byte as SMTP would have carried it, instead of
// sending it; Recent and Message read the messages back for the admin
// pages and the CLI.
type Mailbox struct {
	DB bun.IDB
	// Now is the mailbox's clock; nil is the real one.
	Now func() time.Time
}

// MaxRecent is the most messages Recent returns.
const MaxRecent = 500

// Send stores m with its text and HTML parts, for display, and the whole
// MIME message. Errors: an invalid To (permanent); a database error
// (temporary).
func (b *Mailbox) Send(ctx context.Context, m Message) error {
	at := now()
	if b.Now != nil {
		at = b.Now().UTC()
	}
	msg, err := compose(m, at)
	if err != nil {
		return err
	}
	var raw bytes.Buffer
	if _, err := msg.WriteTo(&raw); err != nil {
		return &sendError{step: "compose", err: err}
	}
	row := &store.MailMessage{OrderID: m.OrderID, From: m.From, To: m.To, Subject: subjectLine(m.Subject),
		TextBody: m.Text, HTMLBody: m.HTML, Raw: raw.String(), CreatedAt: at}
	if err := store.InsertMailMessage(ctx, b.DB, row); err != nil {
		return &sendError{step: "mailbox", err: err}
	}
	return nil
}

// Recent returns the newest messages, at most limit (1 to MaxRecent),
// newest first, without their bodies.
func (b *Mailbox) Recent(ctx context.Context, limit int) ([]store.MailMessage, error) {
	return store.RecentMailMessages(ctx, b.DB, min(max(limit, 1), MaxRecent))
}

// Stored is one message of the development mailbox as it is shown: the
// stored row, and what its raw MIME message holds.
type Stored struct {
	store.MailMessage
	// Headers are the message's main headers as sent, decoded: Date,
	// From, To, Subject and Message-ID.
	Headers []Header
	// Attachments are its files, decoded from the raw message.
	Attachments []Attachment
}

// Header is one header field of a message.
type Header struct {
	Name, Value string
}

// Message returns the message id. Errors: apperr.NotFound.
func (b *Mailbox) Message(ctx context.Context, id int64) (*Stored, error) {
	row, err := store.MailMessageByID(ctx, b.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.NotFound, "mail message %d does not exist", id)
	}
	if err != nil {
		return nil, err
	}
	headers, attachments, err := readRaw(row.Raw)
	if err != nil {
		return nil, err
	}
	return &Stored{MailMessage: *row, Headers: headers, Attachments: attachments}, nil
}
