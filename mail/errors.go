package mail

import (
	"errors"
	"regexp"
)

// IsPermanent reports whether err says the message will never be
// accepted, so sending it again is pointless: its recipient is not a valid
// address, or the SMTP server answered a command of the message's own
// transaction (MAIL FROM, RCPT TO, DATA or the end of the data) with a
// 5xx. Every other failure is temporary: 4xx replies; connections refused,
// reset or timed out; TLS handshake failures; a cancelled context; a
// database error of the development mailbox; and 5xx replies while the
// session is set up (greeting, EHLO, STARTTLS, AUTH), which refuse the
// service's connection or credentials rather than the message and stop once
// the configuration is mended.
func IsPermanent(err error) bool {
	var e *sendError
	return errors.As(err, &e) && e.permanent
}

// sendError is a send that failed, worded to be logged: the step and what
// went wrong there, with every address (the buyer's above all) left out.
type sendError struct {
	step      string
	permanent bool
	err       error
}

func (e *sendError) Error() string {
	return "mail: " + e.step + ": " + redact(e.err.Error())
}

func (e *sendError) Unwrap() error { return e.err }

// address matches what reads as an email address in a server's reply or
// a library's error: "<ama@example.com>", "ama@example.com".
var address = regexp.MustCompile(`[^\s<>"'(),;:\[\]]+@[^\s<>"'(),;:\[\]]+`)

// redact replaces every email address in s.
func redact(s string) string {
	return address.ReplaceAllString(s, "[address]")
}
