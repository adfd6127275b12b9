package catalog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

const sampleFile = `{
  "venues": [{"reference": "accra-arena", "name": "Accra Arena", "slug": "accra-arena",
     "street": "1 Liberation Rd", "city": "Accra", "state": "Greater Accra", "lat": 5.6037, "lng": -0.1870}],
  "events": [{
      "reference": "EVT-1001", "name": "Highlife Night", "slug": "highlife-night",
      "description": "…", "image_url": "https://img.example/1.jpg", "timezone": "Africa/Accra",
      "published": true, "hidden_from_listings": false, "private": false, "password_protected": false,
      "ussd_code": "33", "ussd_full_code": "*713*33#", "sales_start": null, "sales_end": null,
      "dates": [{
          "reference": "DATE-1001-1", "start": "2026-12-24T18:00:00Z", "end": "2026-12-25T02:00:00Z",
          "online": false, "venue": "accra-arena", "active": true, "payout_locked": false,
          "tickets": [{"reference": "TKT-1001-REG", "name": "Regular", "description": null,
             "free": false, "price": "150.00", "promotional_price": "120.00",
             "quantity": 500, "sold": 0, "tickets_per_attendee": 10,
             "sales_start": null, "sales_end": null, "currency": "GHS"}]
      }]
  }]
}`

func mustParse(t *testing.T, s string) *catalog.File {
	t.Helper()
	f, err := catalog.ParseFile(strings.NewReader(s))
	require.NoError(t, err)
	return f
}

func countRows(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	n, err := db.NewSelect().TableExpr(table).Count(context.Background())
	require.NoError(t, err)
	return int(n)
}

func TestImport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

		res, err := catalog.Import(ctx, db, mustParse(t, sampleFile), t0)
		require.NoError(t, err)
		require.Len(t, res.Venues, 1)
		require.Len(t, res.Tickets, 1)
		tid := res.Tickets["TKT-1001-REG"]

		t.Run("SameFileChangesNothing", func(t *testing.T) {
			res2, err := catalog.Import(ctx, db, mustParse(t, sampleFile), t0.Add(time.Hour))
			require.NoError(t, err)
			require.Equal(t, res, res2)
			var e store.Event
			require.NoError(t, db.NewSelect().Model(&e).Where("reference = ?", "EVT-1001").Scan(ctx))
			require.True(t, e.UpdatedAt.Equal(t0), "updated_at moved to %v", e.UpdatedAt)
			var tk store.Ticket
			require.NoError(t, db.NewSelect().Model(&tk).Where("id = ?", tid).Scan(ctx))
			require.True(t, tk.UpdatedAt.Equal(t0))
		})

		t.Run("EditedFileUpdatesInPlace", func(t *testing.T) {
			edited := strings.Replace(sampleFile, `"price": "150.00"`, `"price": "175.50"`, 1)
			res3, err := catalog.Import(ctx, db, mustParse(t, edited), t0.Add(2*time.Hour))
			require.NoError(t, err)
			require.Equal(t, tid, res3.Tickets["TKT-1001-REG"])
			var tk store.Ticket
			require.NoError(t, db.NewSelect().Model(&tk).Where("id = ?", tid).Scan(ctx))
			require.Equal(t, int64(17550), *tk.Price)
			require.True(t, tk.UpdatedAt.Equal(t0.Add(2*time.Hour)))
			require.Equal(t, 1, countRows(t, db, "tickets"))
		})

		t.Run("ErrBadFileWritesNothing", func(t *testing.T) {
			bad := strings.Replace(sampleFile, `"price": "150.00"`, `"price": "cheap"`, 1)
			bad = strings.Replace(bad, `"reference": "EVT-1001"`, `"reference": "EVT-2002"`, 1)
			_, err := catalog.Import(ctx, db, mustParse(t, bad), t0)
			var fe *catalog.FileError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, err.Error(), `ticket "TKT-1001-REG": price: "cheap"`)
			require.Equal(t, 1, countRows(t, db, "events"))
		})

		t.Run("ErrUnknownVenueRollsBack", func(t *testing.T) {
			bad := strings.Replace(sampleFile, `"venue": "accra-arena"`, `"venue": "nowhere"`, 1)
			bad = strings.Replace(bad, `"name": "Accra Arena"`, `"name": "Renamed Arena"`, 1)
			_, err := catalog.Import(ctx, db, mustParse(t, bad), t0)
			require.ErrorContains(t, err, `date "DATE-1001-1": venue: "nowhere" is neither in the file nor an existing venue`)
			var v store.Venue
			require.NoError(t, db.NewSelect().Model(&v).Where("reference = ?", "accra-arena").Scan(ctx))
			require.Equal(t, "Accra Arena", v.Name, "the venue rename must be rolled back")
		})

		t.Run("ErrQuantityBelowSold", func(t *testing.T) {
			_, err := db.NewUpdate().Model((*store.Ticket)(nil)).Set("sold = 400").Where("id = ?", tid).Exec(ctx)
			require.NoError(t, err)
			bad := strings.Replace(sampleFile, `"quantity": 500`, `"quantity": 300`, 1)
			_, err = catalog.Import(ctx, db, mustParse(t, bad), t0)
			require.ErrorContains(t, err, `ticket "TKT-1001-REG": quantity: 300 is less than the 400 tickets already sold or held`)
		})
	})
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, from, to, want string
	}{
		{"ErrTimezone", `"timezone": "Africa/Accra"`, `"timezone": "Mars/Olympus"`, `event "EVT-1001": timezone: "Mars/Olympus" is not an IANA timezone`},
		{"ErrStart", `"start": "2026-12-24T18:00:00Z"`, `"start": "24/12/2026"`, `date "DATE-1001-1": start: "24/12/2026" is not an RFC 3339 time`},
		{"ErrEndBeforeStart", `"end": "2026-12-25T02:00:00Z"`, `"end": "2026-12-24T17:00:00Z"`, `date "DATE-1001-1": end: must be after start`},
		{"ErrCurrency", `"currency": "GHS"`, `"currency": "CEDI"`, `ticket "TKT-1001-REG": currency: "CEDI" is not an ISO 4217`},
		{"ErrSoldOverQuantity", `"sold": 0`, `"sold": 501`, `ticket "TKT-1001-REG": sold: 501 is more than the quantity 500`},
		{"ErrMissingName", `"name": "Highlife Night"`, `"name": ""`, `event "EVT-1001": name: is required`},
		{"ErrImageURL", `"image_url": "https://img.example/1.jpg"`, `"image_url": "img.jpg"`, `event "EVT-1001": image_url: "img.jpg" is not an absolute http(s) URL`},
		{"ErrPerAttendee", `"tickets_per_attendee": 10`, `"tickets_per_attendee": 0`, `ticket "TKT-1001-REG": tickets_per_attendee: must be at least 1`},
		{"ErrLat", `"lat": 5.6037`, `"lat": 95`, `venue "accra-arena": lat: must be between -90 and 90`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, sampleFile, tt.from)
			err := mustParse(t, strings.Replace(sampleFile, tt.from, tt.to, 1)).Validate()
			require.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("ErrDuplicateReference", func(t *testing.T) {
		f := mustParse(t, sampleFile)
		f.Venues = append(f.Venues, f.Venues[0])
		require.ErrorContains(t, f.Validate(), `venue "accra-arena": reference: appears more than once`)
	})
	t.Run("ErrUnknownKey", func(t *testing.T) {
		_, err := catalog.ParseFile(strings.NewReader(`{"events": [{"referense": "x"}]}`))
		require.ErrorContains(t, err, `unknown field "referense"`)
	})
	t.Run("OK", func(t *testing.T) {
		require.NoError(t, mustParse(t, sampleFile).Validate())
	})
}
