package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// marshalSlice marshals a list's elements one after another in the
// caller's goroutine. gqlgen's generated code starts a goroutine per list
// element (graphql.MarshalSliceConcurrently) and per resolver field of an
// object; `make generate` rewrites it (graph/sequential) to call this
// instead, and to run resolver fields inline. Nothing is lost: every
// list level's children are loaded by its parent in one batch before
// gqlgen descends (resolvers/prefetch.go), so no element waits for I/O,
// and ~950 goroutines and their stacks per nested query are saved.
// Same contract as MarshalSliceConcurrently: each element gets a field
// context with its index; a panic in one is reported and nulls the list.
func marshalSlice(ctx context.Context, length int, _ int64, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, length)
	for i := range length {
		idx := i
		childCtx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &idx})
		if omitPanicHandler {
			ret[i] = marshalElement(childCtx, i)
			continue
		}
		if !marshalOne(childCtx, ret, i, marshalElement) {
			return nil
		}
	}
	return ret
}

func marshalOne(ctx context.Context, ret graphql.Array, i int, marshalElement func(ctx context.Context, i int) graphql.Marshaler) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			ok = false
		}
	}()
	ret[i] = marshalElement(ctx, i)
	return true
}
