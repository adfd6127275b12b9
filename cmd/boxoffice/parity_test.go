package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// answer is what either API said, reduced to what must agree: the error
// code, the HTTP status REST sent or GraphQL's extensions.status carried,
// the message, and the field paths of the details.
type answer struct {
	Code    string
	Status  int
	Message string
	Fields  []string
}

func restAnswer(r *response) answer {
	a := answer{Code: r.errorCode(), Status: r.Status, Message: r.errorMessage()}
	for k := range r.details() {
		a.Fields = append(a.Fields, k)
	}
	return a
}

func gqlAnswer(t testing.TB, r *response) answer {
	t.Helper()
	errs, _ := r.Body["errors"].([]any)
	if len(errs) == 0 {
		return answer{Status: r.Status}
	}
	require.Len(t, errs, 1, "%s", r.Raw)
	e := errs[0].(map[string]any)
	ext, _ := e["extensions"].(map[string]any)
	a := answer{Code: ext["code"].(string), Status: int(ext["status"].(float64)), Message: e["message"].(string)}
	d, _ := ext["details"].(map[string]any)
	for k := range d {
		a.Fields = append(a.Fields, k)
	}
	return a
}

// gqlInput turns a REST checkout body into the GraphQL input: the same
// values under camelCase names, metadata kept as sent.
func gqlInput(v any, inMetadata bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			name := k
			if !inMetadata {
				name = snakeToCamel(k)
			}
			out[name] = gqlInput(x, inMetadata || k == "metadata")
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = gqlInput(x, inMetadata)
		}
		return out
	}
	return v
}

func snakeToCamel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

const checkoutMutation = `mutation($in: CheckoutSessionInput!, $key: String) {
	createCheckoutSession(input: $in, idempotencyKey: $key) { orderReference status } }`

// TestRulesParity sends every rule reachable through both APIs through
// both, and expects the same code, status and message; validation details
// name the same fields, in each API's own names.
func TestRulesParity(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)

		type tc struct {
			name string
			rest func(t *testing.T) *response
			gql  func(t *testing.T) *response
			// conn, when set, asks eventsConnection with the same filters,
			// which must answer as gql does.
			conn func(t *testing.T) *response
			want answer
			// gqlFields are the GraphQL names of want.Fields.
			gqlFields []string
			// names, when set, are the events every API must list, in order.
			names []string
		}
		events := func(query string, args string) tc {
			return tc{
				rest: func(t *testing.T) *response { return tb.get(t, "/api/v1/events?"+query, tb.testKey) },
				gql: func(t *testing.T) *response {
					if args != "" {
						args = "(" + args + ")"
					}
					return tb.graphql(t, tb.testKey, `{ events`+args+` { nodes { id name } pageInfo { page perPage hasPrev hasNext } } }`, nil)
				},
			}
		}
		// filtered is events with filters, which eventsConnection takes too.
		filtered := func(query string, args string) tc {
			c := events(query, args)
			c.conn = func(t *testing.T) *response {
				return tb.graphql(t, tb.testKey, `{ eventsConnection(first: 100, `+args+`) { edges { node { id name } } } }`, nil)
			}
			return c
		}
		listing := func(c tc, name string, names ...string) tc {
			c.name, c.want, c.names = name, answer{Status: 200}, append([]string{}, names...)
			return c
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
		order := func(ref string) tc {
			return tc{
				rest: func(t *testing.T) *response {
					return tb.get(t, "/api/v1/orders/"+url.PathEscape(ref), tb.testKey)
				},
				gql: func(t *testing.T) *response {
					return tb.graphql(t, tb.testKey, `query($r: String!) { order(reference: $r) { reference } }`, map[string]any{"r": ref})
				},
			}
		}
		checkout := func(key string, body map[string]any) tc {
			return tc{
				rest: func(t *testing.T) *response { return tb.checkout(t, tb.testKey, key, body) },
				gql: func(t *testing.T) *response {
					vars := map[string]any{"in": gqlInput(body, false)}
					if key != "" {
						vars["key"] = key
					}
					return tb.graphql(t, tb.testKey, checkoutMutation, vars)
				},
			}
		}
		invalid := func(fields ...string) answer {
			return answer{Code: "validation_failed", Status: 422, Message: "The request payload failed validation.", Fields: fields}
		}
		named := func(c tc, name string, want answer, gqlFields ...string) tc {
			c.name, c.want, c.gqlFields = name, want, gqlFields
			return c
		}

		cases := []tc{
			named(events("per_page=0", "perPage: 0"), "ErrPerPageZero", invalid("per_page"), "perPage"),
			named(events("page=0", "page: 0"), "ErrPageZero", invalid("page"), "page"),
			named(events("page=-3&per_page=-1", "page: -3, perPage: -1"), "ErrBothNegative", invalid("page", "per_page"), "page", "perPage"),
			named(events("q="+url.QueryEscape("a\x00b"), `q: "a\u0000b"`), "ErrQNul", invalid("q"), "q"),
			named(events("q="+strings.Repeat("x", 201), `q: "`+strings.Repeat("x", 201)+`"`), "ErrQTooLong", invalid("q"), "q"),
			// Discovery: one listing per filter, the same on every API.
			listing(filtered("", ""), "ListDefault", highlife, chale, summit, cinema, comedy, jazz, gala),
			listing(filtered("city=kumasi", `city: "kumasi"`), "ListCity", jazz),
			listing(filtered(fmt.Sprintf("venue_id=%d", theatre), fmt.Sprintf("venueId: %d", theatre)), "ListVenue", cinema, comedy),
			listing(filtered("online=true", "online: true"), "ListOnline", summit),
			listing(filtered("online=false", "online: false"), "ListAtVenue", highlife, chale, summit, cinema, comedy, jazz, gala),
			listing(filtered("free=true", "free: true"), "ListFree", chale),
			listing(filtered("free=false", "free: false"), "ListPaid", highlife, summit, cinema, comedy, jazz, gala),
			listing(filtered("starts_after="+day(10)+"&starts_before="+day(15), `startsAfter: "`+day(10)+`", startsBefore: "`+day(15)+`"`),
				"ListDateRange", highlife, cinema),
			listing(filtered("order_by=soonest", "orderBy: SOONEST"), "ListSoonest", cinema, comedy, highlife, chale, summit, jazz, gala),
			listing(filtered("include_past=true&order_by=soonest", "includePast: true, orderBy: SOONEST"), "ListSoonestWithPast",
				homowo, cinema, comedy, highlife, chale, summit, jazz, gala),
			// Soonest sorts by the earliest date the filters keep: the
			// cinema's date on day 20, not its earlier ones.
			listing(filtered("starts_after="+day(20)+"&order_by=soonest", `startsAfter: "`+day(20)+`", orderBy: SOONEST`),
				"ListRangeSoonest", cinema, chale, summit, jazz, gala),
			listing(filtered("slug=kumasi-jazz-evening", `slug: "kumasi-jazz-evening"`), "ListSlug", jazz),
			listing(filtered("slug=staff-rehearsal", `slug: "staff-rehearsal"`), "ListSlugHidden"),
			listing(filtered("city=Accra&free=false&order_by=soonest", `city: "Accra", free: false, orderBy: SOONEST`),
				"ListCombined", cinema, comedy, highlife, summit, gala),
			named(filtered("starts_after=tomorrow", `startsAfter: "tomorrow"`), "ErrStartsAfter", invalid("starts_after"), "startsAfter"),
			named(filtered("starts_after="+day(3)+"&starts_before="+day(2), `startsAfter: "`+day(3)+`", startsBefore: "`+day(2)+`"`),
				"ErrStartsBeforeFirst", invalid("starts_before"), "startsBefore"),
			named(filtered("city=a%09b", `city: "a\tb"`), "ErrCityControl", invalid("city"), "city"),
			named(filtered("slug="+strings.Repeat("s", 201), `slug: "`+strings.Repeat("s", 201)+`"`), "ErrSlugTooLong", invalid("slug"), "slug"),
			named(filtered("venue_id=0", "venueId: 0"), "ErrVenueIDZero", invalid("venue_id"), "venueId"),
			named(order("sbx_\x00abc"), "ErrOrderReferenceNul",
				answer{Code: "order_not_found", Status: 404, Message: "Order sbx_\x00abc was not found for this app."}),
			named(order("sbx_"+strings.Repeat("a", 200)), "ErrOrderReferenceLong",
				answer{Code: "order_not_found", Status: 404, Message: "Order sbx_" + strings.Repeat("a", 200) + " was not found for this app."}),
			named(order("ord_abc"), "ErrEnvironmentMismatch",
				answer{Code: "environment_mismatch", Status: 403, Message: "Order ord_abc belongs to the live environment; use a live key to read it."}),
			named(checkout("", tb.highlife(1)), "ErrMissingIdempotencyKey",
				answer{Code: "missing_idempotency_key", Status: 400, Message: "The Idempotency-Key header is required."}),
			// HTTP carries no NUL in a header; a tab is the control
			// character both can carry. GraphQL's NUL is checked below.
			named(checkout("key\twith-tab", tb.highlife(1)), "ErrIdempotencyKeyControl",
				answer{Code: "invalid_idempotency_key", Status: 400, Message: "The Idempotency-Key header must be UTF-8 text without control characters."}),
			named(checkout(newIdemKey(), with(tb.highlife(1), "items.0.quantity", 0)), "ErrQuantityZero",
				invalid("items.0.quantity"), "input.items.0.quantity"),
			named(checkout(newIdemKey(), with(with(tb.highlife(1), "event_id", nil), "customer.email", "nope")), "ErrSeveralFields",
				invalid("event_id", "customer.email"), "input.eventId", "input.customer.email"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "customer.name", "Ama\x00")), "ErrNameNul",
				invalid("customer.name"), "input.customer.name"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "metadata", map[string]any{"k": "a\x00b"})), "ErrMetadataValueNul",
				invalid("metadata.k"), "input.metadata.k"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "metadata", map[string]any{"first_name": "Ama Mensah"})), "ErrMetadataPersonal",
				invalid("metadata.first_name"), "input.metadata.first_name"),
		}
		for _, bad := range []any{"a string", 42, []any{"a", "list"}, true} {
			cases = append(cases, named(checkout(newIdemKey(), with(tb.highlife(1), "metadata", bad)), "ErrMetadataNotObject",
				invalid("metadata"), "input.metadata"))
		}

		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				restRes, gqlRes := c.rest(t), c.gql(t)
				rest, gql := restAnswer(restRes), gqlAnswer(t, gqlRes)
				if c.conn != nil {
					connRes := c.conn(t)
					require.Equal(t, gql, gqlAnswer(t, connRes), "eventsConnection answers as events")
					if c.names != nil {
						require.Equal(t, c.names, connNames(t, connRes), "eventsConnection")
					}
				}
				if c.names != nil {
					require.Equal(t, c.names, append([]string{}, names(t, restRes)...), "REST")
					require.Equal(t, c.names, gqlNames(t, gqlRes), "GraphQL")
				}
				want := c.want
				require.ElementsMatch(t, want.Fields, rest.Fields, "REST fields")
				require.ElementsMatch(t, c.gqlFields, gql.Fields, "GraphQL fields")
				want.Fields, rest.Fields, gql.Fields = nil, nil, nil
				require.Equal(t, want, rest, "REST")
				require.Equal(t, want, gql, "GraphQL")
			})
		}

		t.Run("ErrIdempotencyKeyNulGraphQL", func(t *testing.T) {
			g := gqlAnswer(t, tb.graphql(t, tb.testKey, checkoutMutation, map[string]any{"in": gqlInput(tb.highlife(1), false), "key": "a\x00b"}))
			require.Equal(t, answer{Code: "invalid_idempotency_key", Status: 400,
				Message: "The Idempotency-Key header must be UTF-8 text without control characters."}, g)
		})

		t.Run("PastTheLastPage", func(t *testing.T) {
			res := tb.get(t, "/api/v1/events?page=9223372036854775807", tb.testKey)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Empty(t, res.Body["data"])
			meta := res.Body["meta"].(map[string]any)
			require.Equal(t, 9223372036854775807.0, meta["page"])
			require.Equal(t, true, meta["has_prev"])
			require.Equal(t, false, meta["has_next"])

			g := tb.graphql(t, tb.testKey, `{ events(page: 2147483647, perPage: 500) { nodes { id } pageInfo { page perPage hasPrev hasNext } } }`, nil)
			require.Nil(t, g.Body["errors"], "%s", g.Raw)
			ev := g.Body["data"].(map[string]any)["events"].(map[string]any)
			require.Empty(t, ev["nodes"])
			require.Equal(t, map[string]any{"page": 2147483647.0, "perPage": 100.0, "hasPrev": true, "hasNext": false}, ev["pageInfo"])
		})
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

// TestRESTTypeErrors: every JSON type error of a checkout body is
// reported at once, each with its full path (GraphQL's own type system
// refuses such values before any resolver runs).
func TestRESTTypeErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		body := tb.highlife(1)
		body["items"] = []any{
			map[string]any{"ticket_id": "nineteen", "quantity": "2"},
			map[string]any{"ticket_id": 20, "quantity": 1.5},
			"not an object",
		}
		body["customer"] = map[string]any{"name": 7, "email": "ama@example.com", "phone": false}
		body["event_id"] = nil
		body["success_url"] = []any{}
		res := tb.checkout(t, tb.testKey, newIdemKey(), body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{
			"items.0.ticket_id": []any{"must be an integer"},
			"items.0.quantity":  []any{"must be an integer"},
			"items.1.quantity":  []any{"must be an integer"},
			"items.2":           []any{"must be an object with ticket_id and quantity"},
			"customer.name":     []any{"must be a string"},
			"customer.phone":    []any{"must be a string"},
			"event_id":          []any{"is required"},
			"success_url":       []any{"must be a string"},
		}, res.details())

		res = tb.checkout(t, tb.testKey, newIdemKey(), []byte(`{"event_id": 1,`))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)
		require.Equal(t, []string{"body"}, restAnswer(res).Fields)
		res = tb.checkout(t, tb.testKey, newIdemKey(), []byte(`[1, 2]`))
		require.Equal(t, map[string]any{"body": []any{"must be a JSON object"}}, res.details())
	})
}

// TestCheckoutLimitFirst: over the checkout limit, both APIs answer 429
// before looking at the Idempotency-Key or the body (DESIGN.md's order).
func TestCheckoutLimitFirst(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, limits(1<<20, 1<<20, 1<<20, 1))
		require.Equal(t, http.StatusCreated, tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).Status)

		for name, c := range map[string]struct {
			key  string
			body map[string]any
		}{
			"MissingKey":  {"", tb.highlife(1)},
			"InvalidBody": {newIdemKey(), with(tb.highlife(1), "items", nil)},
			"Valid":       {newIdemKey(), tb.highlife(1)},
		} {
			t.Run(name, func(t *testing.T) {
				rest := tb.checkout(t, tb.testKey, c.key, c.body)
				require.Equal(t, http.StatusTooManyRequests, rest.Status, "%s", rest.Raw)
				require.NotEmpty(t, rest.Header.Get("Retry-After"))
				vars := map[string]any{"in": gqlInput(c.body, false)}
				if c.key != "" {
					vars["key"] = c.key
				}
				g := gqlAnswer(t, tb.graphql(t, tb.testKey, checkoutMutation, vars))
				require.Equal(t, restAnswer(rest), g)
			})
		}
	})
}
