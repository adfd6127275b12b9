// Command sequential rewrites gqlgen's generated executor so that a
// GraphQL operation runs in one goroutine: list elements are marshalled
// by graph.marshalSlice instead of graphql.MarshalSliceConcurrently, and
// the resolver fields of object types run inline instead of through
// FieldSet.Concurrently; scalar struct fields are marshalled without a
// field context of their own, objects are written without
// FieldSet's per-field allocations, and a query's answer is written into a
// buffer the transport lends. `make generate` runs it after gqlgen; it fails
// when gqlgen's output no longer has the shapes it rewrites, so a gqlgen
// upgrade cannot silently bring the goroutines back.
//
// Usage: go run ./graph/sequential graph/generated.go
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"regexp"
	"sort"
	"strings"
)

var (
	sliceCall = []byte("graphql.MarshalSliceConcurrently(")
	// An object type's resolver field; root fields (rrm) keep their own
	// concurrency, deferred fields theirs.
	fieldCall = regexp.MustCompile(`(?m)^(\t+)out\.Concurrently\(i, func\(ctx context\.Context\) graphql\.Marshaler \{ return innerFunc\(ctx, out\) \}\)$`)
	// Every object computes its path for @defer, which nothing here uses
	// unless the operation defers a fragment.
	deferGroup = regexp.MustCompile(`(?m)^\tec\.ProcessDeferredGroup\(graphql\.DeferredGroup\{\n((?:\t\t.*\n)+?)\t\}\)\n`)
	// A scalar field's context carries an error made anew for every field
	// resolved; one per message is enough.
	// directForms write a scalar struct field X without allocating: a
	// pointer to the field, typed by graph/scalars.go. Floats keep gqlgen's.
	directForms = map[string]string{
		"marshalNInt2int":        "(*intValue)(&X)",
		"marshalNString2string":  "(*stringValue)(&X)",
		"marshalNBoolean2bool":   "(*boolValue)(&X)",
		"marshalOInt2ᚖint":       "optInt(X)",
		"marshalOString2ᚖstring": "optString(X)",
		"marshalOBoolean2ᚖbool":  "optBool(X)",
	}
	// A query's answer goes into the buffer the HTTP transport lends
	// (graph.responseBuffer) rather than into a new one grown by doubling.
	// An object marshaller's answer: written by graph.objectFields, which
	// allocates nothing per field, rather than by FieldSet.MarshalGQL.
	objectReturn = regexp.MustCompile(`(?m)^\treturn out\n\}$`)
	// Every object makes a FieldSet and a map for its @defer fragments;
	// made by the first deferred field instead, which is almost never.
	deferDecl   = regexp.MustCompile(`(?m)^\tdeferredFieldSet := graphql\.NewFieldSet\(nil\)\n\tdeferLabelToView := make\(map\[string\]\*graphql\.FieldSetView\)$`)
	deferField  = regexp.MustCompile(`(?m)^(\t+)if field\.IsDeferred\(\) \{$`)
	queryBuffer = regexp.MustCompile(`(?m)^(\t+)var buf bytes\.Buffer\n(\t+)data\.MarshalGQL\(&buf\)\n(\t+)response\.Data = buf\.Bytes\(\)$`)
	noChildren  = regexp.MustCompile(`errors\.New\("(field of type [A-Za-z0-9_]+ does not have child fields)"\)`)
	// A scalar field read straight from its object's struct field: gqlgen
	// makes a field context (and a context holding it) for each, runs the
	// resolver middleware and a deferred recover, all to return obj.X.
	// Rewritten to marshal obj.X at once. Only marshallers that cannot
	// add an error qualify (they never read the field context): the
	// non-null Int, String, Boolean and Float of Go values, and their
	// nullable pointer forms, which answer null for nil. A field with a
	// resolver, a method, arguments or an object type keeps ResolveField.
	directField = regexp.MustCompile(`(?m)^\treturn graphql\.ResolveField\(\n` +
		`\t\tctx,\n\t\tec\.OperationContext,\n\t\tfield,\n` +
		`\t\tfunc\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{\n` +
		`\t\t\treturn ec\.fieldContext_[A-Za-z0-9_]+\(ctx, field\)\n\t\t\},\n` +
		`\t\tfunc\(ctx context\.Context\) \(any, error\) \{\n` +
		`\t\t\treturn (obj\.[A-Za-z0-9_]+), nil\n\t\t\},\n` +
		`\t\tnil,\n` +
		`\t\tfunc\(ctx context\.Context, selections ast\.SelectionSet, v \*?(?:int|string|bool|float64)\) graphql\.Marshaler \{\n` +
		`\t\t\treturn ec\.(marshal(?:N(?:Int|String|Boolean|Float)2(?:int|string|bool|float64)|O(?:Int|String|Boolean|Float)2ᚖ?(?:int|string|bool|float64)))\(ctx, selections, v\)\n\t\t\},\n` +
		`\t\ttrue,\n\t\t(?:true|false),\n\t\)$`)
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sequential graph/generated.go")
		os.Exit(2)
	}
	path := os.Args[1]
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	slices := bytes.Count(src, sliceCall)
	fields := len(fieldCall.FindAll(src, -1))
	if slices == 0 || fields == 0 {
		fmt.Fprintf(os.Stderr, "sequential: %s has %d list marshallers and %d resolver fields to rewrite; gqlgen's output changed shape\n", path, slices, fields)
		os.Exit(1)
	}
	defers := len(deferGroup.FindAll(src, -1))
	if n := len(queryBuffer.FindAll(src, -1)); n != 1 {
		fmt.Fprintf(os.Stderr, "sequential: %s has %d query answer buffers, want 1; gqlgen's output changed shape\n", path, n)
		os.Exit(1)
	}
	src = queryBuffer.ReplaceAll(src, []byte("${1}buf := responseBuffer(ctx)\n${2}data.MarshalGQL(buf)\n${3}response.Data = buf.Bytes()"))
	lazyDefers := len(deferDecl.FindAll(src, -1))
	if lazyDefers != bytes.Count(src, []byte("deferredFieldSet := ")) {
		fmt.Fprintf(os.Stderr, "sequential: %s declares its deferred field sets in a new way; gqlgen's output changed shape\n", path)
		os.Exit(1)
	}
	src = deferDecl.ReplaceAll(src, []byte("\tvar deferredFieldSet *graphql.FieldSet // made by the first deferred field\n\tvar deferLabelToView map[string]*graphql.FieldSetView"))
	src = deferField.ReplaceAll(src, []byte("${1}if field.IsDeferred() {\n${1}\tif deferredFieldSet == nil {\n${1}\t\tdeferredFieldSet, deferLabelToView = graphql.NewFieldSet(nil), map[string]*graphql.FieldSetView{}\n${1}\t}"))
	objects := len(objectReturn.FindAll(src, -1))
	if objects != bytes.Count(src, []byte("\tout := graphql.NewFieldSet(fields)\n")) {
		fmt.Fprintf(os.Stderr, "sequential: %s has %d object field sets but %d returns of one; gqlgen's output changed shape\n", path, bytes.Count(src, []byte("\tout := graphql.NewFieldSet(fields)\n")), objects)
		os.Exit(1)
	}
	src = objectReturn.ReplaceAll(src, []byte("\treturn objectFields{fields: fields, values: out.Values}\n}"))
	// With nothing left to run concurrently, an object's Dispatch does
	// nothing but make its FieldSet escape to the heap: dropped.
	funcs := bytes.Split(src, []byte("\nfunc "))
	dispatches := 0
	for i, f := range funcs {
		if bytes.Contains(f, []byte("\tout := graphql.NewFieldSet(fields)\n")) && !bytes.Contains(f, []byte("out.Concurrently(")) &&
			bytes.Count(f, []byte("\tout.Dispatch(ctx)\n")) == 1 {
			funcs[i] = bytes.Replace(f, []byte("\tout.Dispatch(ctx)\n"), nil, 1)
			dispatches++
		}
	}
	src = bytes.Join(funcs, []byte("\nfunc "))
	direct := len(directField.FindAll(src, -1))
	if direct == 0 {
		fmt.Fprintf(os.Stderr, "sequential: %s has no scalar struct fields to marshal directly; gqlgen's output changed shape\n", path)
		os.Exit(1)
	}
	src = directField.ReplaceAllFunc(src, func(m []byte) []byte {
		g := directField.FindSubmatch(m)
		field, marshal := string(g[1]), string(g[2])
		if form, ok := directForms[marshal]; ok {
			return []byte("\treturn " + strings.ReplaceAll(form, "X", field))
		}
		return []byte("\treturn ec." + marshal + "(ctx, field.Selections, " + field + ")")
	})
	src = bytes.ReplaceAll(src, sliceCall, []byte("marshalSlice("))
	src = fieldCall.ReplaceAll(src, []byte("${1}out.Values[i] = innerFunc(ctx, out)"))
	src = deferGroup.ReplaceAll(src, []byte("\tif len(deferLabelToView) > 0 {\n\t\tec.ProcessDeferredGroup(graphql.DeferredGroup{\n${1}\t\t})\n\t}\n"))
	msgs := map[string]string{}
	src = noChildren.ReplaceAllFunc(src, func(m []byte) []byte {
		msg := string(noChildren.FindSubmatch(m)[1])
		name, ok := msgs[msg]
		if !ok {
			name = fmt.Sprintf("errNoChildren%d", len(msgs))
			msgs[msg] = name
		}
		return []byte(name)
	})
	var vars []string
	for msg, name := range msgs {
		vars = append(vars, fmt.Sprintf("\t%s = errors.New(%q)\n", name, msg))
	}
	sort.Strings(vars)
	src = append(src, []byte("\n// Errors of scalar field contexts, made once (graph/sequential).\nvar (\n"+strings.Join(vars, "")+")\n")...)
	if src, err = format.Source(src); err != nil {
		fmt.Fprintln(os.Stderr, "sequential: the rewritten file does not parse:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("sequential: %d list marshallers and %d resolver fields run in the operation's goroutine; %d objects compute their @defer path only when deferring; %d scalar struct fields marshalled without a field context; %d objects written by objectFields, %d of them with nothing to dispatch; %d scalar-field errors made once\n", slices, fields, defers, direct, objects, dispatches, len(msgs))
}
