package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// TestOverlappingFields: the linear rule reaches gqlparser's verdict on
// each document, in gqlparser's words.
func TestOverlappingFields(t *testing.T) {
	t.Parallel()
	schema := NewExecutableSchema(Config{}).Schema()
	const alias = ". Use different aliases on the fields to fetch both if this was intentional."
	for _, c := range []struct {
		name, doc, want string // want: the first error, "" for none
	}{
		{"OKSameFields", `{ events { nodes { id } } events { nodes { name } } }`, ""},
		{"OKAliasedArguments", `{ a: events(perPage: 1) { nodes { id } } b: events(perPage: 2) { nodes { id } } }`, ""},
		{"OKArgumentOrder", `{ events(perPage: 1, page: 2) { pageInfo { total } } events(page: 2, perPage: 1) { pageInfo { page } } }`, ""},
		{"OKSameVariable", `query($n: Int) { events(perPage: $n) { nodes { id } } events(perPage: $n) { pageInfo { total } } }`, ""},
		{"OKFragments", `{ ...A ...B } fragment A on Query { events { nodes { id } } } fragment B on Query { events { nodes { id name } } }`, ""},
		{"OKInlineFragment", `{ ... on Query { __typename } __typename }`, ""},
		{"OKInputFieldOrder", `mutation { createCheckoutSession(input: {idempotencyKey: "a", eventId: 1}) { replayed }
			createCheckoutSession(input: {eventId: 1, idempotencyKey: "a"}) { replayed } }`, ""},
		{"OKFragmentCycle", `{ ...A } fragment A on Query { events { nodes { id } } ...A }`, ""},
		{"ErrArguments", `{ events(perPage: 1) { nodes { id } } events(perPage: 2) { nodes { id } } }`,
			`Fields "events" conflict because they have differing arguments` + alias},
		{"ErrVariables", `query($a: Int, $b: Int) { events(perPage: $a) { nodes { id } } events(perPage: $b) { nodes { id } } }`,
			`Fields "events" conflict because they have differing arguments` + alias},
		{"ErrMissingArgument", `{ events(perPage: 1) { nodes { id } } events { nodes { id } } }`,
			`Fields "events" conflict because they have differing arguments` + alias},
		{"ErrDifferentFields", `{ x: event(id: 1) { id } x: eventBySlug(slug: "a") { id } }`,
			`Fields "x" conflict because "event" and "eventBySlug" are different fields` + alias},
		{"ErrNested", `{ events { nodes { d: dates(includePast: true) { id } } } events { nodes { d: dates(includePast: false) { id } } } }`,
			`Fields "events" conflict because subfields "nodes" conflict because subfields "d" conflict because they have differing arguments` + alias},
		{"ErrTypes", `{ events { nodes { x: id x: name } } }`,
			`Fields "events" conflict because subfields "nodes" conflict because subfields "x" conflict because they return conflicting types "Int!" and "String!"` + alias},
		{"ErrThroughFragment", `{ events(perPage: 1) { nodes { id } } ...F } fragment F on Query { events(perPage: 2) { nodes { id } } }`,
			`Fields "events" conflict because they have differing arguments` + alias},
		{"ErrInputFields", `mutation { createCheckoutSession(input: {idempotencyKey: "a"}) { replayed }
			createCheckoutSession(input: {idempotencyKey: "b"}) { replayed } }`,
			`Fields "createCheckoutSession" conflict because they have differing arguments` + alias},
	} {
		t.Run(c.name, func(t *testing.T) {
			validate := func(r *rules.Rules) []string {
				doc, err := parser.ParseQuery(&ast.Source{Input: c.doc})
				require.NoError(t, err)
				var msgs []string
				for _, e := range validator.ValidateWithRules(schema, doc, r) {
					msgs = append(msgs, e.Message)
				}
				return msgs
			}
			got := validate(rules.NewRules(overlappingFields))
			theirs := validate(rules.NewRules(rules.OverlappingFieldsCanBeMergedRule))
			require.Equal(t, len(theirs) > 0, len(got) > 0, "gqlparser's verdict: %q", theirs)
			if c.want == "" {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 1, "one error a conflicting group")
			require.Equal(t, c.want, got[0])
		})
	}
}

// testHandler is the /graphql handler with no resolvers: enough for
// what is decided before execution, and for __typename and introspection.
func testHandler() http.Handler {
	return NewHandler(Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)), DefaultDocumentLimits(), Live{})
}

// answer is a GraphQL answer as sent.
type answer struct {
	status int
	bytes  int
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func (a answer) codes() map[string]int {
	n := map[string]int{}
	for _, e := range a.Errors {
		c, _ := e.Extensions["code"].(string)
		n[c]++
	}
	return n
}

// postQuery sends a GraphQL request to h: POST with params as its JSON
// body.
func postQuery(t testing.TB, h http.Handler, params map[string]any) answer {
	t.Helper()
	body, err := json.Marshal(params)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	return serve(t, h, r)
}

func serve(t testing.TB, h http.Handler, r *http.Request) answer {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	a := answer{status: w.Code, bytes: w.Body.Len()}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a), "%.300s", w.Body.String())
	return a
}

// repeated is n copies of f(i), spaced.
func repeated(n int, f func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(f(i))
		b.WriteByte(' ')
	}
	return b.String()
}

// Documents of issue 26's table, within the default document limits:
// each cost gqlparser's pairwise rule seconds of CPU.
var (
	// 1,000 sibling fields of one name with different arguments (32 KB):
	// 499,500 errors in a 118 MB answer after 4–10 s.
	sameNameDifferentArguments = "{ " + repeated(1_000, func(i int) string {
		return fmt.Sprintf("events(perPage: %d) { __typename }", i%100)
	}) + "}"
	// The same with nested groups of differing arguments: 30 × 30.
	nestedDifferentArguments = "{ " + repeated(30, func(i int) string {
		return fmt.Sprintf("events(perPage: %d) { nodes { %s } }", i%2, repeated(30, func(j int) string {
			return fmt.Sprintf("dates(includePast: %t) { id }", j%2 == 0)
		}))
	}) + "}"
)

// sameNameNoErrors is 1,999 fields of one name, valid, made new by a
// comment (so that no parsed-query cache helps): 330–420 ms each.
func sameNameNoErrors(i int) string {
	return fmt.Sprintf("# %d\n{ %s}", i, repeated(1_999, func(int) string { return "__typename" }))
}

// TestValidationCost: each document of the table is answered over HTTP
// with a bounded answer, however many conflicts it has; before, each took
// seconds (make bench times them).
func TestValidationCost(t *testing.T) {
	t.Parallel()
	h := testHandler()
	t.Run("ErrSameNameDifferentArguments", func(t *testing.T) {
		a := postQuery(t, h, map[string]any{"query": sameNameDifferentArguments})
		require.Equal(t, http.StatusOK, a.status)
		require.Nil(t, a.Data)
		require.Equal(t, map[string]int{"validation_failed": 1}, a.codes(), "one error for the group")
		require.Contains(t, a.Errors[0].Message, `Fields "events" conflict because they have differing arguments`)
		require.Less(t, a.bytes, 1<<10)
	})
	t.Run("ErrNestedDifferentArguments", func(t *testing.T) {
		a := postQuery(t, h, map[string]any{"query": nestedDifferentArguments})
		require.Equal(t, map[string]int{"validation_failed": 1}, a.codes())
		require.Less(t, a.bytes, 1<<10)
	})
	t.Run("SameNameNoErrors", func(t *testing.T) {
		for i := range 10 {
			a := postQuery(t, h, map[string]any{"query": sameNameNoErrors(i)})
			require.Equal(t, http.StatusOK, a.status)
			require.Empty(t, a.Errors)
			require.Equal(t, map[string]any{"__typename": "Query"}, a.Data)
		}
	})
	t.Run("ErrorsCapped", func(t *testing.T) {
		// 1,999 unknown fields: one error each, of which the first 100
		// are answered.
		a := postQuery(t, h, map[string]any{"query": "{ " + repeated(1_999, func(i int) string { return fmt.Sprintf("f%d", i) }) + "}"})
		require.Len(t, a.Errors, MaxErrors+1)
		require.Equal(t, map[string]int{"validation_failed": MaxErrors + 1}, a.codes())
		require.Equal(t, `Cannot query field "f0" on type "Query".`, a.Errors[0].Message)
		require.Equal(t, "More errors were found and left out; only the first 100 are listed.", a.Errors[MaxErrors].Message)
	})
	t.Run("ErrAnswerTooLarge", func(t *testing.T) {
		// 120 copies of the schema's documentation (37 KB each) from an
		// 18 KB document: an answer over MaxAnswerBytes is refused, not sent.
		q := "{ " + repeated(120, func(i int) string {
			return fmt.Sprintf("a%d: __schema { types { name description fields { name description args { name description } } "+
				"inputFields { name description } enumValues { name description } } }", i)
		}) + "}"
		a := postQuery(t, h, map[string]any{"query": q})
		require.Equal(t, http.StatusOK, a.status, "the operation ran")
		require.Nil(t, a.Data)
		require.Equal(t, map[string]int{"document_too_large": 1}, a.codes())
		require.Equal(t, "The answer would be larger than 4 MiB; ask for fewer fields or smaller pages.", a.Errors[0].Message)
		require.Less(t, a.bytes, 1<<10)
		// A tenth of it is answered.
		a = postQuery(t, h, map[string]any{"query": q[:strings.Index(q, "a12:")] + "}"})
		require.Empty(t, a.Errors)
		require.Len(t, a.Data, 12)
	})
}

// TestPersistedQueries: a document sent with its hash is kept once it
// validated; one that did not is never kept, and its hash is refused from
// then on without the document being read again.
func TestPersistedQueries(t *testing.T) {
	t.Parallel()
	h := testHandler()
	persisted := func(q string) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": queryHash(q)}}
	}
	get := func(q string) answer { // the hash alone, as Apollo clients send it
		r := httptest.NewRequest(http.MethodGet, "/graphql?"+url.Values{"extensions": {mustJSON(t, persisted(q))}}.Encode(), nil)
		return serve(t, h, r)
	}
	const refusal = "This persisted query failed validation; correct the document and send it again with its new hash."

	t.Run("OK", func(t *testing.T) {
		q := `{ __typename }`
		require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", get(q).Errors[0].Extensions["code"])
		a := postQuery(t, h, map[string]any{"query": q, "extensions": persisted(q)})
		require.Empty(t, a.Errors)
		a = get(q)
		require.Empty(t, a.Errors)
		require.Equal(t, map[string]any{"__typename": "Query"}, a.Data)
	})
	t.Run("ErrInvalidDocument", func(t *testing.T) {
		q := sameNameDifferentArguments
		a := postQuery(t, h, map[string]any{"query": q, "extensions": persisted(q)})
		require.Equal(t, map[string]int{"validation_failed": 1}, a.codes())
		require.Contains(t, a.Errors[0].Message, "conflict")
		for range 3 {
			a = get(q)
			require.Equal(t, map[string]int{"validation_failed": 1}, a.codes())
			require.Equal(t, refusal, a.Errors[0].Message, "refused by its hash, not validated again")
		}
		a = postQuery(t, h, map[string]any{"query": q, "extensions": persisted(q)})
		require.Equal(t, refusal, a.Errors[0].Message, "sent again in full, still not validated again")
		// A hash that is not the document's is refused as before.
		a = postQuery(t, h, map[string]any{"query": `{ __typename }`, "extensions": persisted(q)})
		require.Equal(t, "provided APQ hash does not match query", a.Errors[0].Message)
	})
	t.Run("ErrDocumentTooLarge", func(t *testing.T) {
		q := "{ " + repeated(2_001, func(int) string { return "__typename" }) + "}"
		a := postQuery(t, h, map[string]any{"query": q, "extensions": persisted(q)})
		require.Equal(t, map[string]int{"document_too_large": 1}, a.codes())
		require.Equal(t, refusal, get(q).Errors[0].Message)
	})
	t.Run("VariablesNotHeldAgainstTheDocument", func(t *testing.T) {
		q := `query($n: Int!) { events(perPage: $n) { __typename } }`
		a := postQuery(t, h, map[string]any{"query": q, "extensions": persisted(q), "variables": map[string]any{"n": "x"}})
		require.Equal(t, map[string]int{"validation_failed": 1}, a.codes())
		require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", get(q).Errors[0].Extensions["code"], "not kept, not refused")
	})
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// BenchmarkHostileDocuments times the answer to each document of the
// table, validation included (each made new, as an attacker would).
func BenchmarkHostileDocuments(b *testing.B) {
	h := testHandler()
	for _, c := range []struct {
		name string
		doc  func(i int) string
	}{
		{"SameNameDifferentArguments", func(i int) string { return fmt.Sprintf("# %d\n%s", i, sameNameDifferentArguments) }},
		{"NestedDifferentArguments", func(i int) string { return fmt.Sprintf("# %d\n%s", i, nestedDifferentArguments) }},
		{"SameNameNoErrors", sameNameNoErrors},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				postQuery(b, h, map[string]any{"query": c.doc(i)})
			}
		})
	}
}
