package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestDateOnSale(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 24, 20, 0, 0, 0, time.UTC)
	date := func(edit func(d *store.EventDate)) *store.EventDate {
		d := &store.EventDate{ID: 7, StartAt: now.Add(time.Hour), EndAt: now.Add(9 * time.Hour), Active: true}
		edit(d)
		return d
	}
	tests := []struct {
		name     string
		date     *store.EventDate
		wantMsg  string // "" when on sale
		upcoming bool   // what listings say of the same date
	}{
		{"OK", date(func(*store.EventDate) {}), "", true},
		{"OKStarted", date(func(d *store.EventDate) { d.StartAt = now.Add(-time.Hour) }), "", true},
		{"ErrInactive", date(func(d *store.EventDate) { d.Active = false }), "Event date 7 is not active.", false},
		{"ErrEnded", date(func(d *store.EventDate) { d.EndAt = now.Add(-time.Second) }), "Event date 7 has ended.", false},
		{"ErrEndsNow", date(func(d *store.EventDate) { d.EndAt = now }), "Event date 7 has ended.", false},
		{"ErrInactiveBeforeEnded", date(func(d *store.EventDate) { d.Active, d.EndAt = false, now }), "Event date 7 is not active.", false},
		{"ErrPayoutLocked", date(func(d *store.EventDate) { d.PayoutLocked = true }), "Event date 7 is closed for sales.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := catalog.DateOnSale(tt.date, now)
			require.Equal(t, tt.upcoming, catalog.Upcoming(tt.date, now), "Upcoming")
			if tt.wantMsg == "" {
				require.NoError(t, err)
				return
			}
			ae := apperr.From(err)
			require.Equal(t, apperr.EventDateNotAvailable, ae.Code)
			require.Equal(t, tt.wantMsg, ae.Message)
			require.Equal(t, 422, ae.Status())
		})
	}
}

// TestUpcoming holds the upcoming-date rule's twins together: Upcoming in
// Go, and in SQL the listings' date filter, their free-ticket filter and
// NextDateEnd. A date's end is never NULL (the column is NOT NULL), and
// instants are stored to the microsecond, so the cases come to that
// precision too.
func TestUpcoming(t *testing.T) {
	utc := time.Date(2030, 3, 1, 12, 0, 0, 0, time.UTC)
	east, west := time.FixedZone("UTC+05:30", 5*3600+1800), time.FixedZone("UTC-03:00", -3*3600)
	tests := []struct {
		name   string
		active bool
		now    time.Time
		end    func(now time.Time) time.Time
		want   bool
	}{
		{"OK", true, utc, func(now time.Time) time.Time { return now.Add(time.Hour) }, true},
		{"OKEndsInASecond", true, utc, func(now time.Time) time.Time { return now.Add(time.Second) }, true},
		{"OKEndsInAMicrosecond", true, utc, func(now time.Time) time.Time { return now.Add(time.Microsecond) }, true},
		{"OKNowJustBeforeTheEnd", true, utc.Add(-time.Nanosecond), func(time.Time) time.Time { return utc }, true},
		{"ErrEndsNow", true, utc, func(now time.Time) time.Time { return now }, false},
		{"ErrEndedASecondAgo", true, utc, func(now time.Time) time.Time { return now.Add(-time.Second) }, false},
		{"ErrEndedAMicrosecondAgo", true, utc, func(now time.Time) time.Time { return now.Add(-time.Microsecond) }, false},
		{"ErrNowWithinTheEndsMicrosecond", true, utc.Add(999 * time.Nanosecond), func(time.Time) time.Time { return utc }, false},
		{"ErrInactive", false, utc, func(now time.Time) time.Time { return now.Add(time.Hour) }, false},
		{"ErrInactiveEnded", false, utc, func(now time.Time) time.Time { return now.Add(-time.Hour) }, false},
		// Instants compare, not wall clocks: 17:30 in UTC+05:30 is noon UTC.
		{"OKNowInAnotherZone", true, utc.In(east), func(time.Time) time.Time { return utc.Add(time.Second) }, true},
		{"ErrEndsNowInAnotherZone", true, utc.In(east), func(now time.Time) time.Time { return now.In(west) }, false},
		{"ErrEndedInAZoneWhoseClockIsLater", true, utc, func(now time.Time) time.Time { return now.Add(-time.Minute).In(east) }, false},
		{"OKEndsInAZoneWhoseClockIsEarlier", true, utc, func(now time.Time) time.Time { return now.Add(time.Minute).In(west) }, true},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				// Each case lives a month after the one before, so the
				// dates of other cases are never the next to end.
				shift := time.Duration(i) * 30 * 24 * time.Hour
				now := tt.now.Add(shift)
				c := storetest.MustCatalog(t, db, func(c *storetest.Catalog) {
					c.Date.Active = tt.active
					c.Date.EndAt = tt.end(tt.now).Add(shift)
					c.Date.StartAt = c.Date.EndAt.Add(-2 * time.Hour)
					c.Ticket.Free = true
				})
				stored, err := store.EventDatesByReferences(ctx, db, []string{c.Date.Reference})
				require.NoError(t, err)
				require.Len(t, stored, 1)
				require.True(t, stored[0].EndAt.Equal(c.Date.EndAt), "the end is stored exactly")
				require.Equal(t, tt.want, catalog.Upcoming(&stored[0], now), "Upcoming")

				yes := true
				for _, f := range []store.EventFilter{{Now: now}, {Now: now, IncludePast: true, Free: &yes}} {
					f.Slug, f.Limit = c.Event.Slug, 1
					_, n, err := store.ListEvents(ctx, db, f)
					require.NoError(t, err)
					require.Equal(t, tt.want, n == 1, "listed (free filter: %t)", f.Free != nil)
				}
				next, err := store.NextDateEnd(ctx, db, now)
				require.NoError(t, err)
				require.Equal(t, tt.want, next.Equal(c.Date.EndAt), "NextDateEnd is this date's end")
			})
		}
	})
}
