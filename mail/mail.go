// Package mail sends the service's email through one interface: SMTP when
// SMTP_URL is set, otherwise the development mailbox, a table shown on the
// admin listener at /mail and by `boxoffice mail list|show`.
package mail

import "context"

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
