package accounts

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/clientinput"
	"golang.org/x/net/idna"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"
)

// The identity rule: what a partner account's email address and name may
// be, and the one form each is stored and compared in. An operator
// approves accounts by reading their addresses, so two addresses that look
// alike must be one address or refused: invisible and formatting
// characters (zero-width spaces, word joiners, bidirectional controls) are
// refused, not removed, and so are addresses whose letters mix scripts
// (a Cyrillic "б" or "а" among Latin ones) and Latin, Greek or Cyrillic
// letters decorated with a combining mark that Unicode has no letter for.
// The local part is the PRECIS UsernameCaseMapped profile (RFC 8265:
// width-mapped, lower-cased, NFC); the domain is IDNA's lookup profile,
// stored in its ASCII form (xn--…), which is how mail finds it.

// Email returns the stored form of an account's email address.
// Errors: validation_failed (email) naming what is wrong.
func Email(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", apperr.Invalid("email", "is required")
	}
	if p := clientinput.TooLong(s, clientinput.MaxEmail); p != "" {
		return "", apperr.Invalid("email", "%s", p)
	}
	if !utf8.ValidString(s) {
		return "", apperr.Invalid("email", "must be UTF-8 text")
	}
	if strings.ContainsFunc(s, invisible) {
		return "", apperr.Invalid("email", "must not contain invisible or formatting characters")
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return "", apperr.Invalid("email", "%s is not a valid email address", quote(s))
	}
	local, err := precis.UsernameCaseMapped.String(s[:at])
	if err != nil || strings.ContainsAny(local, `"(),:;<>@[\] `) {
		return "", apperr.Invalid("email", "%s is not a valid email address", quote(s))
	}
	domain, err := idna.Lookup.ToASCII(strings.TrimSuffix(s[at+1:], "."))
	if err != nil || !strings.Contains(domain, ".") {
		return "", apperr.Invalid("email", "%s does not end in a valid domain name", quote(s))
	}
	shown, err := idna.Lookup.ToUnicode(domain)
	if err != nil {
		return "", apperr.Invalid("email", "%s does not end in a valid domain name", quote(s))
	}
	if msg := lookAlike(local + "@" + shown); msg != "" {
		return "", apperr.Invalid("email", "%s", msg)
	}
	email := local + "@" + domain
	if p := clientinput.EmailProblem(email); p != "" {
		return "", apperr.Invalid("email", "%s", p)
	}
	return email, nil
}

// Name returns the stored form of an account's name: the PRECIS Nickname
// profile (RFC 8266: spaces mapped and collapsed, trimmed, NFKC), which
// refuses invisible and control characters, and no word that mixes
// scripts.
// Errors: validation_failed (name).
func Name(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", apperr.Invalid("name", "is required")
	}
	if !utf8.ValidString(raw) {
		return "", apperr.Invalid("name", "must be UTF-8 text")
	}
	if strings.ContainsFunc(raw, invisible) {
		return "", apperr.Invalid("name", "must not contain invisible or formatting characters")
	}
	name, err := precis.Nickname.String(raw)
	if err != nil {
		return "", apperr.Invalid("name", "must be text: letters, digits, spaces and punctuation")
	}
	if name == "" {
		return "", apperr.Invalid("name", "is required")
	}
	if p := clientinput.NameProblem(name); p != "" {
		return "", apperr.Invalid("name", "%s", p)
	}
	for _, word := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsMark(r) }) {
		if msg := lookAlike(word); msg != "" {
			return "", apperr.Invalid("name", "%s", msg)
		}
	}
	return name, nil
}

// invisible reports a character that shows nothing or changes how the
// text around it shows: controls, format characters (zero-width spaces,
// joiners, word joiners, bidirectional controls, soft hyphens), other
// default-ignorable ones, and line and paragraph separators.
func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
}

// decorable are the scripts whose accented letters Unicode composes: a
// combining mark left over after NFC on one of their letters draws an
// accent on a letter that has none, a look-alike of the plain letter.
var decorable = []*unicode.RangeTable{unicode.Latin, unicode.Greek, unicode.Cyrillic}

// lookAlike returns why s (one address, or one word of a name) could
// imitate another, or "": letters of more than one script, or a
// combining mark on a letter of a script that composes its accents.
func lookAlike(s string) string {
	s = norm.NFC.String(s)
	var scripts []string
	var prev rune
	for _, r := range s {
		if unicode.In(r, unicode.Mn, unicode.Me) {
			if unicode.In(prev, decorable...) {
				return "must not put a combining mark on a letter (write the accented letter itself)"
			}
			continue
		}
		prev = r
		if !unicode.IsLetter(r) {
			continue
		}
		if name := scriptOf(r); name != "" && !slices.Contains(scripts, name) {
			scripts = append(scripts, name)
		}
	}
	if len(scripts) > 1 {
		return "must not mix letters of different scripts (" + strings.Join(scripts, " and ") + "): it could imitate another"
	}
	return ""
}

// scriptOf names the script of a letter; "" for Common and Inherited.
// The scripts Chinese, Japanese and Korean write together (Han with
// Hiragana, Katakana, Hangul, Bopomofo) are one, "CJK".
func scriptOf(r rune) string {
	if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo) {
		return "CJK"
	}
	for _, name := range []string{"Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari"} {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

// quote shows an address in a message with anything that is not
// printable ASCII escaped.
func quote(s string) string { return strconv.QuoteToASCII(s) }
