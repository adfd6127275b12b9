package readcache_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/readcache"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// oneDate is a catalog of one event whose one date ends at
// 2026-12-25T02:00:00Z.
const oneDate = `{
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

type fakeVersions struct {
	v  atomic.Uint64
	ok atomic.Bool
}

func (f *fakeVersions) Version(context.Context) (uint64, bool) { return f.v.Load(), f.ok.Load() }

// TestCache: values are kept until the version moves or the next date ends,
// never across either, and within the budget.
func TestCache(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		_, err := catalog.Import(ctx, db, mustParse(t, oneDate), time.Now())
		require.NoError(t, err)
		end := time.Date(2026, 12, 25, 2, 0, 0, 0, time.UTC) // DATE-1001-1 ends
		var clock atomic.Int64
		clock.Store(end.Add(-time.Hour).UnixNano())
		now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
		vs := &fakeVersions{}
		vs.ok.Store(true)
		c := readcache.NewCache(db, vs, now, 10)
		get := func(key string) (any, bool) { return c.Snapshot().Get(ctx, key) }

		_, hit := get("a")
		require.False(t, hit)
		s := c.Snapshot()
		s.Put(ctx, "a", 1, 1)
		v, hit := get("a")
		require.True(t, hit)
		require.Equal(t, 1, v)

		t.Run("VersionMoves", func(t *testing.T) {
			stale := c.Snapshot()
			_, _ = stale.Get(ctx, "x") // looks before the change
			vs.v.Add(1)
			_, hit := get("a")
			require.False(t, hit, "kept across a catalog change")
			stale.Put(ctx, "b", 2, 1)
			_, hit = get("b")
			require.False(t, hit, "a value read before the change was kept after it")
		})
		t.Run("DateEnds", func(t *testing.T) {
			c.Snapshot().Put(ctx, "a", 1, 1)
			clock.Store(end.Add(-time.Nanosecond).UnixNano())
			_, hit := get("a")
			require.True(t, hit, "still before the date ends")
			clock.Store(end.UnixNano())
			_, hit = get("a")
			require.False(t, hit, "kept after a date ended")
			c.Snapshot().Put(ctx, "a", 1, 1)
			clock.Store(end.Add(24 * time.Hour).UnixNano())
			_, hit = get("a")
			require.True(t, hit, "no date ends any more")
		})
		t.Run("Budget", func(t *testing.T) {
			s := c.Snapshot()
			s.Put(ctx, "big1", 1, 6)
			s.Put(ctx, "big2", 2, 6)
			_, hit := get("big1")
			require.False(t, hit, "over budget: starts over")
			_, hit = get("big2")
			require.True(t, hit)
		})
		t.Run("Unknown", func(t *testing.T) {
			vs.ok.Store(false)
			defer vs.ok.Store(true)
			_, hit := get("big2")
			require.False(t, hit, "nothing is served while changes cannot be told")
			c.Snapshot().Put(ctx, "c", 3, 1)
			vs.ok.Store(true)
			_, hit = get("c")
			require.False(t, hit, "nothing is kept while changes cannot be told")
		})
		t.Run("Nil", func(t *testing.T) {
			var none *readcache.Cache
			s := none.Snapshot()
			s.Put(ctx, "a", 1, 1)
			_, hit := s.Get(ctx, "a")
			require.False(t, hit)
			loads := 0
			for range 2 {
				v, err := readcache.Cached(ctx, s, "a", func(int) int { return 1 }, func() (int, error) { loads++; return 7, nil })
				require.NoError(t, err)
				require.Equal(t, 7, v)
			}
			require.Equal(t, 2, loads)
		})
	})
}
