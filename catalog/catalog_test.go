package catalog_test

import (
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
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
