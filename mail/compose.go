package mail

import (
	"bytes"
	"crypto/rand"
	"errors"
	"mime"
	netmail "net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// errInvalidRecipient is the cause of a send refused before any
// connection: the To address can never be delivered to.
var errInvalidRecipient = errors.New("the recipient is not a valid email address")

// errInvalidFrom is the cause of a send refused because MAIL_FROM is not
// an address: configuration to mend, not a fault of the message.
var errInvalidFrom = errors.New("the sender (MAIL_FROM) is not a valid email address")

// compose builds m as one MIME message, the same for SMTP and the
// development mailbox: From, To, Subject (RFC 2047 encoded when not
// ASCII), Date at, a Message-ID of the sender's domain; the text and the
// HTML part as multipart/alternative, inside multipart/mixed with the
// attachments. Errors: an invalid To (permanent) or From (temporary).
func compose(m Message, at time.Time) (*gomail.Msg, error) {
	to, err := netmail.ParseAddress(m.To)
	if err != nil {
		return nil, &sendError{step: "address", permanent: true, err: errInvalidRecipient}
	}
	from, err := netmail.ParseAddress(m.From)
	if err != nil {
		return nil, &sendError{step: "address", err: errInvalidFrom}
	}
	// No User-Agent: which library the service uses is nobody's business.
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	msg.FromMailAddress(from)
	msg.ToMailAddress(to)
	msg.Subject(subjectLine(m.Subject))
	msg.SetDateWithValue(at)
	msg.SetMessageIDWithValue(messageID(from.Address))
	switch {
	case m.Text != "" && m.HTML != "":
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	case m.HTML != "":
		msg.SetBodyString(gomail.TypeTextHTML, m.HTML)
	default:
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	}
	for _, a := range m.Attachments {
		err := msg.AttachReader(a.Name, bytes.NewReader(a.Data), gomail.WithFileContentType(gomail.ContentType(mediaType(a.ContentType))))
		if err != nil {
			return nil, &sendError{step: "compose", err: err}
		}
	}
	return msg, nil
}

// subjectLine keeps a subject to one line: a line break in it would end
// the header (go-mail encodes it, but a reader shows it folded anyway).
func subjectLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// mediaType returns contentType as a clean media type, or
// application/octet-stream when it is not one.
func mediaType(contentType string) string {
	if mt, params, err := mime.ParseMediaType(contentType); err == nil {
		if s := mime.FormatMediaType(mt, params); s != "" {
			return s
		}
	}
	return "application/octet-stream"
}

// messageID returns a new Message-ID (without its angle brackets) in the
// domain of the sender's address: 128 random bits, so two never collide.
func messageID(fromAddress string) string {
	domain := fromAddress[strings.LastIndexByte(fromAddress, '@')+1:]
	return strings.ToLower(rand.Text()) + "@" + domain
}
