package clientinput_test

import (
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/stretchr/testify/require"
)

func TestNameProblem(t *testing.T) {
	t.Parallel()
	const bidi = "must not contain control characters or bidirectional text controls"
	for _, c := range []struct {
		name, in, want string
	}{
		{"OK", "Ama Mensah", ""},
		{"OKAtLimit", strings.Repeat("é", clientinput.MaxName), ""},
		{"OKArabic", "أمينة", ""},
		{"OKZeroWidthJoiner", "क्\u200dष", ""},
		{"ErrTooLong", strings.Repeat("é", clientinput.MaxName+1), "must be at most 200 characters"},
		{"ErrNUL", "Ama\x00", bidi},
		{"ErrNewline", "Ama\nMensah", bidi},
		{"ErrC1", "Ama\u0085", bidi},
		{"ErrLineSeparator", "Ama\u2028", bidi},
		{"ErrRLO", "Ama\u202Egpj.exe", bidi},
		{"ErrLRE", "\u202AAma", bidi},
		{"ErrPDF", "Ama\u202C", bidi},
		{"ErrRLI", "Ama\u2067x", bidi},
		{"ErrPDI", "Ama\u2069", bidi},
		{"ErrRLM", "Ama\u200F", bidi},
		{"ErrNotUTF8", "Ama\xff", "must be UTF-8 text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, clientinput.NameProblem(c.in))
		})
	}
}

func TestTooLong(t *testing.T) {
	t.Parallel()
	require.Empty(t, clientinput.TooLong(strings.Repeat("ü", 2048), clientinput.MaxURL))
	require.Equal(t, "must be at most 2048 characters", clientinput.TooLong(strings.Repeat("u", 2049), clientinput.MaxURL))
}

func TestBuyerEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"cap@example.com":             "cap@example.com",
		"Cap+1@Example.com":           "cap@example.com",
		"cap+a+b@example.com":         "cap@example.com",
		"CAP@EXAMPLE.COM":             "cap@example.com",
		" cap+x@example.com ":         "cap@example.com",
		"+tag@example.com":            "+tag@example.com",
		"first.last+x@example.com":    "first.last@example.com",
		"no-at-sign":                  "no-at-sign",
		"ama\u200b@example.com":       "ama@example.com", // zero-width space
		"a\u200dma@example.com":       "ama@example.com", // zero-width joiner
		"am\u00ada@example.com":       "ama@example.com", // soft hyphen
		"\u200eama@example.com":       "ama@example.com", // left-to-right mark
		"\ufeffama@example.com":       "ama@example.com", // byte order mark
		"ａｍａ@example.com":             "ama@example.com", // full-width letters (NFKC)
		"ama@ｅxample.com":             "ama@example.com",
		"Ama+promo\u200b@Example.com": "ama@example.com",
	} {
		require.Equal(t, want, clientinput.BuyerEmail(in), in)
	}
}

func TestEmailProblem(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ama@example.com":                         "",
		"first.last+tag@sub.example.co.uk":        "",
		"ama@[127.0.0.1]":                         "must name a domain, not an address in brackets",
		"ama@[IPv6:::1]":                          "must be a valid email address", // net/mail refuses it already
		"ama@localhost":                           "must be a valid email address",
		"Ama <ama@example.com>":                   "must be a valid email address",
		"ama@example.com (home)":                  "must be a valid email address",
		"ama":                                     "must be a valid email address",
		"a@b@example.com":                         "must be a valid email address",
		strings.Repeat("a", 250) + "@example.com": "must be at most 254 characters",
	} {
		require.Equal(t, want, clientinput.EmailProblem(in), in)
	}
}

func TestTextProblem(t *testing.T) {
	t.Parallel()
	const bidi = "must not contain control characters or bidirectional text controls"
	for _, c := range []struct {
		name, in string
		max      int
		lines    bool
		want     string
	}{
		{"OK", "Highlife Night", 200, false, ""},
		{"OKAtLimit", strings.Repeat("é", 5000), 5000, true, ""},
		{"OKLinesAndTabs", "Doors at 6.\n\tBring ID.", 5000, true, ""},
		{"ErrTooLong", strings.Repeat("é", 201), 200, false, "must be at most 200 characters"},
		{"ErrNewlineInOneLine", "High\nlife", 200, false, bidi},
		{"ErrCarriageReturn", "a\r\nb", 5000, true, bidi},
		{"ErrEscapeSequence", "\x1b[31mRed\x1b[0m", 5000, true, bidi},
		{"ErrOSCTitle", "\x1b]0;owned\x07", 200, false, bidi},
		{"ErrRLO", "Night\u202Egpj.exe", 200, false, bidi},
		{"ErrIsolate", "\u2066Night", 5000, true, bidi},
		{"ErrParagraphSeparator", "a\u2029b", 5000, true, bidi},
		{"ErrNotUTF8", "a\xff", 200, false, "must be UTF-8 text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, clientinput.TextProblem(c.in, c.max, c.lines))
		})
	}
}
