package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestListElementContext: an element marshalled by marshalSlice sees what
// graphql.WithFieldContext would have given it — a field context whose
// parent is the list's and whose index is its own, so that paths and
// errors name the element — and the list's other context values.
func TestListElementContext(t *testing.T) {
	require.NotNil(t, fieldContextKey, "gqlgen's field-context key was not learnt")
	type other struct{}
	parent := &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "tickets"}}}
	ctx := graphql.WithFieldContext(context.WithValue(context.Background(), other{}, "kept"), parent)
	var paths []string
	ret := marshalSlice(ctx, 3, 0, true, func(ctx context.Context, i int) graphql.Marshaler {
		fc := graphql.GetFieldContext(ctx)
		require.NotNil(t, fc)
		require.Same(t, parent, fc.Parent)
		require.Equal(t, i, *fc.Index)
		require.Equal(t, "kept", ctx.Value(other{}))
		paths = append(paths, graphql.GetPath(ctx).String())
		return graphql.MarshalInt(i)
	})
	require.Len(t, ret, 3)
	require.Equal(t, []string{"tickets[0]", "tickets[1]", "tickets[2]"}, paths)
}

// TestListObjects: the objects of a list share their collected fields.
func TestListObjects(t *testing.T) {
	sel := ast.SelectionSet{&ast.Field{Name: "id", Alias: "id"}, &ast.Field{Name: "name", Alias: "name"}}
	impl := []string{"Ticket"}
	oc := &graphql.OperationContext{Doc: &ast.QueryDocument{}}
	ctx := graphql.WithOperationContext(context.Background(), oc)
	var collected [][]graphql.CollectedField
	marshalSlice(ctx, 3, 0, true, func(ctx context.Context, i int) graphql.Marshaler {
		collected = append(collected, collectFields(ctx, oc, sel, impl))
		return graphql.Null
	})
	for i := range collected {
		require.Len(t, collected[i], 2)
		require.Same(t, &collected[0][0], &collected[i][0], "element %d collects again", i)
	}
	// Another type in the same list (a union's) collects its own.
	marshalSlice(ctx, 2, 0, true, func(ctx context.Context, i int) graphql.Marshaler {
		impl := [][]string{{"Ticket"}, {"Venue"}}[i]
		require.Len(t, collectFields(ctx, oc, sel, impl), 2)
		return graphql.Null
	})
	// Outside a list, gqlgen's own.
	require.Len(t, collectFields(ctx, oc, sel, impl), 2)
}
