package catalog_test

import (
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func TestEffectivePrice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ticket store.Ticket
		want   string
		free   bool
	}{
		{"Regular", store.Ticket{Price: ptr[int64](15000)}, "150.00", false},
		{"PromoLower", store.Ticket{Price: ptr[int64](15000), PromotionalPrice: ptr[int64](12000)}, "120.00", false},
		{"PromoHigherIgnored", store.Ticket{Price: ptr[int64](15000), PromotionalPrice: ptr[int64](20000)}, "150.00", false},
		{"PromoZeroMakesFree", store.Ticket{Price: ptr[int64](15000), PromotionalPrice: ptr[int64](0)}, "0.00", true},
		{"FreeFlagWins", store.Ticket{Free: true, Price: ptr[int64](5000)}, "0.00", true},
		{"ZeroPrice", store.Ticket{Price: ptr[int64](0)}, "0.00", true},
		{"NoPrice", store.Ticket{}, "0.00", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, catalog.FormatAmount(catalog.EffectivePrice(&tt.ticket)))
			require.Equal(t, tt.free, catalog.IsFree(&tt.ticket))
		})
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	ok := map[string]int64{"150.00": 15000, "150": 15000, "150.5": 15050, "0": 0, "0.01": 1, "1200.99": 120099}
	for in, want := range ok {
		got, err := catalog.ParseAmount(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-1", "1.234", "abc", "1,00", ".5", "5.", "1e3", " 1", "+1"} {
		_, err := catalog.ParseAmount(in)
		require.ErrorIs(t, err, catalog.ErrAmount, in)
	}
	require.Equal(t, "0.05", catalog.FormatAmount(5))
	require.Equal(t, "12.30", catalog.FormatAmount(1230))
}

func TestAvailable(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(7), catalog.Available((&store.Ticket{Quantity: ptr[int64](10), Sold: 2, Held: 1}).Stock()))
	require.Equal(t, int64(0), catalog.Available((&store.Ticket{Quantity: ptr[int64](10), Sold: 12}).Stock()))
	require.Equal(t, int64(catalog.Unlimited), catalog.Available((&store.Ticket{Sold: 5}).Stock()))
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	dates := []store.EventDate{
		{ID: 1, Active: true, StartAt: now.Add(-48 * time.Hour), EndAt: now.Add(-44 * time.Hour)}, // past
		{ID: 2, Active: true, StartAt: now.Add(48 * time.Hour), EndAt: now.Add(52 * time.Hour)},
		{ID: 3, Active: true, StartAt: now.Add(24 * time.Hour), EndAt: now.Add(26 * time.Hour)},
		{ID: 4, Active: true, StartAt: now.Add(-1 * time.Hour), EndAt: now.Add(1 * time.Hour)}, // running
	}
	tickets := map[int64][]store.Ticket{
		1: {{Price: ptr[int64](100)}}, // past date: does not count
		2: {{Free: true}},
		3: {{Free: true}},
	}
	s := catalog.Summarize(dates, tickets, now)
	require.Equal(t, 3, s.ActiveDatesCount)
	require.True(t, s.HasMultipleDates())
	require.Equal(t, now.Add(-1*time.Hour), s.NextStart)
	require.Equal(t, now.Add(52*time.Hour), s.LastEnd)
	require.True(t, s.HasFreeTickets)
	require.False(t, s.HasPaidTickets)
	require.True(t, s.IsEntirelyFree())

	empty := catalog.Summarize(nil, nil, now)
	require.Zero(t, empty.ActiveDatesCount)
	require.True(t, empty.NextStart.IsZero())
	require.False(t, empty.IsEntirelyFree())
}

func TestFormatTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	got := catalog.FormatTime(at, catalog.Zone("Africa/Accra"))
	require.Equal(t, "2026-12-24 18:00:00", got.Plain)
	require.Equal(t, "2026-12-24T18:00:00Z", got.ISO)
	require.Equal(t, "Thu, 24 Dec 2026 6:00 PM", got.Display)
	lagos := catalog.FormatTime(at, catalog.Zone("Africa/Lagos"))
	require.Equal(t, "2026-12-24T19:00:00+01:00", lagos.ISO)
	require.Equal(t, "2026-12-24 19:00:00", lagos.Plain)
	require.Nil(t, catalog.FormatTime(time.Time{}, time.UTC))
	require.Equal(t, "GH₵", catalog.CurrencySymbol("GHS"))
	require.True(t, catalog.ValidCurrency("GHS"))
	require.False(t, catalog.ValidCurrency("ghs"))
	require.False(t, catalog.ValidCurrency("ZZZ"))
}

func TestDisplayInZone(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	require.Equal(t, "Thu, 24 Dec 2026 6:00 PM GMT (Africa/Accra)", catalog.DisplayInZone(at, "Africa/Accra"))
	require.Equal(t, "Thu, 24 Dec 2026 7:00 PM WAT (Africa/Lagos)", catalog.DisplayInZone(at, "Africa/Lagos"))
	require.Equal(t, "Thu, 24 Dec 2026 6:00 PM UTC (UTC)", catalog.DisplayInZone(at, "Nowhere/Else"), "an unknown zone is UTC, and says so")
	require.Empty(t, catalog.DisplayInZone(time.Time{}, "Africa/Accra"))
}
