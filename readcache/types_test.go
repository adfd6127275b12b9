package readcache

import (
	"slices"
	"testing"

	"github.com/boxoffice/boxoffice/graph"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
)

// catalogTypes are the object types a cached answer may hold: the
// published catalog and its live stock, nothing a buyer or the door
// changes. A type reached from a cached root that is not here fails
// TestCachedTypes: a field of orders, tickets or check-ins must never be
// answered from the cache.
var catalogTypes = []string{
	"CursorPageInfo", "Event", "EventConnection", "EventDate", "EventEdge", "EventPage",
	"Money", "PageNumbers", "PricingSummary", "Query", "Ticket", "Venue",
}

// TestCachedTypes walks the schema from every root the response cache
// answers and fails on any object type outside catalogTypes.
func TestCachedTypes(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	seen := map[string]bool{}
	var walk func(name string)
	walk = func(name string) {
		def := schema.Types[name]
		if seen[name] || def == nil || def.Kind == ast.Scalar || def.Kind == ast.Enum {
			return
		}
		seen[name] = true
		require.Contains(t, catalogTypes, name, "a cached answer could hold %s, which is not catalog data", name)
		for _, f := range def.Fields {
			if !slices.Contains([]string{"__schema", "__type", "__typename"}, f.Name) {
				walk(f.Type.Name())
			}
		}
	}
	seen["Query"] = true
	for root := range catalogRoots {
		if root == "__typename" {
			continue
		}
		f := schema.Query.Fields.ForName(root)
		require.NotNil(t, f, "catalogRoots names Query.%s, which the schema lacks", root)
		walk(f.Type.Name())
	}
	require.Contains(t, seen, "Ticket", "the walk reaches the catalog's leaves")
}
