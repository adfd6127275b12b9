package graph

import (
	"context"
	"io"
	"slices"

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

// objectFields is an object's answer: its collected fields and their
// values, written as one JSON object. gqlgen's FieldSet writes through an
// iterator that copies each field to the heap and a map of the keys
// written, for every object of a list; `make generate` rewrites each
// object marshaller to return this instead (graph/sequential). Like
// FieldSet, a response key written once is not written again.
type objectFields struct {
	fields []graphql.CollectedField
	values []graphql.Marshaler
}

func (o objectFields) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, "{")
	var seen map[string]struct{} // only for objects with many fields
	if len(o.fields) > 8 {
		seen = make(map[string]struct{}, len(o.fields))
	}
	first := true
	for i := range o.fields {
		if o.values[i] == nil { // a deferred field, answered later if ever
			continue
		}
		alias := o.fields[i].Alias
		if seen != nil {
			if _, dup := seen[alias]; dup {
				continue
			}
			seen[alias] = struct{}{}
		} else if slices.ContainsFunc(o.fields[:i], func(f graphql.CollectedField) bool { return f.Alias == alias }) {
			continue
		}
		if !first {
			_, _ = io.WriteString(w, ",")
		}
		first = false
		writeKey(w, alias)
		o.values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// writeKey writes "alias": quoted as every string of the answer is.
func writeKey(w io.Writer, alias string) {
	(*stringValue)(&alias).MarshalGQL(w)
	_, _ = io.WriteString(w, ":")
}
