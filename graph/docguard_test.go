package graph

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// introspection is the query GraphiQL sends to load the docs: it must
// pass the default limits.
const introspectionQuery = `query IntrospectionQuery { __schema { queryType { name } mutationType { name }
  subscriptionType { name } types { ...FullType } directives { name description locations args { ...InputValue } } } }
fragment FullType on __Type { kind name description fields(includeDeprecated: true) { name description
  args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue } interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } possibleTypes { ...TypeRef } }
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
  ofType { kind name ofType { kind name ofType { kind name } } } } } } } }`

const dashboard = `query Dashboard($n: Int!) { events(perPage: $n) { nodes { id name pricing { isEntirelyFree }
  dates(includePast: true) { id startdateIso venue { name city } tickets { id name effectivePrice quantityAvailable } } }
  pageInfo { page total } } }`

func TestDocumentLimits_OK(t *testing.T) {
	for name, q := range map[string]string{"Introspection": introspectionQuery, "Dashboard": dashboard,
		"Aliases":   `{ a: event(id: 1) { id } b: event(id: 2) { id } }`,
		"Shorthand": `{ events { nodes { id } } }`, "Empty": ``, "SyntaxError": `{ events { `,
	} {
		t.Run(name, func(t *testing.T) {
			require.Nil(t, DefaultDocumentLimits().Check(q))
		})
	}
}

func repeat(n int, f func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(f(i))
		b.WriteByte(' ')
	}
	return b.String()
}

// hostile are documents made to be slow to parse or validate, and the
// limit each one meets first.
var hostile = []struct {
	name, limit string
	doc         string
}{
	{"RepeatedField", "tokens", "{ events { nodes { " + repeat(10_000, func(int) string { return "id" }) + "} } }"},
	{"RepeatedFieldUnderTokens", "fields", "{ events { nodes { " + repeat(2_500, func(int) string { return "id" }) + "} } }"},
	{"SixThousandFragments", "bytes", "{ ...F0 } " + repeat(6_000, func(i int) string {
		return fmt.Sprintf("fragment F%d on Query { events { nodes { id } } }", i)
	})},
	{"ThousandShortFragments", "fragment definitions", "{ ...F0 } " + repeat(1_000, func(i int) string {
		return fmt.Sprintf("fragment F%d on Query{a}", i)
	})},
	{"FragmentChain", "fields", "{ ...F0 } " + repeat(60, func(i int) string {
		return fmt.Sprintf("fragment F%d on Query { events { nodes { id } } ...F%d ...F%d }", i, i+1, i+1)
	}) + "fragment F60 on Query { __typename }"},
	{"OneFragmentSpreadOften", "fragment spreads", "{ " + repeat(5_000, func(int) string { return "...F" }) +
		"} fragment F on Query { events { nodes { id } } }"},
	{"HugeAliasList", "aliases", "{ " + repeat(1_000, func(i int) string { return fmt.Sprintf("a%d: __typename", i) }) + "}"},
	{"DeepNesting", "levels of nesting", strings.Repeat("{ events ", 100) + strings.Repeat("}", 100)},
	{"CommentPadded", "bytes", "# " + strings.Repeat("x", 1<<20) + "\n{ __typename }"},
}

// TestDocumentLimits_Hostile: each hostile form is refused by the linear
// pass with document_too_large naming the limit, allocating little; the
// same document would cost the parser far more.
func TestDocumentLimits_Hostile(t *testing.T) {
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			err := DefaultDocumentLimits().Check(h.doc)
			require.NotNil(t, err)
			require.Equal(t, apperr.DocumentTooLarge, err.Code)
			require.Equal(t, 422, err.Status())
			require.Contains(t, err.Message, "more "+h.limit+" ")

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 10 {
				DefaultDocumentLimits().Check(h.doc)
			}
			runtime.ReadMemStats(&after)
			perCheck := (after.TotalAlloc - before.TotalAlloc) / 10
			t.Logf("%s: %d bytes of document, %d bytes allocated per check", h.name, len(h.doc), perCheck)
			require.Less(t, perCheck, uint64(256<<10), "the check allocates little, whatever the document")
		})
	}
}

// TestDocumentLimits_Configurable: each limit is the configured one.
func TestDocumentLimits_Configurable(t *testing.T) {
	l := DocumentLimits{Fields: 3}
	require.Nil(t, l.Check(`{ a b c }`))
	require.Contains(t, l.Check(`{ a b c d }`).Message, "limit of 3")
	require.Contains(t, DocumentLimits{Aliases: 1}.Check(`{ x: a y: b }`).Message, "aliases")
	require.Contains(t, DocumentLimits{Depth: 2}.Check(`{ a { b { c } } }`).Message, "nesting")
	require.Nil(t, DocumentLimits{Depth: 3}.Check(`{ a { b { c } } }`))
	require.Contains(t, DocumentLimits{Fragments: 1}.Check(`{ ...A ...B } fragment A on Q { a } fragment B on Q { b }`).Message, "fragment definitions")
	require.Contains(t, DocumentLimits{Spreads: 1}.Check(`{ ...A ...A } fragment A on Q { a }`).Message, "spreads")
	require.Contains(t, DocumentLimits{Tokens: 5}.Check(`{ a b c d }`).Message, "tokens")
	require.Contains(t, DocumentLimits{Bytes: 5}.Check(`{ a b c d }`).Message, "bytes")
	// Arguments, variables, directives and type conditions are not fields.
	require.Nil(t, DocumentLimits{Fields: 2, Aliases: 1}.Check(
		`query Q($x: Int = 1, $o: In = {a: {b: 1}}) { x: a(p: {q: 1, r: [1, 2]}) @include(if: $x) { ... on T { b } } }`))
}

// BenchmarkDocumentLimits compares the linear pass with parsing, on the
// documents it refuses.
func BenchmarkDocumentLimits(b *testing.B) {
	for _, h := range hostile {
		b.Run(h.name+"/check", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				DefaultDocumentLimits().Check(h.doc)
			}
		})
	}
	b.Run("RepeatedField/parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = parser.ParseQuery(&ast.Source{Input: hostile[0].doc})
		}
	})
}
