// Package clientinput holds the rules for the text a client hands the
// service, shared by every service that takes it: how long a name, an email
// address, a URL or a phone number may be, which characters a name may not
// hold, and the normalised form of an email address that identifies one
// buyer. It says what is wrong; each caller reports it in its own error
// shape. It imports nothing of the project, so migrations can use it too.
package clientinput

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Bounds, in characters (Unicode code points).
const (
	// MaxName bounds a person's, an account's or an app's name.
	MaxName = 200
	// MaxEmail is RFC 5321's limit on a forward path less its angle
	// brackets.
	MaxEmail = 254
	// MaxURL bounds any URL a client gives: redirect and webhook URLs.
	MaxURL = 2048
	// MaxPhone bounds a phone number as typed: E.164 allows 15 digits; the
	// rest is room for a country code, spaces, brackets and dashes.
	MaxPhone = 32
)

// Length is how long s is in characters, the unit of every bound here.
func Length(s string) int { return utf8.RuneCountInString(s) }

// TooLong returns the problem of s longer than max characters, or "".
func TooLong(s string, max int) string {
	if Length(s) > max {
		return fmt.Sprintf("must be at most %d characters", max)
	}
	return ""
}

// NameProblem returns what is wrong with a trimmed, non-empty name, or "":
// more than MaxName characters, or a character that is not text. Control
// characters (C0, C1), line and paragraph separators, and Unicode's
// bidirectional controls (the embeddings and overrides U+202A–U+202E, the
// isolates U+2066–U+2069, and the marks U+200E, U+200F, U+061C) are
// refused: a name is shown on tickets, pages and receipts, and a
// right-to-left override would make it display as something it is not.
func NameProblem(name string) string {
	switch {
	case !utf8.ValidString(name):
		return "must be UTF-8 text"
	case Length(name) > MaxName:
		return fmt.Sprintf("must be at most %d characters", MaxName)
	case strings.ContainsFunc(name, hidden):
		return "must not contain control characters or bidirectional text controls"
	}
	return ""
}

// TextProblem returns what is wrong with a text shown to people (a
// catalog's names and descriptions, its venues' addresses), or "": not
// UTF-8, more than max characters, or a character NameProblem refuses
// (control characters such as ESC, bidirectional controls, line and
// paragraph separators). With lines set, a line feed and a tab are text
// (a description's paragraphs); a carriage return is still refused.
func TextProblem(s string, max int, lines bool) string {
	switch {
	case !utf8.ValidString(s):
		return "must be UTF-8 text"
	case Length(s) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	case strings.ContainsFunc(s, func(r rune) bool { return hidden(r) && !(lines && (r == '\n' || r == '\t')) }):
		return "must not contain control characters or bidirectional text controls"
	}
	return ""
}

// hidden reports a character that changes how text around it is shown
// rather than being shown itself.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) ||
		unicode.In(r, unicode.Zl, unicode.Zp)
}

// EmailProblem returns what is wrong with a trimmed, non-empty email
// address, or "": more than MaxEmail characters, not one plain address
// (no display name, no comments, no angle brackets), no dot in its
// domain, or a domain literal ("ama@[127.0.0.1]"), which names a machine
// rather than a mailbox anyone can be reached at.
func EmailProblem(email string) string {
	if p := TooLong(email, MaxEmail); p != "" {
		return p
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email {
		return "must be a valid email address"
	}
	domain := email[strings.LastIndexByte(email, '@')+1:]
	if strings.HasPrefix(domain, "[") {
		return "must name a domain, not an address in brackets"
	}
	if !strings.Contains(domain, ".") {
		return "must be a valid email address"
	}
	return ""
}

// BuyerEmail returns the form of a valid email address that identifies one
// buyer, the one form every rule that compares buyers uses: Unicode format
// characters (zero-width spaces and joiners, soft hyphens, bidirectional
// marks) removed, compatibility characters folded (NFKC: a full-width
// "ａ" is "a"), lower-cased, and without a "+tag" in its local part
// ("Cap+1@Example.com", "cap​@example.com" and "cap@example.com" are
// one buyer). A local part that starts with "+" keeps it: there is no
// name before the tag.
func BuyerEmail(email string) string {
	email = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, email)
	email = strings.ToLower(strings.TrimSpace(norm.NFKC.String(email)))
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return email
	}
	local, domain := email[:at], email[at:]
	if plus := strings.IndexByte(local, '+'); plus > 0 {
		local = local[:plus]
	}
	return local + domain
}
