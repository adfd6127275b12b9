package graph

import (
	"context"
	"io"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// marshalSlice marshals a list's elements one after another in the
// caller's goroutine. gqlgen's generated code starts a goroutine per list
// element (graphql.MarshalSliceConcurrently) and per resolver field of an
// object; `make generate` rewrites it (graph/sequential) to call this
// instead, and to run resolver fields inline. Nothing is lost: every
// list level's children are loaded by its parent in one batch before
// gqlgen descends (resolvers/prefetch.go), so no element waits for I/O,
// and a goroutine and its stack per list element and resolver field of a
// nested query are saved.
// Same contract as MarshalSliceConcurrently: each element gets a field
// context with its index; a panic in one is reported and nulls the list.
//
// An element's context, field context and index are one allocation
// (listElement), and the objects of a list share their collected fields
// (collectFields): a nested catalog answer has about a thousand list
// elements, each of which cost four allocations. (Making the elements of
// a list, or their field sets, in one allocation for the whole list was
// measured slower, docs/benchmarks.md: large objects cost the collector
// more to scan.)
func marshalSlice(ctx context.Context, length int, _ int64, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, length)
	if length == 0 {
		return ret
	}
	list := listOf(ctx) // a list within a list shares the outer one's
	if list == nil {
		list = &listObjects{}
	}
	parent := graphql.GetFieldContext(ctx)
	for i := range length {
		e := &listElement{Context: ctx, list: list, idx: i}
		e.fc.Parent, e.fc.Index = parent, &e.idx
		var elemCtx context.Context = e
		if fieldContextKey == nil { // see fieldContextKey
			elemCtx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &e.idx})
		}
		if omitPanicHandler {
			ret[i] = marshalElement(elemCtx, i)
			continue
		}
		if !marshalOne(elemCtx, ret, i, marshalElement) {
			return nil
		}
	}
	return ret
}

// listElement is the context of one element of a list: the list's
// context, with the element's field context (its index in the path)
// answered for gqlgen's key, as graphql.WithFieldContext would.
type listElement struct {
	context.Context
	fc   graphql.FieldContext
	idx  int
	list *listObjects
}

func (e *listElement) Value(key any) any {
	switch key {
	case fieldContextKey:
		return &e.fc
	case listKey{}:
		return e.list
	}
	return e.Context.Value(key)
}

// listKey finds, from a context below a list element (a field of an
// element, an object of such a field), the element's list.
type listKey struct{}

// deferredField is the context of a field that @defer answers later, in a
// goroutine of its own: the lists above it are hidden from listOf, since
// their memo is not safe for concurrent use, and the lists below it make
// their own (`make generate` rewrites deferred fields to start from it).
type deferredField struct{ context.Context }

func (d deferredField) Value(key any) any {
	if key == (listKey{}) {
		return nil
	}
	return d.Context.Value(key)
}

// listOf returns the list of the nearest list element above ctx, or nil.
func listOf(ctx context.Context) *listObjects {
	if e, ok := ctx.(*listElement); ok {
		return e.list
	}
	l, _ := ctx.Value(listKey{}).(*listObjects)
	return l
}

// fieldContextKey is the context key under which gqlgen keeps a field
// context (unexported in package graphql), learnt by asking
// graphql.GetFieldContext to read a context that records the key it is
// asked for. Should a gqlgen release read field contexts differently,
// the key learnt is nil and marshalSlice makes field contexts as
// gqlgen does (TestListElementContext fails first).
var fieldContextKey = func() any {
	p := &keyProbe{Context: context.Background()}
	graphql.GetFieldContext(p)
	return p.key
}()

type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	if p.key == nil {
		p.key = key
	}
	return nil
}

// listObjects is what the elements of a list share with everything below
// them, nested lists included: every element of a list of one type asks
// the same selections with the same arguments, so the fields collected for
// a selection and the arguments of a field are worked out once per
// outermost list instead of once per element. Both depend only on the
// operation (the document's selection, identified by its backing array,
// and the variables).
type listObjects struct {
	collected []collected
	args      []fieldArgsOf
}

type collected struct {
	sel    ast.SelectionSet
	impl   []string
	fields []graphql.CollectedField
}

type fieldArgsOf struct {
	field *ast.Field
	args  map[string]any
}

// listMemo bounds what a list keeps (selections, and fields with
// arguments, below it); beyond it, a large document's further ones are
// worked out per object as gqlgen does.
const listMemo = 16

func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// collectFields is graphql.CollectFields, answered once per list for the
// objects of a list and every object below it (`make generate`
// rewrites object marshallers to call it): gqlgen's own cache allocates a
// key for every object.
func collectFields(ctx context.Context, oc *graphql.OperationContext, sel ast.SelectionSet, implementors []string) []graphql.CollectedField {
	l := listOf(ctx)
	if l == nil {
		return graphql.CollectFields(oc, sel, implementors)
	}
	for _, c := range l.collected {
		if sameSlice(c.sel, sel) && sameSlice(c.impl, implementors) {
			return c.fields
		}
	}
	fields := graphql.CollectFields(oc, sel, implementors)
	if len(l.collected) < listMemo {
		l.collected = append(l.collected, collected{sel, implementors, fields})
	}
	return fields
}

// fieldArgs is a field's arguments as parse (gqlgen's field_T_f_args)
// reads them from the document and the variables, worked out once per
// list for a field asked of every element (`make generate` rewrites field
// contexts to call it). Arguments depend on nothing else; the map is
// shared, and resolvers only read it. An error is not kept: each field
// reports its own.
func fieldArgs(ctx context.Context, field graphql.CollectedField, vars map[string]any,
	parse func(ctx context.Context, raw map[string]any) (map[string]any, error)) (map[string]any, error) {
	l := listOf(ctx)
	if l == nil {
		return parse(ctx, field.ArgumentMap(vars))
	}
	for _, a := range l.args {
		if a.field == field.Field {
			return a.args, nil
		}
	}
	args, err := parse(ctx, field.ArgumentMap(vars))
	if err == nil && len(l.args) < listMemo {
		l.args = append(l.args, fieldArgsOf{field.Field, args})
	}
	return args, err
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
	small  [4]graphql.Marshaler // values of an object of at most four fields
}

// newObjectFields makes the answer of an object whose fields are fields,
// with room for their values: within the answer for a few fields, so that
// an object's values and answer are one allocation.
func newObjectFields(fields []graphql.CollectedField) *objectFields {
	o := &objectFields{fields: fields}
	if len(fields) <= len(o.small) {
		o.values = o.small[:len(fields):len(fields)]
	} else {
		o.values = make([]graphql.Marshaler, len(fields))
	}
	return o
}

func (o *objectFields) MarshalGQL(w io.Writer) {
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
