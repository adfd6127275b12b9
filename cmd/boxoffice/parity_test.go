package main

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// answer is what either API said, reduced to what must agree: the error
// code, the message, and the messages of each field path (REST's details;
// GraphQL's extensions.details, or the userErrors of the checkout
// mutation). Status is REST's; GraphQL answers these with 200.
type answer struct {
	Code    string
	Status  int
	Message string
	Fields  map[string][]string
}

func restAnswer(r *response) answer {
	a := answer{Code: r.errorCode(), Status: r.Status, Message: r.errorMessage()}
	for k, v := range r.details() {
		a.add(k, v.([]any)...)
	}
	return a
}

func (a *answer) add(field string, msgs ...any) {
	if a.Fields == nil {
		a.Fields = map[string][]string{}
	}
	if _, ok := a.Fields[field]; !ok {
		a.Fields[field] = []string{}
	}
	for _, m := range msgs {
		a.Fields[field] = append(a.Fields[field], m.(string))
	}
}

// fieldNames are the field paths of an answer, sorted.
func (a answer) fieldNames() []string {
	out := make([]string, 0, len(a.Fields))
	for k := range a.Fields {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// gqlAnswer reads a GraphQL answer: the one top-level error, or the
// userErrors of a mutation's payload (all of one code; a validation
// refusal has a message per field and none of its own). A top-level error
// carries extensions.status only when the HTTP status is not 200, and then
// equal to it.
func gqlAnswer(t testing.TB, r *response) answer {
	t.Helper()
	a := answer{Status: r.Status}
	if errs, _ := r.Body["errors"].([]any); len(errs) > 0 {
		require.Len(t, errs, 1, "%s", r.Raw)
		e := errs[0].(map[string]any)
		ext, _ := e["extensions"].(map[string]any)
		if r.Status == http.StatusOK {
			require.NotContains(t, ext, "status", "a 200 answer's errors carry no status: %s", r.Raw)
		} else {
			require.EqualValues(t, r.Status, ext["status"], "%s", r.Raw)
		}
		a.Code, a.Message = ext["code"].(string), e["message"].(string)
		d, _ := ext["details"].(map[string]any)
		for k, v := range d {
			a.add(k, v.([]any)...)
		}
		return a
	}
	data, _ := r.Body["data"].(map[string]any)
	var ues []any
	for _, field := range data {
		if payload, ok := field.(map[string]any); ok {
			if u, ok := payload["userErrors"].([]any); ok {
				ues = append(ues, u...)
			}
		}
	}
	for _, x := range ues {
		ue := x.(map[string]any)
		if a.Code == "" {
			a.Code = ue["code"].(string)
		}
		require.Equal(t, a.Code, ue["code"], "one refusal, one code: %s", r.Raw)
		if a.Code != "validation_failed" {
			a.Message = ue["message"].(string)
		}
		if f, ok := ue["field"].([]any); ok && a.Code == "validation_failed" {
			parts := make([]string, len(f))
			for i, p := range f {
				parts[i] = p.(string)
			}
			a.add(strings.Join(parts, "."), ue["message"])
		}
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

const checkoutMutation = `mutation($in: CreateCheckoutSessionInput!) {
	createCheckoutSession(input: $in) { checkoutSession { orderReference status } replayed userErrors { code field message } } }`

// checkoutVars are the mutation's variables for a REST body and key.
func checkoutVars(body map[string]any, key string) map[string]any {
	in := gqlInput(body, false).(map[string]any)
	in["idempotencyKey"] = key
	return map[string]any{"in": in}
}

// TestRulesParity sends every rule reachable through both APIs through
// both, and expects the same code, status and message; validation details
// name the same fields, in each API's own names.
func TestRulesParity(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		// A buyer cap of 2 lets one order use a buyer's whole allowance.
		tb := setup(t, db, func(c *Config) { c.FreeDailyBuyerEventCap = 2 })

		type tc struct {
			name string
			rest func(t *testing.T) *response
			gql  func(t *testing.T) *response
			want answer
			// fields are the REST paths of want's details, gqlFields their
			// GraphQL names, in the same order.
			fields, gqlFields []string
			// gqlMessage, when set, is GraphQL's message where it differs.
			gqlMessage string
		}
		events := func(query string, args string) tc {
			return tc{
				rest: func(t *testing.T) *response { return tb.get(t, "/api/v1/events?"+query, tb.testKey) },
				gql: func(t *testing.T) *response {
					return tb.graphql(t, tb.testKey, `{ events(`+args+`) { nodes { id } pageInfo { page perPage hasPrev hasNext } } }`, nil)
				},
			}
		}
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
					return tb.graphql(t, tb.testKey, checkoutMutation, checkoutVars(body, key))
				},
			}
		}
		// freeCap: a live buyer takes the whole free allowance for an
		// event, then asks again under a variant of the same address. Each
		// API plays it with its own buyer, so neither uses the other's
		// allowance: "{b}" in an address is rest or gql, "{B}" Rest or Gql.
		freeCap := func(first, again string) tc {
			order := func(api, email string) map[string]any {
				body := tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2)
				email = strings.NewReplacer("{b}", api, "{B}", strings.ToUpper(api[:1])+api[1:]).Replace(email)
				return with(body, "customer.email", email)
			}
			return tc{
				rest: func(t *testing.T) *response {
					res := tb.checkout(t, tb.liveKey, newIdemKey(), order("rest", first))
					require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
					return tb.checkout(t, tb.liveKey, newIdemKey(), order("rest", again))
				},
				gql: func(t *testing.T) *response {
					res := tb.graphql(t, tb.liveKey, checkoutMutation, checkoutVars(order("gql", first), newIdemKey()))
					require.Equal(t, answer{Status: http.StatusOK}, gqlAnswer(t, res), "%s", res.Raw)
					return tb.graphql(t, tb.liveKey, checkoutMutation, checkoutVars(order("gql", again), newIdemKey()))
				},
			}
		}
		// accepted is a created checkout session.
		accepted := answer{Status: http.StatusCreated}
		// invalid is validation_failed naming these REST fields.
		invalid := func(fields ...string) answer {
			a := answer{Code: "validation_failed", Status: 422, Message: "The request payload failed validation."}
			for _, f := range fields {
				a.add(f)
			}
			return a
		}
		// named takes the REST field names out of want; gqlFields are
		// their GraphQL names, in sorted REST order.
		named := func(c tc, name string, want answer, gqlFields ...string) tc {
			c.name, c.fields, c.gqlFields = name, want.fieldNames(), gqlFields
			want.Fields = nil
			c.want = want
			return c
		}
		withGQLMessage := func(c tc, msg string) tc {
			c.gqlMessage = msg
			return c
		}

		cases := []tc{
			named(events("per_page=0", "perPage: 0"), "ErrPerPageZero", invalid("per_page"), "perPage"),
			named(events("page=0", "page: 0"), "ErrPageZero", invalid("page"), "page"),
			named(events("page=-3&per_page=-1", "page: -3, perPage: -1"), "ErrBothNegative", invalid("page", "per_page"), "page", "perPage"),
			named(events("q="+url.QueryEscape("a\x00b"), `q: "a\u0000b"`), "ErrQNul", invalid("q"), "q"),
			named(events("q="+strings.Repeat("x", 201), `q: "`+strings.Repeat("x", 201)+`"`), "ErrQTooLong", invalid("q"), "q"),
			named(order("sbx_\x00abc"), "ErrOrderReferenceNul",
				answer{Code: "order_not_found", Status: 404, Message: "Order sbx_\x00abc was not found for this app."}),
			named(order("sbx_"+strings.Repeat("a", 200)), "ErrOrderReferenceLong",
				answer{Code: "order_not_found", Status: 404, Message: "Order sbx_" + strings.Repeat("a", 200) + " was not found for this app."}),
			named(order("ord_abc"), "ErrEnvironmentMismatch",
				answer{Code: "environment_mismatch", Status: 403, Message: "Order ord_abc belongs to the live environment; use a live key to read it."}),
			withGQLMessage(named(checkout("", tb.highlife(1)), "ErrMissingIdempotencyKey",
				answer{Code: "missing_idempotency_key", Status: 400, Message: "The Idempotency-Key header is required."}),
				"idempotencyKey is required."),
			// HTTP carries no NUL in a header; a tab is the control
			// character both can carry. GraphQL's NUL is checked below.
			withGQLMessage(named(checkout("key\twith-tab", tb.highlife(1)), "ErrIdempotencyKeyControl",
				answer{Code: "invalid_idempotency_key", Status: 400, Message: "The Idempotency-Key header must be UTF-8 text without control characters."}),
				"idempotencyKey must be UTF-8 text without control characters."),
			named(checkout(newIdemKey(), with(tb.highlife(1), "items.0.quantity", 0)), "ErrQuantityZero",
				invalid("items.0.quantity"), "input.items.0.quantity"),
			named(checkout(newIdemKey(), with(with(tb.highlife(1), "event_id", nil), "customer.email", "nope")), "ErrSeveralFields",
				invalid("event_id", "customer.email"), "input.customer.email", "input.eventId"),
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

		// Input bounds (clientinput): each at its limit and one past it.
		email := func(n int) string { return strings.Repeat("a", n-len("@example.com")) + "@example.com" }
		redirect := func(n int) string {
			const base = "https://partner.example/done?p="
			return base + strings.Repeat("x", n-len(base))
		}
		phone := func(n int) string { return "024 123 4567" + strings.Repeat("-", n-len("024 123 4567")) }
		cases = append(cases,
			named(checkout(newIdemKey(), with(tb.highlife(1), "customer.name", strings.Repeat("é", 200))), "OKNameAtLimit", accepted),
			named(checkout(newIdemKey(), with(tb.highlife(1), "customer.name", strings.Repeat("é", 201))), "ErrNameTooLong",
				invalid("customer.name"), "input.customer.name"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "customer.email", email(254))), "OKEmailAtLimit", accepted),
			named(checkout(newIdemKey(), with(tb.highlife(1), "customer.email", email(255))), "ErrEmailTooLong",
				invalid("customer.email"), "input.customer.email"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "customer.phone", phone(32))), "OKPhoneAtLimit", accepted),
			named(checkout(newIdemKey(), with(tb.highlife(1), "customer.phone", phone(33))), "ErrPhoneTooLong",
				invalid("customer.phone"), "input.customer.phone"),
			named(checkout(newIdemKey(), with(with(tb.highlife(1), "success_url", redirect(2048)), "cancel_url", redirect(2048))), "OKRedirectURLsAtLimit", accepted),
			named(checkout(newIdemKey(), with(tb.highlife(1), "success_url", redirect(2049))), "ErrSuccessURLTooLong",
				invalid("success_url"), "input.successUrl"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "cancel_url", redirect(2049))), "ErrCancelURLTooLong",
				invalid("cancel_url"), "input.cancelUrl"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "metadata", map[string]any{"a\x00b": "x"})), "ErrMetadataKeyNul",
				invalid("metadata"), "input.metadata"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "metadata", map[string]any{"cart": map[string]any{"a\x00b": "x"}})), "ErrMetadataNestedKeyNul",
				invalid("metadata.cart"), "input.metadata.cart"),
			named(checkout(newIdemKey(), with(tb.highlife(1), "metadata", map[string]any{"cart": []any{map[string]any{"a\x00b": "x"}}})), "ErrMetadataKeyInListNul",
				invalid("metadata.cart"), "input.metadata.cart"),
			named(freeCap("{b}.one@example.com", "{B}.One+1@Example.com"), "ErrFreeCapTaggedEmail",
				answer{Code: "free_order_limit_reached", Status: 429, Message: "This buyer has reached today's limit of 2 free tickets for this event."}),
			named(freeCap("{b}.two+a@example.com", "{B}.TWO@EXAMPLE.com"), "ErrFreeCapUntaggedAfterTagged",
				answer{Code: "free_order_limit_reached", Status: 429, Message: "This buyer has reached today's limit of 2 free tickets for this event."}),
			named(freeCap("{b}.three@example.com", "{b}.three\u200b@example.com"), "ErrFreeCapZeroWidthSpace",
				answer{Code: "free_order_limit_reached", Status: 429, Message: "This buyer has reached today's limit of 2 free tickets for this event."}),
			named(freeCap("{b}.four@example.com", "{b}.ｆｏｕｒ@example.com"), "ErrFreeCapFullWidth",
				answer{Code: "free_order_limit_reached", Status: 429, Message: "This buyer has reached today's limit of 2 free tickets for this event."}),
			named(checkout(newIdemKey(), with(tb.highlife(1), "customer.email", "ama@[127.0.0.1]")), "ErrEmailDomainLiteral",
				invalid("customer.email"), "input.customer.email"),
		)
		for name, r := range map[string]rune{
			"LRE": '\u202A', "RLE": '\u202B', "PDF": '\u202C', "LRO": '\u202D', "RLO": '\u202E',
			"LRI": '\u2066', "RLI": '\u2067', "FSI": '\u2068', "PDI": '\u2069',
			"LRM": '\u200E', "RLM": '\u200F', "Newline": '\n', "Tab": '\t', "Escape": '\x1b', "C1": '\u0085', "LineSeparator": '\u2028',
		} {
			cases = append(cases, named(checkout(newIdemKey(), with(tb.highlife(1), "customer.name", "Ama"+string(r)+"Mensah")), "ErrName"+name,
				invalid("customer.name"), "input.customer.name"))
		}

		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				rest := restAnswer(c.rest(t))
				g := c.gql(t)
				require.Equal(t, http.StatusOK, g.Status, "GraphQL answers a refusal it ran with 200: %s", g.Raw)
				gql := gqlAnswer(t, g)
				require.Equal(t, c.fields, rest.fieldNames(), "REST fields")
				require.Len(t, c.gqlFields, len(c.fields))
				require.ElementsMatch(t, c.gqlFields, gql.fieldNames(), "GraphQL fields")
				for i := range c.fields {
					require.Equal(t, rest.Fields[c.fields[i]], gql.Fields[c.gqlFields[i]], "messages of %s", c.fields[i])
				}
				require.Equal(t, c.want, answer{Code: rest.Code, Status: rest.Status, Message: rest.Message}, "REST")
				require.Equal(t, c.want.Code, gql.Code, "GraphQL code")
				switch {
				case c.gqlMessage != "":
					require.Equal(t, c.gqlMessage, gql.Message, "GraphQL message")
				case gql.Fields == nil || gql.Message != "":
					require.Equal(t, c.want.Message, gql.Message, "GraphQL message")
				}
				if c.want.Status == http.StatusCreated {
					session := g.Body["data"].(map[string]any)["createCheckoutSession"].(map[string]any)["checkoutSession"]
					require.NotNil(t, session, "%s", g.Raw)
				}
			})
		}

		// A NUL in a metadata key, at any depth, leaves nothing behind:
		// no order, and no key stored altered (Bun would write \u0000 as
		// the six characters \u0000).
		t.Run("ErrMetadataKeyNulStoresNothing", func(t *testing.T) {
			count := func() int64 {
				n, err := db.NewSelect().Model((*store.Order)(nil)).Count(t.Context())
				require.NoError(t, err)
				return n
			}
			before := count()
			for _, md := range []map[string]any{{"a\x00b": "x"}, {"k": map[string]any{"a\x00b": "x"}}, {"k": []any{map[string]any{"\x00": 1}}}} {
				body := with(tb.highlife(1), "metadata", md)
				require.Equal(t, "validation_failed", tb.checkout(t, tb.testKey, newIdemKey(), body).errorCode())
				require.Equal(t, "validation_failed", gqlAnswer(t, tb.graphql(t, tb.testKey, checkoutMutation, checkoutVars(body, newIdemKey()))).Code)
			}
			require.Equal(t, before, count())
			n, err := db.NewSelect().Model((*store.Order)(nil)).Where("CAST(metadata AS TEXT) LIKE ?", "%u0000%").Count(t.Context())
			require.NoError(t, err)
			require.Zero(t, n)
		})

		t.Run("ErrIdempotencyKeyNulGraphQL", func(t *testing.T) {
			g := gqlAnswer(t, tb.graphql(t, tb.testKey, checkoutMutation, checkoutVars(tb.highlife(1), "a\x00b")))
			require.Equal(t, answer{Code: "invalid_idempotency_key", Status: 200,
				Message: "idempotencyKey must be UTF-8 text without control characters."}, g)
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

// TestRESTTypeErrors: every JSON type error of a checkout body is
// reported at once, each with its full path (GraphQL's own type system
// refuses such values before any resolver runs).
func TestRESTTypeErrors(t *testing.T) {
	t.Parallel()
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
		require.Equal(t, []string{"body"}, restAnswer(res).fieldNames())
		res = tb.checkout(t, tb.testKey, newIdemKey(), []byte(`[1, 2]`))
		require.Equal(t, map[string]any{"body": []any{"must be a JSON object"}}, res.details())
	})
}

// TestCheckoutLimitFirst: over the checkout limit, both APIs answer 429
// before looking at the Idempotency-Key or the body, in checkout's order (checkout.Service.Create's doc).
func TestCheckoutLimitFirst(t *testing.T) {
	t.Parallel()
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
				res := tb.graphql(t, tb.testKey, checkoutMutation, checkoutVars(c.body, c.key))
				require.Equal(t, http.StatusOK, res.Status, "the operation ran: %s", res.Raw)
				require.NotEmpty(t, res.Header.Get("Retry-After"), "a rate-limited field sets Retry-After as REST does")
				require.Equal(t, map[string]any{"createCheckoutSession": nil}, res.Body["data"], "a rate limit is no user error")
				g := gqlAnswer(t, res)
				want := restAnswer(rest)
				require.Equal(t, answer{Code: want.Code, Status: 200, Message: want.Message}, g)
			})
		}
	})
}

// TestPagesMalformedReference: a reference that cannot be one (a NUL
// byte, control characters, a very long one) is a 404 on every page that
// takes a reference, never a database error.
func TestPagesMalformedReference(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		for _, ref := range []string{"sbx_%00abc", "ord_%00abc", "sbx_%0A%0D", "ord_" + strings.Repeat("a", 300), "%00"} {
			for _, path := range []string{"/sandbox/checkout/" + ref, "/checkout/" + ref, "/checkout/" + ref + "/return"} {
				res := tb.do(t, http.MethodGet, path, "", nil)
				require.Equal(t, http.StatusNotFound, res.Status, "GET %s: %s", path, res.Raw)
			}
			for _, path := range []string{"/sandbox/checkout/" + ref, "/checkout/" + ref + "/pay"} {
				res := tb.do(t, http.MethodPost, path, "", []byte("outcome=paid"), "Content-Type", "application/x-www-form-urlencoded")
				require.Equal(t, http.StatusNotFound, res.Status, "POST %s: %s", path, res.Raw)
			}
		}
	})
}
