package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// TestEffectivePrice holds the price rule's twins together: EffectivePrice
// and IsFree in Go, and store's free and paid listing filters in SQL,
// which must call a ticket free exactly when IsFree does.
func TestEffectivePrice(t *testing.T) {
	tests := []struct {
		name   string
		ticket store.Ticket // the pricing fields
		want   string
		free   bool
	}{
		{"Regular", store.Ticket{Price: ptr[int64](15000)}, "150.00", false},
		{"PromoLower", store.Ticket{Price: ptr[int64](15000), PromotionalPrice: ptr[int64](12000)}, "120.00", false},
		{"PromoOneMinorUnit", store.Ticket{Price: ptr[int64](15000), PromotionalPrice: ptr[int64](1)}, "0.01", false},
		{"PromoEqual", store.Ticket{Price: ptr[int64](15000), PromotionalPrice: ptr[int64](15000)}, "150.00", false},
		{"PromoHigherIgnored", store.Ticket{Price: ptr[int64](15000), PromotionalPrice: ptr[int64](20000)}, "150.00", false},
		{"PromoZeroMakesFree", store.Ticket{Price: ptr[int64](15000), PromotionalPrice: ptr[int64](0)}, "0.00", true},
		{"FreeFlagWins", store.Ticket{Free: true, Price: ptr[int64](5000)}, "0.00", true},
		{"FreeFlagWinsOverPromo", store.Ticket{Free: true, Price: ptr[int64](5000), PromotionalPrice: ptr[int64](4000)}, "0.00", true},
		{"FreeFlagNoPrice", store.Ticket{Free: true}, "0.00", true},
		{"ZeroPrice", store.Ticket{Price: ptr[int64](0)}, "0.00", true},
		{"ZeroPriceZeroPromo", store.Ticket{Price: ptr[int64](0), PromotionalPrice: ptr[int64](0)}, "0.00", true},
		{"ZeroPriceHigherPromo", store.Ticket{Price: ptr[int64](0), PromotionalPrice: ptr[int64](500)}, "0.00", true},
		{"NoPrice", store.Ticket{}, "0.00", true},
		{"NoPriceWithPromo", store.Ticket{PromotionalPrice: ptr[int64](500)}, "0.00", true},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				require.Equal(t, tt.want, catalog.FormatAmount(catalog.EffectivePrice(&tt.ticket)), "EffectivePrice")
				require.Equal(t, tt.free, catalog.IsFree(&tt.ticket), "IsFree")

				c := storetest.MustCatalog(t, db, func(c *storetest.Catalog) {
					c.Ticket.Free, c.Ticket.Price, c.Ticket.PromotionalPrice = tt.ticket.Free, tt.ticket.Price, tt.ticket.PromotionalPrice
				})
				for _, free := range []bool{true, false} {
					_, n, err := store.ListEvents(context.Background(), db,
						store.EventFilter{Slug: c.Event.Slug, Free: &free, Now: time.Now(), Limit: 1})
					require.NoError(t, err)
					require.Equal(t, free == tt.free, n == 1, "listed by the SQL filter free=%t", free)
				}
			})
		}
	})
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

// TestStockRule holds the stock rule's twins together: Fits and Available
// in Go, and the condition store.HoldStock (taking n) and
// store.UpdateTicketCatalog (writing a new quantity, n = 0) write in SQL.
func TestStockRule(t *testing.T) {
	tests := []struct {
		name       string
		quantity   *int64 // nil: unlimited
		sold, held int64
		n          int64 // units taken; 0: the quantity is an import's new one
		fits       bool
		available  int64
	}{
		{"OKUnlimited", nil, 40, 9, 50, true, catalog.Unlimited},
		{"OKUnlimitedNew", nil, 40, 9, 0, true, catalog.Unlimited},
		{"OKFewerThanLeft", ptr[int64](10), 4, 3, 1, true, 3},
		{"OKExactlyLeft", ptr[int64](10), 4, 3, 3, true, 3},
		{"ErrOneMoreThanLeft", ptr[int64](10), 4, 3, 4, false, 3},
		{"ErrHeldCounts", ptr[int64](10), 0, 8, 3, false, 2},
		{"ErrSoldCounts", ptr[int64](10), 8, 0, 3, false, 2},
		{"ErrSoldOut", ptr[int64](5), 3, 2, 1, false, 0},
		{"ErrZeroQuantity", ptr[int64](0), 0, 0, 1, false, 0},
		{"OKNewQuantityZero", ptr[int64](0), 0, 0, 0, true, 0},
		{"OKNewQuantityCoversSoldAndHeld", ptr[int64](5), 3, 2, 0, true, 0},
		{"OKNewQuantityAbove", ptr[int64](6), 3, 2, 0, true, 1},
		{"ErrNewQuantityBelowSoldAndHeld", ptr[int64](4), 3, 2, 0, false, 0},
		{"ErrNewQuantityBelowHeld", ptr[int64](1), 0, 2, 0, false, 0},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := (&store.Ticket{Quantity: tt.quantity, Sold: tt.sold, Held: tt.held}).Stock()
				require.Equal(t, tt.fits, catalog.Fits(s, tt.n), "Fits")
				require.Equal(t, tt.available, catalog.Available(s), "Available")

				// A ticket row with this stock, in a given state.
				ticket := func(quantity *int64) *store.Ticket {
					c := storetest.MustCatalog(t, db, func(c *storetest.Catalog) {
						c.Ticket.Quantity, c.Ticket.Sold, c.Ticket.Held = quantity, tt.sold, tt.held
					})
					return &c.Ticket
				}
				stock := func(id int64) (sold, held int64) {
					ts, err := store.TicketsByIDs(ctx, db, []int64{id})
					require.NoError(t, err)
					require.Len(t, ts, 1)
					return ts[0].Sold, ts[0].Held
				}
				moved := func(ok bool) int64 {
					if ok {
						return tt.n
					}
					return 0
				}
				for _, sell := range []bool{false, true} {
					tk := ticket(tt.quantity)
					ok, err := store.HoldStock(ctx, db, tk.ID, tt.n, sell, time.Now())
					require.NoError(t, err)
					require.Equal(t, tt.fits, ok, "HoldStock sell=%t", sell)
					sold, held := stock(tk.ID)
					if sell {
						require.Equal(t, [2]int64{tt.sold + moved(ok), tt.held}, [2]int64{sold, held}, "sold, held")
					} else {
						require.Equal(t, [2]int64{tt.sold, tt.held + moved(ok)}, [2]int64{sold, held}, "sold, held")
					}
				}
				if tt.n == 0 {
					// The import's case: the row was unlimited, and the
					// file gives it this quantity.
					tk := ticket(nil)
					tk.Quantity = tt.quantity
					ok, err := store.UpdateTicketCatalog(ctx, db, tk)
					require.NoError(t, err)
					require.Equal(t, tt.fits, ok, "UpdateTicketCatalog")
				}
			})
		}
	})
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
