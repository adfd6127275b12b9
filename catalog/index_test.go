package catalog_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// randomCatalog stores n events made to hit every corner of the listing
// filters: hidden and unpublished events, equal creation times, events
// without dates, past, inactive and online dates, venues without a city,
// and tickets free in every way the free filter knows.
func randomCatalog(t *testing.T, db *store.DB, rng *rand.Rand, now time.Time, n int) []store.Venue {
	t.Helper()
	ctx := context.Background()
	city := func(s string) *string { return &s }
	venues := []store.Venue{
		{Reference: "v-accra", Name: "Accra Hall", Slug: "accra-hall", City: city("Accra")},
		{Reference: "v-kumasi", Name: "Kumasi Hall", Slug: "kumasi-hall", City: city("KUMASI")},
		{Reference: "v-tamale", Name: "Tamale Yard", Slug: "tamale-yard", City: city("Tamale")},
		{Reference: "v-nowhere", Name: "Nowhere", Slug: "nowhere"},
	}
	for i := range venues {
		venues[i].CreatedAt, venues[i].UpdatedAt = now, now
	}
	_, err := db.NewInsert().Model(&venues).Returning("id").Exec(ctx)
	require.NoError(t, err)
	words := []string{"Jazz", "Highlife", "Comedy", "Food", "Tech", "Art", "Night", "Fest"}
	price := func(v int64) *int64 { return &v }
	for i := 0; i < n; i++ {
		e := store.Event{Reference: fmt.Sprintf("ev-%d", i), Name: words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))],
			Slug: fmt.Sprintf("ev-%d", i), Timezone: "Africa/Accra", Published: rng.IntN(10) > 0, HiddenFromListings: rng.IntN(10) == 0,
			CreatedAt: now.Add(-time.Duration(rng.IntN(40)) * time.Hour), UpdatedAt: now}
		_, err := db.NewInsert().Model(&e).Returning("id").Exec(ctx)
		require.NoError(t, err)
		for j := range rng.IntN(4) {
			start := now.Add(time.Duration(rng.IntN(240)-120) * time.Hour)
			d := store.EventDate{Reference: fmt.Sprintf("ev-%d-%d", i, j), EventID: e.ID, StartAt: start,
				EndAt: start.Add(time.Duration(1+rng.IntN(5)) * time.Hour), Online: rng.IntN(4) == 0,
				Active: rng.IntN(8) > 0, CreatedAt: now, UpdatedAt: now}
			if rng.IntN(5) > 0 {
				d.VenueID = &venues[rng.IntN(len(venues))].ID
			}
			_, err := db.NewInsert().Model(&d).Returning("id").Exec(ctx)
			require.NoError(t, err)
			for k := range rng.IntN(4) {
				tk := store.Ticket{Reference: fmt.Sprintf("ev-%d-%d-%d", i, j, k), EventDateID: d.ID, Name: "T", Currency: "GHS",
					CreatedAt: now, UpdatedAt: now}
				switch rng.IntN(6) {
				case 0:
					tk.Free = true
				case 1: // no price: free
				case 2:
					tk.Price = price(0)
				case 3:
					tk.Price, tk.PromotionalPrice = price(5000), price(0)
				case 4:
					tk.Price, tk.PromotionalPrice = price(5000), price(4000)
				default:
					tk.Price = price(2500)
				}
				_, err := db.NewInsert().Model(&tk).Returning("id").Exec(ctx)
				require.NoError(t, err)
			}
		}
	}
	return venues
}

// listingCases are listings covering every filter and order the index
// answers, alone and together.
func listingCases(now time.Time, venue int64) []catalog.ListParams {
	yes, no := catalog.OptionalBool{Set: true, Value: true}, catalog.OptionalBool{Set: true, Value: false}
	filters := []func(p *catalog.ListParams){
		func(p *catalog.ListParams) {},
		func(p *catalog.ListParams) { p.Q = "jAzZ" },
		func(p *catalog.ListParams) { p.Q = "t n" },
		func(p *catalog.ListParams) { p.StartsAfter = now.Add(10 * time.Hour) },
		func(p *catalog.ListParams) { p.StartsBefore = now.Add(30 * time.Hour) },
		func(p *catalog.ListParams) {
			p.StartsAfter, p.StartsBefore = now.Add(-50*time.Hour), now.Add(50*time.Hour)
		},
		func(p *catalog.ListParams) { p.City = "kumasi" },
		func(p *catalog.ListParams) { p.VenueID = venue },
		func(p *catalog.ListParams) { p.Online = yes },
		func(p *catalog.ListParams) { p.Online = no },
		func(p *catalog.ListParams) { p.Free = yes },
		func(p *catalog.ListParams) { p.Free = no },
		func(p *catalog.ListParams) {
			p.City, p.Free, p.StartsAfter, p.Q = "Accra", no, now.Add(-20*time.Hour), "a"
		},
	}
	var out []catalog.ListParams
	for _, order := range []string{catalog.Newest, catalog.Soonest} {
		for _, past := range []bool{false, true} {
			for _, f := range filters {
				p := catalog.ListParams{Page: 1, PerPage: 7, OrderBy: order, IncludePast: past}
				f(&p)
				out = append(out, p)
			}
		}
	}
	return out
}

func eventIDs(es []store.Event) []int64 {
	ids := make([]int64, len(es))
	for i := range es {
		ids[i] = es[i].ID
	}
	return ids
}

// requireSameListings compares every listing case (its first, second,
// middle and last pages, one beyond, and its whole cursor walk) between
// SQL and the index.
func requireSameListings(t *testing.T, sql, ix *catalog.Service, cases []catalog.ListParams) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, ix.Index.Warm(ctx))
	for _, p := range cases {
		name := fmt.Sprintf("%+v", p)
		want, err := sql.ListEvents(ctx, p)
		require.NoError(t, err)
		for _, page := range []int{1, 2, want.TotalPages / 2, want.TotalPages, want.TotalPages + 1} {
			if page < 1 {
				continue
			}
			q := p
			q.Page = page
			w, err := sql.ListEvents(ctx, q)
			require.NoError(t, err)
			g, err := ix.ListEvents(ctx, q)
			require.NoError(t, err)
			require.Equal(t, w.Total, g.Total, name)
			require.Equal(t, w.TotalPages, g.TotalPages, name)
			require.Equal(t, eventIDs(w.Events), eventIDs(g.Events), "%s page %d", name, page)
		}
		q := p
		for step := 0; ; step++ {
			w, err := sql.EventsAfter(ctx, q)
			require.NoError(t, err)
			g, err := ix.EventsAfter(ctx, q)
			require.NoError(t, err)
			require.Equal(t, eventIDs(w.Events), eventIDs(g.Events), "%s step %d", name, step)
			require.Equal(t, w.Cursors, g.Cursors, name)
			require.Equal(t, w.HasNext, g.HasNext, name)
			if !w.HasNext {
				break
			}
			r := catalog.ListRequest{After: &w.Cursors[len(w.Cursors)-1], First: &q.PerPage, OrderBy: q.OrderBy}
			next, err := r.Params()
			require.NoError(t, err)
			q.After, q.HasAfter = next.After, true
		}
	}
}

// TestIndexParity: the listing index answers every filter and order as
// the SQL listing does (totals, pages, cursor walks), on a random catalog
// and after each kind of change, which it reads in on both databases.
func TestIndexParity(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		rng := rand.New(rand.NewPCG(41, 1))
		venues := randomCatalog(t, db, rng, now, 60)
		l := store.NewListener(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
		defer l.Close()
		w := store.NewCatalogWatch(db, l)
		clock := func() time.Time { return now }
		sql := &catalog.Service{DB: db, Now: clock}
		ix := &catalog.Service{DB: db, Now: clock, Index: catalog.NewIndex(db, w, catalog.DefaultIndexEvents)}
		// An index whose budget the catalog exceeds lists from SQL.
		small := &catalog.Service{DB: db, Now: clock, Index: catalog.NewIndex(db, w, 5)}
		waitVersion(t, w, "the watch to start", func(uint64) bool { return true })
		cases := listingCases(now, venues[0].ID)
		requireSameListings(t, sql, ix, cases)
		requireSameListings(t, sql, small, cases[:3])

		for _, change := range []string{
			"UPDATE events SET name = 'Jazz Night' WHERE id % 7 = 0",
			"UPDATE events SET hidden_from_listings = NOT hidden_from_listings WHERE id % 11 = 0",
			"UPDATE event_dates SET active = NOT active WHERE id % 5 = 0",
			"UPDATE event_dates SET start_at = start_at + interval '3 hours' WHERE id % 3 = 0",
			"UPDATE tickets SET free = TRUE WHERE id % 4 = 0",
			"UPDATE tickets SET promotional_price = 0 WHERE id % 9 = 0",
			"DELETE FROM tickets WHERE id % 13 = 0",
			"UPDATE venues SET city = 'Kumasi' WHERE reference = 'v-tamale'",
			"UPDATE events SET created_at = created_at - interval '1 hour' WHERE id % 6 = 1",
		} {
			if !db.Postgres() && strings.Contains(change, "interval") {
				continue // SQLite keeps instants as text; the other changes cover it
			}
			before, _ := w.Version(ctx)
			_, err := db.ExecContext(ctx, change)
			require.NoError(t, err, change)
			waitVersion(t, w, change, func(v uint64) bool { return v != before })
			requireSameListings(t, sql, ix, cases)
		}
		// A new event appears in its place.
		before, _ := w.Version(ctx)
		storetest.MustCatalog(t, db, func(c *storetest.Catalog) {
			c.Event.CreatedAt = now.Add(-5 * time.Hour)
			c.Date.StartAt, c.Date.EndAt = now.Add(2*time.Hour), now.Add(4*time.Hour)
			c.Date.VenueID = &venues[1].ID
		})
		waitVersion(t, w, "a new event", func(v uint64) bool { return v != before })
		requireSameListings(t, sql, ix, cases)
	})
}
