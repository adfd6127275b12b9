package graph

import (
	"context"
	"errors"
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

// TestListMemo: objects below a list's elements (a field's object, a
// nested list's elements) share the list's collected fields and a field's
// arguments, worked out once; an argument error is reported by each
// field; a deferred field, which runs in a goroutine of its own, and
// anything outside a list work theirs out alone.
func TestListMemo(t *testing.T) {
	sel := ast.SelectionSet{&ast.Field{Name: "name", Alias: "name"}}
	impl := []string{"Venue"}
	oc := &graphql.OperationContext{Doc: &ast.QueryDocument{}}
	ctx := graphql.WithOperationContext(context.Background(), oc)
	field := graphql.CollectedField{Field: &ast.Field{Name: "dates", Alias: "dates"}}
	badField := graphql.CollectedField{Field: &ast.Field{Name: "tickets", Alias: "tickets"}}
	parsed := 0
	parse := func(context.Context, map[string]any) (map[string]any, error) {
		parsed++
		return map[string]any{"n": parsed}, nil
	}
	failed := 0
	fail := func(context.Context, map[string]any) (map[string]any, error) {
		failed++
		return nil, errors.New("bad argument")
	}
	var collected [][]graphql.CollectedField
	var args []map[string]any
	marshalSlice(ctx, 3, 0, true, func(ctx context.Context, i int) graphql.Marshaler {
		below := graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: field})
		collected = append(collected, collectFields(below, oc, sel, impl))
		a, err := fieldArgs(below, field, nil, parse)
		require.NoError(t, err)
		args = append(args, a)
		_, err = fieldArgs(below, badField, nil, fail)
		require.Error(t, err)
		marshalSlice(below, 2, 0, true, func(ctx context.Context, j int) graphql.Marshaler {
			collected = append(collected, collectFields(ctx, oc, sel, impl))
			return graphql.Null
		})
		return graphql.Null
	})
	require.Len(t, collected, 9)
	for i := range collected {
		require.Same(t, &collected[0][0], &collected[i][0], "object %d collects again", i)
	}
	require.Equal(t, 1, parsed, "arguments parsed once for the list")
	for i := range args {
		require.Equal(t, map[string]any{"n": 1}, args[i])
	}
	require.Equal(t, 3, failed, "an error is each field's")

	marshalSlice(ctx, 2, 0, true, func(ctx context.Context, i int) graphql.Marshaler {
		deferred := deferredField{graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: field})}
		require.Nil(t, listOf(deferred))
		_, err := fieldArgs(deferred, field, nil, parse)
		require.NoError(t, err)
		return graphql.Null
	})
	require.Equal(t, 3, parsed, "a deferred field parses its own")
	_, err := fieldArgs(ctx, field, nil, parse)
	require.NoError(t, err)
	require.Equal(t, 4, parsed, "outside a list, every time")
}
