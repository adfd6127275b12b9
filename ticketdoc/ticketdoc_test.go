package ticketdoc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/ticketdoc/ticketdoctest"
	"github.com/stretchr/testify/require"
)

func TestWhen(t *testing.T) {
	accra, berlin := ticketdoctest.MustZone(t, "Africa/Accra"), ticketdoctest.MustZone(t, "Europe/Berlin")
	dubai := ticketdoctest.MustZone(t, "Asia/Dubai")
	for _, tc := range []struct {
		name       string
		start, end time.Time
		day, clock string
	}{
		{"SameDay", time.Date(2026, 12, 24, 18, 0, 0, 0, accra), time.Date(2026, 12, 24, 23, 0, 0, 0, accra),
			"Thu, 24 Dec 2026", "6:00 PM – 11:00 PM GMT (Africa/Accra)"},
		{"NoEnd", time.Date(2026, 7, 5, 9, 30, 0, 0, berlin), time.Time{},
			"Sun, 5 Jul 2026", "9:30 AM CEST (Europe/Berlin)"},
		{"NextDay", time.Date(2026, 12, 31, 21, 0, 0, 0, accra), time.Date(2027, 1, 1, 3, 0, 0, 0, accra),
			"Thu, 31 Dec 2026 – Fri, 1 Jan 2027", "9:00 PM – 3:00 AM GMT (Africa/Accra)"},
		{"Festival", time.Date(2026, 7, 24, 12, 0, 0, 0, berlin), time.Date(2026, 7, 26, 23, 0, 0, 0, berlin),
			"Fri, 24 Jul – Sun, 26 Jul 2026", "12:00 PM – 11:00 PM CEST (Europe/Berlin)"},
		{"ClocksChange", time.Date(2026, 10, 24, 22, 0, 0, 0, berlin), time.Date(2026, 10, 25, 4, 0, 0, 0, berlin),
			"Sat, 24 Oct – Sun, 25 Oct 2026", "10:00 PM CEST – 4:00 AM CET (Europe/Berlin)"},
		{"OffsetOnly", time.Date(2026, 3, 1, 20, 0, 0, 0, dubai), time.Date(2026, 3, 1, 22, 0, 0, 0, dubai),
			"Sun, 1 Mar 2026", "8:00 PM – 10:00 PM UTC+04:00 (Asia/Dubai)"},
		{"FixedZone", time.Date(2026, 3, 1, 20, 0, 0, 0, time.FixedZone("", -5*3600)), time.Time{},
			"Sun, 1 Mar 2026", "8:00 PM UTC-05:00"},
		{"UTC", time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC), time.Time{}, "Sun, 1 Mar 2026", "8:00 PM UTC"},
		{"EndBeforeStart", time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 19, 0, 0, 0, time.UTC),
			"Sun, 1 Mar 2026", "8:00 PM UTC"},
		{"NoDate", time.Time{}, time.Time{}, "Date to be announced", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			day, clock := ticketdoc.When(tc.start, tc.end)
			require.Equal(t, tc.day, day)
			require.Equal(t, tc.clock, clock)
		})
	}
	f := ticketdoc.FactsOf(&ticketdoc.Order{Start: time.Date(2026, 12, 24, 18, 0, 0, 0, accra), End: time.Date(2026, 12, 24, 23, 0, 0, 0, accra), Address: "ignored"})
	require.Equal(t, "Thu, 24 Dec 2026 · 6:00 PM – 11:00 PM GMT (Africa/Accra)", f.When())
	require.Equal(t, "Online", f.Place, "no venue is an online event")
	require.Empty(t, f.Address)
}

func TestNames(t *testing.T) {
	require.Equal(t, "/tickets/tok_1-x", ticketdoc.PagePath("tok_1-x"))
	require.Equal(t, "/tickets/tok_1-x/tickets.pdf", ticketdoc.PDFPath("tok_1-x"))
	require.Equal(t, "tickets-ORD-7QK2M9.pdf", ticketdoc.PDFName(&ticketdoc.Order{Reference: "ORD-7QK2M9"}))
	require.Equal(t, "tickets-ab.pdf", ticketdoc.PDFName(&ticketdoc.Order{Reference: `a"/\b`}))
	require.Equal(t, "tickets.pdf", ticketdoc.PDFName(&ticketdoc.Order{}))
	require.Equal(t, []string{"TEST", "ABCD", "EF"}, ticketdoc.Groups("TESTABCDEF"))
	require.Empty(t, ticketdoc.Groups(""))
	for _, tok := range []string{"a", "Zz09_-", strings.Repeat("a", 128)} {
		require.True(t, ticketdoc.PlausibleToken(tok), tok)
	}
	for _, tok := range []string{"", "a.b", "a b", "a/b", "é", "a\x00", strings.Repeat("a", 129)} {
		require.False(t, ticketdoc.PlausibleToken(tok), tok)
	}
}
