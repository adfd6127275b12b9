package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

const eventFieldsGQL = `id reference name slug description imageUrl activeDatesCount hasMultipleDates
	ussdCode ussdFullCode hasUssd nextStartdate lastEnddate nextStartdateIso lastEnddateIso
	nextStartdateDisplay lastEnddateDisplay timezone createdAt updatedAt
	pricing { hasFreeTickets hasPaidTickets isEntirelyFree }`

const dateFieldsGQL = `id reference eventId startdate enddate startdateIso enddateIso startdateDisplay enddateDisplay
	online venueId venueName venueSlug venueStreet venueCity venueState venueLat venueLng timezone cancelled`

const ticketFieldsGQL = `id reference eventdateId name description free price promotionalprice quantity
	quantityAvailable ticketsperattendee salesstartdate salesenddate salesstartdateIso salesenddateIso
	currency currencySymbol isFree effectivePrice requiresPayment timezone`

// snake converts GraphQL's camelCase names to the REST contract's snake_case.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// snakeKeys rewrites every object key of a decoded GraphQL value.
func snakeKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[snake(k)] = snakeKeys(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = snakeKeys(x)
		}
		return out
	}
	return v
}

func TestParityRESTGraphQL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		for _, ref := range []string{"DEMO-HIGHLIFE", "DEMO-MOVIES", "DEMO-TECHSUMMIT", "DEMO-PAST"} {
			t.Run(ref, func(t *testing.T) {
				id := tb.demo.Catalog.Events[ref]
				q := fmt.Sprintf(`query($id: Int!) { event(id: $id) { %s
					dates(includePast: true) { %s tickets { %s } } } }`, eventFieldsGQL, dateFieldsGQL, ticketFieldsGQL)
				gql := tb.graphql(t, tb.testKey, q, map[string]any{"id": id})
				require.Equal(t, http.StatusOK, gql.Status, "%s", gql.Raw)
				require.Nil(t, gql.Body["errors"], "%s", gql.Raw)
				g := snakeKeys(gql.Body["data"].(map[string]any)["event"]).(map[string]any)

				rest := tb.get(t, fmt.Sprintf("/api/v1/events/%d", id), tb.testKey).Body["data"].(map[string]any)
				gDates := g["dates"].([]any)
				delete(g, "dates")
				require.Equal(t, rest, g, "event")

				restDates := tb.get(t, fmt.Sprintf("/api/v1/events/%d/dates?include_past=true", id), tb.testKey).Body["data"].([]any)
				require.Len(t, gDates, len(restDates))
				for i, rd := range restDates {
					gd := gDates[i].(map[string]any)
					gTickets := gd["tickets"]
					delete(gd, "tickets")
					require.Equal(t, rd, gd, "date %d", i)
					restTickets := tb.get(t, fmt.Sprintf("/api/v1/event-dates/%v/tickets", rd.(map[string]any)["id"]), tb.testKey).Body["data"]
					require.Equal(t, restTickets, gTickets, "tickets of date %d", i)
				}
			})
		}
	})
}

func TestGraphQL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		t.Run("EventsPage", func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, `{ events(perPage: 2, page: 2) { timezone
				pageInfo { page perPage total totalPages hasNext hasPrev } nodes { name } } }`, nil)
			require.Nil(t, res.Body["errors"], "%s", res.Raw)
			page := res.Body["data"].(map[string]any)["events"].(map[string]any)
			require.Equal(t, map[string]any{"page": 2.0, "perPage": 2.0, "total": 7.0, "totalPages": 4.0, "hasNext": true, "hasPrev": true}, page["pageInfo"])
			require.Equal(t, "Africa/Accra", page["timezone"])
			require.Len(t, page["nodes"], 2)
		})
		t.Run("Venue", func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, `query($id: Int!) { eventDate(id: $id) { venue { name city lat } tickets { name } } }`,
				map[string]any{"id": tb.demo.Catalog.EventDates["DEMO-JAZZ-1"]})
			require.Nil(t, res.Body["errors"], "%s", res.Raw)
			d := res.Body["data"].(map[string]any)["eventDate"].(map[string]any)
			require.Equal(t, map[string]any{"name": "Baba Yara Sports Stadium", "city": "Kumasi", "lat": 6.6836}, d["venue"])
		})
		// Errors of a query that ran, and of a document that cannot run
		// (application/json), come with 200 and no extensions.status.
		errCases := []struct {
			name, query, code string
		}{
			{"ErrEventNotFound", fmt.Sprintf(`{ event(id: %d) { id } }`, tb.demo.Catalog.Events["DEMO-HIDDEN"]), "event_not_found"},
			{"ErrEventDateNotFound", `{ eventDate(id: 999999) { id } }`, "event_date_not_found"},
			{"ErrValidation", `{ events(perPage: -1) { nodes { id } } }`, "validation_failed"},
			{"ErrUnknownField", `{ events { nodes { nope } } }`, "validation_failed"},
			{"ErrSyntax", `{ events { `, "validation_failed"},
			// Answered in one response: a deferred fragment would come back
			// null, promising a later part that never comes.
			{"ErrDefer", `{ events { nodes { id ... @defer(label: "d") { dates { id } } } } }`, "validation_failed"},
		}
		for _, tt := range errCases {
			t.Run(tt.name, func(t *testing.T) {
				res := tb.graphql(t, tb.testKey, tt.query, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				ext := res.gqlErrorExt(t)
				require.Equal(t, tt.code, ext["code"], "%s", res.Raw)
				require.NotContains(t, ext, "status")
				require.NotContains(t, string(res.Raw), `"hasNext"`)
			})
		}
		// Answers are written into pooled buffers and objects by
		// graph.objectFields: concurrent queries each get their own answer,
		// whole, and a field asked twice (or through a fragment) once.
		t.Run("ConcurrentAnswers", func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, `{ events(perPage: 4) { nodes { dates { id } } } }`, nil)
			require.Nil(t, res.Body["errors"], "%s", res.Raw)
			var ids []int64
			for _, e := range res.Body["data"].(map[string]any)["events"].(map[string]any)["nodes"].([]any) {
				for _, d := range e.(map[string]any)["dates"].([]any) {
					ids = append(ids, int64(d.(map[string]any)["id"].(float64)))
				}
			}
			require.GreaterOrEqual(t, len(ids), 3)
			want := map[int64]string{}
			for _, id := range ids {
				res := tb.graphql(t, tb.testKey, `query($id: Int!) { eventDate(id: $id) { id id ... on EventDate { id venueName } tickets { id name } } }`, map[string]any{"id": id})
				require.Nil(t, res.Body["errors"], "%s", res.Raw)
				d := res.Body["data"].(map[string]any)["eventDate"].(map[string]any)
				require.Equal(t, float64(id), d["id"])
				require.Contains(t, string(res.Raw), `{"eventDate":{"id":`+strconv.FormatInt(id, 10)+`,"venueName":`, "a response key is written once")
				want[id] = string(res.Raw)
			}
			var wg sync.WaitGroup
			errs := make(chan string, 64)
			for w := range 8 {
				wg.Go(func() {
					for i := range 8 {
						id := ids[(w+i)%len(ids)]
						res := tb.graphql(t, tb.testKey, `query($id: Int!) { eventDate(id: $id) { id id ... on EventDate { id venueName } tickets { id name } } }`, map[string]any{"id": id})
						if string(res.Raw) != want[id] {
							errs <- fmt.Sprintf("date %d: got %s, want %s", id, res.Raw, want[id])
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
		})
		t.Run("Introspection", func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, `{ __schema { queryType { name } } }`, nil)
			require.Nil(t, res.Body["errors"], "%s", res.Raw)
		})
		t.Run("GetQuery", func(t *testing.T) {
			res := tb.get(t, "/graphql?query=%7Bevents%7BpageInfo%7Btotal%7D%7D%7D", tb.testKey)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Equal(t, 7.0, res.Body["data"].(map[string]any)["events"].(map[string]any)["pageInfo"].(map[string]any)["total"])
		})
		t.Run("Playground", func(t *testing.T) {
			res := tb.get(t, "/graphql", "")
			require.Equal(t, http.StatusOK, res.Status)
			require.Contains(t, res.Header.Get("Content-Type"), "text/html")
			require.Contains(t, string(res.Raw), "X-API-Key")
		})
	})
}

// bigCatalog builds n published events, each with two dates of three tickets.
func bigCatalog(n int, now time.Time) *catalog.File {
	str := func(s string) *string { return &s }
	f := &catalog.File{}
	for v := 0; v < 3; v++ {
		f.Venues = append(f.Venues, catalog.VenueSpec{Reference: fmt.Sprintf("V%d", v), Name: "Venue", Slug: "venue", City: str("Accra")})
	}
	for e := 0; e < n; e++ {
		ev := catalog.EventSpec{Reference: fmt.Sprintf("E%d", e), Name: fmt.Sprintf("Event %d", e), Slug: "event", Published: true}
		for d := 0; d < 2; d++ {
			start := now.Add(time.Duration(24*(e+d+1)) * time.Hour).Format(time.RFC3339)
			end := now.Add(time.Duration(24*(e+d+1)+3) * time.Hour).Format(time.RFC3339)
			ds := catalog.DateSpec{Reference: fmt.Sprintf("E%dD%d", e, d), Start: start, End: end, Venue: str(fmt.Sprintf("V%d", (e+d)%3))}
			for k := 0; k < 3; k++ {
				ds.Tickets = append(ds.Tickets, catalog.TicketSpec{
					Reference: fmt.Sprintf("E%dD%dT%d", e, d, k), Name: "Ticket", Price: str("10.00"), Currency: "GHS",
				})
			}
			ev.Dates = append(ev.Dates, ds)
		}
		f.Events = append(f.Events, ev)
	}
	return f
}

// TestQueryCount proves the catalog has no N+1: a request over 5 events and
// one over 50 make the same small number of SQL statements, whether the
// catalog cache is cold (the first read after a change) or warm.
func TestQueryCount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		tb.catalogWatched(t)
		_, err := catalog.Import(context.Background(), db, bigCatalog(60, time.Now()), time.Now())
		require.NoError(t, err)

		nested := `query($n: Int!) { events(perPage: $n) { nodes { id name pricing { isEntirelyFree }
			dates { id venueName venue { name } tickets { id effectivePrice quantityAvailable } } } } }`
		count := func(cold bool, run func() *response) int {
			if cold {
				tb.changeCatalog(t, func() {
					_, err := db.NewUpdate().Model((*store.Venue)(nil)).Set("name = name").Where("reference = ?", "V0").Exec(context.Background())
					require.NoError(t, err)
				})
				// The listing index reads what the change named (one
				// venue, one statement) before the count: whichever request
				// comes first pays for it, and this test counts per page.
				if ix := tb.m.Catalog.Index; ix != nil {
					require.NoError(t, ix.Warm(context.Background()))
				}
			} else {
				run() // warms the cache for this very request
			}
			tb.queries.Reset()
			res := run()
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Nil(t, res.Body["errors"], "%s", res.Raw)
			return tb.queries.N()
		}
		gql := func(cold bool, n int) int {
			return count(cold, func() *response { return tb.graphql(t, tb.testKey, nested, map[string]any{"n": n}) })
		}
		rest := func(cold bool, n int) int {
			return count(cold, func() *response { return tb.get(t, fmt.Sprintf("/api/v1/events?per_page=%d", n), tb.testKey) })
		}
		// SQLite reads the catalog's version with a statement of its own.
		version := 0
		if !db.Postgres() {
			version = 1
		}
		key := keyStatements(db)
		// The key is looked up once, by the first request that shows it.
		require.Equal(t, http.StatusOK, tb.get(t, "/api/v1/events?per_page=1", tb.testKey).Status)
		// The cursor connection and the discovery filters, soonest first.
		connQ := `query($n: Int!) { eventsConnection(first: $n, city: "Accra", free: false, orderBy: SOONEST) {
			pageInfo { hasNextPage endCursor } edges { cursor node { id name pricing { isEntirelyFree }
			dates { id venueName venue { name } tickets { id effectivePrice quantityAvailable } } } } } }`
		conn := func(cold bool, n int) int {
			return count(cold, func() *response { return tb.graphql(t, tb.testKey, connQ, map[string]any{"n": n}) })
		}
		since := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
		filtered := func(cold bool, n int) int {
			return count(cold, func() *response {
				return tb.get(t, fmt.Sprintf("/api/v1/events?per_page=%d&city=Accra&free=false&order_by=soonest&starts_after=%s",
					n, since), tb.testKey)
			})
		}
		g5, g50, warmG5, warmG50 := gql(true, 5), gql(true, 50), gql(false, 5), gql(false, 50)
		r5, r100, warmR5, warmR100 := rest(true, 5), rest(true, 100), rest(false, 5), rest(false, 100)
		c5, c50, warmC5, warmC50 := conn(true, 5), conn(true, 50), conn(false, 5), conn(false, 50)
		f5, f100, warmF5, warmF100 := filtered(true, 5), filtered(true, 100), filtered(false, 5), filtered(false, 100)
		t.Logf("statements: graphql 5 events=%d 50 events=%d (warm %d, %d); rest per_page=5 %d, per_page=100 %d (warm %d, %d)",
			g5, g50, warmG5, warmG50, r5, r100, warmR5, warmR100)
		t.Logf("statements: eventsConnection first 5=%d 50=%d (warm %d, %d); filtered rest per_page=5 %d, per_page=100 %d (warm %d, %d)",
			c5, c50, warmC5, warmC50, f5, f100, warmF5, warmF100)
		require.Equal(t, g5, g50, "GraphQL statements grow with the page")
		require.Equal(t, r5, r100, "REST statements grow with the page")
		require.Equal(t, warmG5, warmG50, "warm GraphQL statements grow with the page")
		require.Equal(t, warmR5, warmR100, "warm REST statements grow with the page")
		require.Equal(t, c5, c50, "connection statements grow with the page")
		require.Equal(t, f5, f100, "filtered REST statements grow with the page")
		require.Equal(t, warmC5, warmC50, "warm connection statements grow with the page")
		require.Equal(t, warmF5, warmF100, "warm filtered REST statements grow with the page")
		// The connection counts nothing: one statement fewer than a page.
		require.LessOrEqual(t, c50, 6+key+version)
		require.LessOrEqual(t, f100, 5+key+version)
		require.Equal(t, 1+key+version, warmC50)
		require.Equal(t, key+version, warmF100)
		// Cold REST: when the next date ends + count + page + dates +
		// pricing fields (on PostgreSQL the listing index counts, and the
		// page is read by id). GraphQL adds the full tickets and the venues.
		require.LessOrEqual(t, r100, 5+key+version)
		require.LessOrEqual(t, g50, 7+key+version)
		// Warm: the key (cached); GraphQL reads the live stock of the
		// tickets it shows.
		require.Equal(t, key+version, warmR100)
		require.Equal(t, 1+key+version, warmG50)

		// Tickets that show no live availability read no stock; asked
		// for anywhere in their selection, a fragment's included, it is
		// read.
		const page = `query($n: Int!) { events(perPage: $n) { nodes { id dates { id tickets { id %s } } } } }`
		for _, c := range []struct {
			query string
			want  int
		}{
			{fmt.Sprintf(page, "name price quantity"), key + version},
			{fmt.Sprintf(page, "...T") + ` fragment T on Ticket { name quantityAvailable }`, 1 + key + version},
			{fmt.Sprintf(page, "... on Ticket { quantityAvailable }"), 1 + key + version},
			{fmt.Sprintf(page, "quantityAvailable @skip(if: true)"), 1 + key + version},
		} {
			got := count(false, func() *response { return tb.graphql(t, tb.testKey, c.query, map[string]any{"n": 50}) })
			require.Equal(t, c.want, got, "%s", c.query)
		}
	})
}
