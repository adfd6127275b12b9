package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestDiscoveryParity sends every discovery filter through REST's events,
// GraphQL's events and eventsConnection, and expects the same events in
// the same order, or the same refusal naming each API's own field.
func TestDiscoveryParity(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		type tc struct {
			name        string
			query, args string
			names       []string // nil: a refusal
			field       string   // the refused REST field
			gqlField    string
		}
		// The demo's dates are placed relative to today's midnight (UTC,
		// Accra's offset all year).
		today := time.Now().UTC().Truncate(24 * time.Hour)
		day := func(n int) string { return today.AddDate(0, 0, n).Format(time.RFC3339) }
		theatre := tb.demo.Catalog.Venues["demo-national-theatre"]
		const (
			highlife = "Highlife Night at the Conference Centre"
			chale    = "Chale Wote Street Art Festival"
			summit   = "Accra Tech Summit"
			cinema   = "Saturday Cinema Club"
			comedy   = "Laugh Out Loud Comedy Special"
			jazz     = "Kumasi Jazz Evening"
			gala     = "Founders' Charity Gala"
			homowo   = "Homowo Harvest Concert"
		)
		list := func(name, query, args string, names ...string) tc {
			return tc{name: name, query: query, args: args, names: append([]string{}, names...)}
		}
		refuse := func(name, query, args, field, gqlField string) tc {
			return tc{name: name, query: query, args: args, field: field, gqlField: gqlField}
		}
		cases := []tc{
			list("ListDefault", "", "", highlife, chale, summit, cinema, comedy, jazz, gala),
			list("ListCity", "city=kumasi", `city: "kumasi"`, jazz),
			list("ListVenue", fmt.Sprintf("venue_id=%d", theatre), fmt.Sprintf("venueId: %d", theatre), cinema, comedy),
			list("ListOnline", "online=true", "online: true", summit),
			list("ListAtVenue", "online=false", "online: false", highlife, chale, summit, cinema, comedy, jazz, gala),
			list("ListFree", "free=true", "free: true", chale),
			list("ListPaid", "free=false", "free: false", highlife, summit, cinema, comedy, jazz, gala),
			list("ListDateRange", "starts_after="+day(10)+"&starts_before="+day(15),
				`startsAfter: "`+day(10)+`", startsBefore: "`+day(15)+`"`, highlife, cinema),
			list("ListSoonest", "order_by=soonest", "orderBy: SOONEST", cinema, comedy, highlife, chale, summit, jazz, gala),
			list("ListSoonestWithPast", "include_past=true&order_by=soonest", "includePast: true, orderBy: SOONEST",
				homowo, cinema, comedy, highlife, chale, summit, jazz, gala),
			// Soonest sorts by the earliest date the filters keep: the
			// cinema's date on day 20, not its earlier ones.
			list("ListRangeSoonest", "starts_after="+day(20)+"&order_by=soonest", `startsAfter: "`+day(20)+`", orderBy: SOONEST`,
				cinema, chale, summit, jazz, gala),
			list("ListSlug", "slug=kumasi-jazz-evening", `slug: "kumasi-jazz-evening"`, jazz),
			list("ListSlugHidden", "slug=staff-rehearsal", `slug: "staff-rehearsal"`),
			list("ListCombined", "city=Accra&free=false&order_by=soonest", `city: "Accra", free: false, orderBy: SOONEST`,
				cinema, comedy, highlife, summit, gala),
			refuse("ErrStartsAfter", "starts_after=tomorrow", `startsAfter: "tomorrow"`, "starts_after", "startsAfter"),
			refuse("ErrStartsBeforeFirst", "starts_after="+day(3)+"&starts_before="+day(2),
				`startsAfter: "`+day(3)+`", startsBefore: "`+day(2)+`"`, "starts_before", "startsBefore"),
			refuse("ErrCityControl", "city=a%09b", `city: "a\tb"`, "city", "city"),
			refuse("ErrSlugTooLong", "slug="+strings.Repeat("s", 201), `slug: "`+strings.Repeat("s", 201)+`"`, "slug", "slug"),
			refuse("ErrVenueIDZero", "venue_id=0", "venueId: 0", "venue_id", "venueId"),
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				args := ""
				if c.args != "" {
					args = "(" + c.args + ")"
				}
				rest := tb.get(t, "/api/v1/events?"+c.query, tb.testKey)
				gql := tb.graphql(t, tb.testKey, `{ events`+args+` { nodes { id name } } }`, nil)
				conn := tb.graphql(t, tb.testKey, `{ eventsConnection(first: 100`+strings.TrimSuffix(strings.Replace(args, "(", ", ", 1), ")")+`) { edges { node { id name } } } }`, nil)
				if c.names != nil {
					require.Equal(t, http.StatusOK, rest.Status, "%s", rest.Raw)
					require.Equal(t, c.names, append([]string{}, names(t, rest)...), "REST")
					require.Equal(t, c.names, gqlNames(t, gql), "GraphQL events")
					require.Equal(t, c.names, connNames(t, conn), "GraphQL eventsConnection")
					return
				}
				r := restAnswer(rest)
				require.Equal(t, "validation_failed", r.Code, "%s", rest.Raw)
				require.Equal(t, []string{c.field}, r.fieldNames())
				for _, res := range []*response{gql, conn} {
					g := gqlAnswer(t, res)
					require.Equal(t, "validation_failed", g.Code, "%s", res.Raw)
					require.Equal(t, []string{c.gqlField}, g.fieldNames())
					require.Equal(t, r.Fields[c.field], g.Fields[c.gqlField], "the same message")
				}
			})
		}
	})
}

// gqlNames are the names of events(…) { nodes { name } }, in order.
func gqlNames(t testing.TB, r *response) []string {
	t.Helper()
	out := []string{}
	for _, n := range r.Body["data"].(map[string]any)["events"].(map[string]any)["nodes"].([]any) {
		out = append(out, n.(map[string]any)["name"].(string))
	}
	return out
}

// connNames are the names of eventsConnection(…) { edges { node { name } } }, in order.
func connNames(t testing.TB, r *response) []string {
	t.Helper()
	out := []string{}
	for _, e := range r.Body["data"].(map[string]any)["eventsConnection"].(map[string]any)["edges"].([]any) {
		out = append(out, e.(map[string]any)["node"].(map[string]any)["name"].(string))
	}
	return out
}
