package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

const connQuery = `query($first: Int, $after: String, $order: EventOrder, $past: Boolean) {
	eventsConnection(first: $first, after: $after, orderBy: $order, includePast: $past) {
		edges { cursor node { id name } }
		pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
	}
}`

// TestEventsConnection walks the cursor connection page by page, in both
// orders, over events that tie on created_at (an import writes them
// together) and one without any date (sorted last soonest first), and
// finds exactly the listing GET /events gives, in the same order.
func TestEventsConnection(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		now := time.Now()
		f := bigCatalog(30, now)
		f.Events = append(f.Events, catalog.EventSpec{Reference: "NODATES", Name: "No dates yet", Slug: "no-dates", Published: true})
		_, err := catalog.Import(context.Background(), db, f, now)
		require.NoError(t, err)

		for _, c := range []struct {
			name, order, rest string
			past              bool
		}{
			{"Newest", "NEWEST", "", false},
			{"Soonest", "SOONEST", "&order_by=soonest", false},
			{"NewestWithPast", "NEWEST", "&include_past=true", true},
			{"SoonestWithPast", "SOONEST", "&order_by=soonest&include_past=true", true},
		} {
			t.Run(c.name, func(t *testing.T) {
				var want []string
				for _, e := range tb.get(t, "/api/v1/events?per_page=100"+c.rest, tb.testKey).Body["data"].([]any) {
					want = append(want, e.(map[string]any)["name"].(string))
				}
				require.Greater(t, len(want), 30)
				if c.past {
					require.Contains(t, want, "No dates yet")
				}
				if c.order == "SOONEST" && c.past {
					require.Equal(t, "No dates yet", want[len(want)-1], "an event without dates sorts last")
				}

				var got []string
				var after any
				for page := 0; ; page++ {
					res := tb.graphql(t, tb.testKey, connQuery, map[string]any{"first": 7, "after": after, "order": c.order, "past": c.past})
					require.Nil(t, res.Body["errors"], "%s", res.Raw)
					conn := res.Body["data"].(map[string]any)["eventsConnection"].(map[string]any)
					edges := conn["edges"].([]any)
					info := conn["pageInfo"].(map[string]any)
					require.Equal(t, page > 0, info["hasPreviousPage"], "page %d", page)
					if len(edges) == 0 {
						require.Nil(t, info["startCursor"])
						require.Nil(t, info["endCursor"])
						require.False(t, info["hasNextPage"].(bool))
						break
					}
					require.Equal(t, edges[0].(map[string]any)["cursor"], info["startCursor"])
					require.Equal(t, edges[len(edges)-1].(map[string]any)["cursor"], info["endCursor"])
					for _, e := range edges {
						got = append(got, e.(map[string]any)["node"].(map[string]any)["name"].(string))
					}
					if !info["hasNextPage"].(bool) {
						require.Equal(t, len(want)%7, len(edges)%7, "the last page")
						break
					}
					require.Len(t, edges, 7)
					after = info["endCursor"]
				}
				require.Equal(t, want, got)
			})
		}

		t.Run("ErrCursorOfOtherOrder", func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, connQuery, map[string]any{"first": 2, "order": "SOONEST"})
			cur := res.Body["data"].(map[string]any)["eventsConnection"].(map[string]any)["pageInfo"].(map[string]any)["endCursor"]
			res = tb.graphql(t, tb.testKey, connQuery, map[string]any{"first": 2, "after": cur})
			ext := res.gqlErrorExt(t)
			require.Equal(t, "validation_failed", ext["code"])
			require.Equal(t, map[string]any{"after": []any{"is a cursor of another order_by"}}, ext["details"])
		})
		t.Run("ErrCursorGarbage", func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, connQuery, map[string]any{"after": "bm9wZQ"})
			ext := res.gqlErrorExt(t)
			require.Equal(t, "validation_failed", ext["code"])
			require.Equal(t, map[string]any{"after": []any{"is not a cursor of this listing"}}, ext["details"])
		})
		t.Run("ErrFirstZero", func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, connQuery, map[string]any{"first": 0})
			ext := res.gqlErrorExt(t)
			require.Equal(t, map[string]any{"first": []any{"must be a positive integer"}}, ext["details"])
		})
	})
}

// TestEventBySlug: the newest visible event with the slug, past ones
// included; hidden events and unknown slugs are event_not_found.
func TestEventBySlug(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		_, err := catalog.Import(context.Background(), db, bigCatalog(3, time.Now()), time.Now())
		require.NoError(t, err)
		q := `query($s: String!) { eventBySlug(slug: $s) { id name slug dates(includePast: true) { id venue { name } tickets { name } } } }`
		for _, c := range []struct{ name, slug, want string }{
			{"OK", "kumasi-jazz-evening", "Kumasi Jazz Evening"},
			{"OKPast", "homowo-harvest-concert", "Homowo Harvest Concert"},
			{"OKNewestOfSame", "event", "Event 2"},
		} {
			t.Run(c.name, func(t *testing.T) {
				res := tb.graphql(t, tb.testKey, q, map[string]any{"s": c.slug})
				require.Nil(t, res.Body["errors"], "%s", res.Raw)
				ev := res.Body["data"].(map[string]any)["eventBySlug"].(map[string]any)
				require.Equal(t, c.want, ev["name"])
				require.Equal(t, c.slug, ev["slug"])
				require.NotEmpty(t, ev["dates"])
			})
		}
		for _, slug := range []string{"staff-rehearsal", "afrobeats-all-nighter", "nope", ""} {
			t.Run("ErrNotFound/"+slug, func(t *testing.T) {
				res := tb.graphql(t, tb.testKey, q, map[string]any{"s": slug})
				ext := res.gqlErrorExt(t)
				require.Equal(t, "event_not_found", ext["code"], "%s", res.Raw)
				require.Equal(t, 404.0, ext["status"])
				require.Equal(t, fmt.Sprintf("Event %q was not found.", slug), res.Body["errors"].([]any)[0].(map[string]any)["message"])
			})
		}
	})
}

// TestEventsRESTFilterErrors: the REST-only spellings of a wrong filter
// (GraphQL's types refuse them before any resolver runs).
func TestEventsRESTFilterErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		for _, c := range []struct {
			name, query string
			details     map[string]any
		}{
			{"ErrOrderBy", "order_by=oldest", map[string]any{"order_by": []any{"must be newest or soonest"}}},
			{"ErrOnline", "online=maybe", map[string]any{"online": []any{"must be true or false"}}},
			{"ErrFree", "free=1x", map[string]any{"free": []any{"must be true or false"}}},
			{"ErrVenueID", "venue_id=abc", map[string]any{"venue_id": []any{"must be a positive integer"}}},
			{"ErrStartsBeforeOffsetless", "starts_before=2026-12-24T18:00:00", map[string]any{
				"starts_before": []any{"must be an RFC 3339 date-time such as 2026-12-24T18:00:00Z"}}},
		} {
			t.Run(c.name, func(t *testing.T) {
				res := tb.get(t, "/api/v1/events?"+c.query, tb.testKey)
				require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Raw)
				require.Equal(t, "validation_failed", res.errorCode())
				require.Equal(t, c.details, res.details())
			})
		}
		t.Run("DefaultsUnchanged", func(t *testing.T) {
			plain := tb.get(t, "/api/v1/events", tb.testKey)
			explicit := tb.get(t, "/api/v1/events?order_by=newest&slug=&city=&starts_after=", tb.testKey)
			require.Equal(t, plain.Body, explicit.Body)
		})
	})
}
