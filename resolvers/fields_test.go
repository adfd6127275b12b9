package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/readcache"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
)

// resolverFieldsReadNoLoader are the fields with a resolver of their own
// (a method of graph's resolver interfaces) that read no loader: they
// convert what their parent holds. A field given a resolver must be added
// here or to fieldNeeds, which is the point: its author decides.
var resolverFieldsReadNoLoader = map[string]bool{
	// The session's total with its currency, both on the session.
	"CheckoutSession.totalMoney": true,
	// The event's body, decoded from the event itself.
	"WebhookEvent.body": true,
}

// TestFieldNeedsTable: every field whose resolver is a method, other than
// the roots (which prime their children themselves), is either in
// fieldNeeds or known to read no loader; and every entry of fieldNeeds is
// a field of the schema.
func TestFieldNeedsTable(t *testing.T) {
	root := reflect.TypeFor[graph.ResolverRoot]()
	resolved := map[string]bool{}
	for i := range root.NumMethod() {
		m := root.Method(i)
		if m.Name == "Query" || m.Name == "Mutation" || m.Name == "Subscription" {
			continue
		}
		iface := m.Type.Out(0)
		for j := range iface.NumMethod() {
			name := iface.Method(j).Name
			field := string(unicode.ToLower(rune(name[0]))) + name[1:]
			resolved[m.Name+"."+field] = true
		}
	}
	require.NotEmpty(t, resolved)
	for f := range resolved {
		_, needs := fieldNeeds[f]
		require.True(t, needs || resolverFieldsReadNoLoader[f],
			"%s has a resolver of its own: add it to fieldNeeds (and prime it in its parent) or to resolverFieldsReadNoLoader", f)
	}
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	for f := range fieldNeeds {
		typeName, field, _ := strings.Cut(f, ".")
		def := schema.Types[typeName]
		require.NotNil(t, def, "fieldNeeds names type %s, which the schema lacks", typeName)
		require.NotNil(t, def.Fields.ForName(field), "fieldNeeds names %s, which the schema lacks", f)
		require.True(t, resolved[f], "fieldNeeds names %s, which has no resolver of its own", f)
	}
}

// TestEveryFieldPrimed asks every catalog root for every field the schema
// reaches from it, in the orders that leave the catalog cache holding part
// of an answer (a date kept without its venue, events without their
// dates), with loaders.Strict on: a field that reads a loader its parent
// did not prime fails here.
func TestEveryFieldPrimed(t *testing.T) {
	require.True(t, loaders.Strict, "tests run with strict loaders")
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		_, err := catalog.Import(ctx, db, seed.DemoCatalog(now), now)
		require.NoError(t, err)
		clock := func() time.Time { return time.Now().UTC() }
		cat := &catalog.Service{DB: db, Now: clock}
		listener := store.NewListener(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
		t.Cleanup(listener.Close)
		watch := store.NewCatalogWatch(db, listener)
		res := &Resolver{Catalog: cat, Now: clock}
		srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: res, Complexity: Complexity()}))
		srv.AddTransport(transport.POST{})
		schema := graph.NewExecutableSchema(graph.Config{}).Schema()

		// A fresh cache per order of queries: each order leaves its own
		// partial state behind.
		run := func(t *testing.T, cache *readcache.Cache, query string) map[string]any {
			t.Helper()
			h := readcache.Middleware(cache)(loaders.Middleware(cat)(srv))
			body, _ := json.Marshal(map[string]string{"query": query})
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			var out struct {
				Data   map[string]any   `json:"data"`
				Errors []map[string]any `json:"errors"`
			}
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
			require.Empty(t, out.Errors, "query %s", query)
			return out.Data
		}
		newCache := func() *readcache.Cache {
			return readcache.NewCache(db, watch, clock, readcache.DefaultCacheBudget)
		}

		first := run(t, newCache(), `{ events(perPage: 100, includePast: true) { nodes { id slug dates(includePast: true) { id } } } }`)
		nodes := first["events"].(map[string]any)["nodes"].([]any)
		require.NotEmpty(t, nodes)
		ev := nodes[0].(map[string]any)
		dates := ev["dates"].([]any)
		require.NotEmpty(t, dates)
		roots := map[string]string{
			"events":           `events(perPage: 100, includePast: true)`,
			"eventsConnection": `eventsConnection(first: 100, includePast: true)`,
			"event":            `event(id: ` + jsonNumber(ev["id"]) + `)`,
			"eventBySlug":      `eventBySlug(slug: "` + ev["slug"].(string) + `")`,
			"eventDate":        `eventDate(id: ` + jsonNumber(dates[0].(map[string]any)["id"]) + `)`,
		}
		for name, call := range roots {
			field := schema.Query.Fields.ForName(name)
			require.NotNil(t, field, name)
			full := "{ " + call + " " + selectAll(schema, field.Type.Name(), true, map[string]bool{}) + " }"
			scalars := "{ " + call + " " + selectAll(schema, field.Type.Name(), false, map[string]bool{}) + " }"
			t.Run(name, func(t *testing.T) {
				t.Run("Cold", func(t *testing.T) {
					run(t, newCache(), full)
				})
				t.Run("AfterScalars", func(t *testing.T) {
					c := newCache()
					run(t, c, scalars)
					run(t, c, full)
					run(t, c, full)
				})
			})
		}
	})
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// selectAll is the selection set of every field of the object type
// typeName: scalars always, object fields when deep (each object type once
// a path, so the walk ends), and of the objects under a page or connection
// (nodes, edges, node) in any case so that the scalars of the items are
// asked for. Fields with required arguments are left out.
func selectAll(schema *ast.Schema, typeName string, deep bool, onPath map[string]bool) string {
	def := schema.Types[typeName]
	var b strings.Builder
	b.WriteString("{ __typename")
	onPath[typeName] = true
	defer delete(onPath, typeName)
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") || requiredArgs(f) {
			continue
		}
		child := schema.Types[f.Type.Name()]
		switch {
		case child.Kind == ast.Scalar || child.Kind == ast.Enum:
			b.WriteString(" " + f.Name)
		case onPath[child.Name]:
		case deep || f.Name == "nodes" || f.Name == "edges" || f.Name == "node" || f.Name == "pageInfo":
			b.WriteString(" " + f.Name + " " + selectAll(schema, child.Name, deep, onPath))
		}
	}
	b.WriteString(" }")
	return b.String()
}

func requiredArgs(f *ast.FieldDefinition) bool {
	for _, a := range f.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil {
			return true
		}
	}
	return false
}
