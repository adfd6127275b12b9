package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"regexp"
	"sort"
	"strings"
)

// A rule is one regular-expression rewrite of gqlgen's output. want counts
// the places the rule must rewrite by a mark other than pattern's whole
// text (the number of object marshallers, a call found anywhere in its
// line or function), so that gqlgen changing the shape of one of them
// shows as a count that differs, never as a place silently left as gqlgen
// wrote it.
type rule struct {
	name    string // what the rule rewrites, named in errors
	pattern *regexp.Regexp
	want    func(src []byte) int
	// min is the fewest places this project's schema has: where pattern
	// contains the mark, a mark gqlgen renamed counts 0 for both, and
	// fails here.
	min  int
	tmpl string                // replacement, as regexp.ReplaceAll's
	fn   func(m []byte) []byte // replacement, when tmpl is empty
}

// apply rewrites src, or says how many places matched and how many were
// wanted.
func (r rule) apply(src []byte) ([]byte, int, error) {
	n, want := len(r.pattern.FindAllIndex(src, -1)), r.want(src)
	if n != want || n < r.min {
		return nil, n, fmt.Errorf("rewrite %q matched %d times, want %d (at least %d); gqlgen's output changed shape", r.name, n, want, r.min)
	}
	if r.fn != nil {
		return r.pattern.ReplaceAllFunc(src, r.fn), n, nil
	}
	return r.pattern.ReplaceAll(src, []byte(r.tmpl)), n, nil
}

// Marks: what gqlgen writes once per place a rule rewrites.
const (
	objectMark   = "\tout := graphql.NewFieldSet(fields)\n" // one per object marshaller
	dispatchMark = "\tout.Dispatch(ctx)\n"                  // one per object marshaller
	sliceMark    = "graphql.MarshalSliceConcurrently("      // one per list of objects
	deferAddMark = "deferredFieldSet.AddField("             // one per deferrable field
	noChildMark  = "does not have child fields"             // one per scalar field context
	fieldMark    = "out.Concurrently("                      // a line starting so: one per resolver field
	rootMark     = "rrm("                                   // on that line: a root field, kept concurrent
	objectAnswer = "return &objectFields{fields: fields, values: out.Values}"
	// An object with nothing to dispatch: its answer holds the values.
	ownAnswerMark = "\tanswer := newObjectFields(fields)\n\tout := &graphql.FieldSet{Values: answer.values}\n"
	ownAnswer     = "return answer"
	collectMark   = "\tfields := graphql.CollectFields(ec.OperationContext, sel, " // one per object marshaller and subscription root
	queryAnswer   = "buf := responseBuffer(ctx)"
	argsMark      = "field.ArgumentMap(ec.Variables)" // one per field with arguments
)

// concurrent reports whether a function hands a field to
// FieldSet.Concurrently (a line starting so).
func concurrent(f []byte) bool {
	for line := range bytes.Lines(f) {
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte(fieldMark)) {
			return true
		}
	}
	return false
}

func count(mark string) func([]byte) int {
	return func(src []byte) int { return bytes.Count(src, []byte(mark)) }
}

// objectFieldCalls counts the lines that hand an object's field to
// FieldSet.Concurrently, less the root fields' (kept concurrent: a query's
// root fields are independent reads).
func objectFieldCalls(src []byte) int {
	n := 0
	for line := range bytes.Lines(src) {
		line = bytes.TrimSpace(line)
		if bytes.HasPrefix(line, []byte(fieldMark)) && !bytes.Contains(line, []byte(rootMark)) {
			n++
		}
	}
	return n
}

// An object's resolver field as the "resolver fields" rule leaves it: its
// innerFunc, the @defer branch that hands innerFunc to the deferred
// FieldSet, and the call that answers it at once (inlineMark).
const (
	innerFuncSig = "func(ctx context.Context, fs *graphql.FieldSet) (res graphql.Marshaler)"
	inlineMark   = "\t\t\tout.Values[i] = innerFunc(ctx, out)\n"
)

var inlineField = regexp.MustCompile(`\t\t\tinnerFunc := ` + regexp.QuoteMeta(innerFuncSig) + ` \{\n((?:\t\t\t\t.*\n)+?)\t\t\t\}\n\n` +
	`\t\t\tif field\.IsDeferred\(\) \{\n((?:(?:\t\t\t\t.*)?\n)+?)\t\t\t\}\n\n` + regexp.QuoteMeta(inlineMark))

var (
	// directForms write a scalar struct field X without allocating: a
	// pointer to the field, typed by graph/scalars.go. Floats keep gqlgen's.
	directForms = map[string]string{
		"marshalNInt2int":        "(*intValue)(&X)",
		"marshalNInt2int64":      "(*int64Value)(&X)",
		"marshalNString2string":  "(*stringValue)(&X)",
		"marshalNBoolean2bool":   "(*boolValue)(&X)",
		"marshalOInt2ᚖint":       "optInt(X)",
		"marshalOString2ᚖstring": "optString(X)",
		"marshalOBoolean2ᚖbool":  "optBool(X)",
		// DateTime is a string on the wire (model.MarshalDateTime is
		// graphql.MarshalString, which never answers null).
		"marshalNDateTime2string":  "(*stringValue)(&X)",
		"marshalODateTime2ᚖstring": "optString(X)",
	}
	// A scalar field read straight from its object's struct field: gqlgen
	// makes a field context (and a context holding it) for each, runs the
	// resolver middleware and a deferred recover, all to return obj.X.
	// Rewritten to marshal obj.X at once. Only marshallers that cannot
	// add an error qualify (they never read the field context): the
	// non-null Int (int or int64), String, Boolean, Float and DateTime of
	// Go values, and their nullable pointer forms, which answer null for
	// nil. A field with a resolver, a method, arguments or an object type
	// keeps ResolveField.
	directField = regexp.MustCompile(`(?m)^\treturn graphql\.ResolveField\(\n` +
		`\t\tctx,\n\t\tec\.OperationContext,\n\t\tfield,\n` +
		`\t\tfunc\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{\n` +
		`\t\t\treturn ec\.fieldContext_[A-Za-z0-9_]+\(ctx, field\)\n\t\t\},\n` +
		`\t\tfunc\(ctx context\.Context\) \(any, error\) \{\n` +
		`\t\t\treturn (obj\.[A-Za-z0-9_]+), nil\n\t\t\},\n` +
		`\t\tnil,\n` +
		`\t\tfunc\(ctx context\.Context, selections ast\.SelectionSet, v \*?(?:int64|int|string|bool|float64)\) graphql\.Marshaler \{\n` +
		`\t\t\treturn ec\.(` + directMarshal + `)\(ctx, selections, v\)\n\t\t\},\n` +
		`\t\ttrue,\n\t\t(?:true|false),\n\t\)$`)
	directMarshal = `marshal(?:N(?:Int|String|Boolean|Float|DateTime)2(?:int64|int|string|bool|float64)|O(?:Int|String|Boolean|Float|DateTime)2ᚖ?(?:int64|int|string|bool|float64))`
	// The looser marks of such a field, each anywhere in its function.
	directRead = regexp.MustCompile(`return obj\.[A-Za-z0-9_]+, nil\n`)
	// A field context made with an error of its own.
	freshError       = regexp.MustCompile(`NewScalarFieldContext\(.*errors\.New\(`)
	directMarshaller = regexp.MustCompile(`ec\.` + directMarshal + `\(`)
)

// directFields counts the field functions whose value is a struct field
// marshalled by a marshaller that cannot fail and which no directive wraps.
func directFields(src []byte) int {
	n := 0
	for _, f := range bytes.Split(src, []byte("\nfunc ")) {
		if bytes.Contains(f, []byte("graphql.ResolveField(")) && directRead.Match(f) &&
			directMarshaller.Match(f) && !bytes.Contains(f, []byte("next graphql.Resolver")) {
			n++
		}
	}
	return n
}

// rewrite returns gqlgen's executor src rewritten to run an operation in
// one goroutine, and a line saying what it rewrote. The error names the
// rewrite whose places gqlgen's output no longer has in the shape it
// rewrites.
func rewrite(src []byte) ([]byte, string, error) {
	objects := bytes.Count(src, []byte(objectMark))
	if objects == 0 {
		return nil, "", errors.New("no object marshallers (" + strings.TrimSpace(objectMark) + "); gqlgen's output changed shape")
	}
	perObject := func([]byte) int { return objects }
	msgs := map[string]string{}
	rules := []rule{{
		// A query's answer goes into the buffer the HTTP transport lends
		// (graph.responseBuffer) rather than into a new one grown by doubling.
		name:    "query answer buffer",
		pattern: regexp.MustCompile(`(?m)^(\t+)var buf bytes\.Buffer\n(\t+)data\.MarshalGQL\(&buf\)\n(\t+)response\.Data = buf\.Bytes\(\)$`),
		want:    func([]byte) int { return 1 },
		min:     1,
		tmpl:    "${1}buf := responseBuffer(ctx)\n${2}data.MarshalGQL(buf)\n${3}response.Data = buf.Bytes()",
	}, {
		// Every object makes a FieldSet and a map for its @defer fragments;
		// made by the first deferred field instead, which is almost never.
		name:    "object @defer sets",
		pattern: regexp.MustCompile(`(?m)^\tdeferredFieldSet := graphql\.NewFieldSet\(nil\)\n\tdeferLabelToView := make\(map\[string\]\*graphql\.FieldSetView\)$`),
		want:    perObject,
		min:     1,
		tmpl:    "\tvar deferredFieldSet *graphql.FieldSet // made by the first deferred field\n\tvar deferLabelToView map[string]*graphql.FieldSetView",
	}, {
		// Each field that may be deferred (every resolver field) adds
		// itself to the set: made there, before its first use.
		name:    "deferred fields",
		pattern: regexp.MustCompile(`(?m)^(\t+)if field\.IsDeferred\(\) \{$`),
		want:    count(deferAddMark),
		min:     1,
		tmpl:    "${1}if field.IsDeferred() {\n${1}\tif deferredFieldSet == nil {\n${1}\t\tdeferredFieldSet, deferLabelToView = graphql.NewFieldSet(nil), map[string]*graphql.FieldSetView{}\n${1}\t}",
	}, {
		// An object marshaller's answer: written by graph.objectFields, which
		// allocates nothing per field, rather than by FieldSet.MarshalGQL.
		name:    "object answers",
		pattern: regexp.MustCompile(`(?m)^\treturn out\n\}$`),
		want:    perObject,
		min:     1,
		tmpl:    "\t" + objectAnswer + "\n}",
	}}
	var n [12]int
	var err error
	for i, r := range rules {
		if src, n[i], err = r.apply(src); err != nil {
			return nil, "", err
		}
	}
	rules = []rule{{
		name:    "scalar struct fields",
		pattern: directField,
		want:    directFields,
		min:     1,
		fn: func(m []byte) []byte {
			g := directField.FindSubmatch(m)
			field, marshal := string(g[1]), string(g[2])
			if form, ok := directForms[marshal]; ok {
				return []byte("\treturn " + strings.ReplaceAll(form, "X", field))
			}
			return []byte("\treturn ec." + marshal + "(ctx, field.Selections, " + field + ")")
		},
	}, {
		// A list's elements, one goroutine each; graph.marshalSlice takes
		// the same arguments.
		name:    "list marshallers",
		pattern: regexp.MustCompile(regexp.QuoteMeta(sliceMark) + `(ctx, len\(v\), \d+, (?:true|false), func\(ctx context\.Context, i int\) graphql\.Marshaler \{)`),
		want:    count(sliceMark),
		min:     1,
		tmpl:    "marshalSlice(${1}",
	}, {
		// An object type's resolver field; root fields (rrm) keep their own
		// concurrency, deferred fields theirs.
		name:    "resolver fields",
		pattern: regexp.MustCompile(`(?m)^(\t+)out\.Concurrently\(i, func\(ctx context\.Context\) graphql\.Marshaler \{ return innerFunc\(ctx, out\) \}\)$`),
		want:    objectFieldCalls,
		min:     1,
		tmpl:    "${1}out.Values[i] = innerFunc(ctx, out)",
	}, {
		// A resolver field's innerFunc is a closure that the @defer branch
		// hands to its FieldSet, so it and the object's FieldSet (its fs)
		// were made on the heap for every field and object answered, though
		// almost no operation defers. Made in that branch only, where it
		// runs in a goroutine of its own (graph.deferredField); the field
		// answered at once runs the same body as a function literal called
		// in place, which stays on the stack.
		name:    "inline resolver fields",
		pattern: inlineField,
		want:    count(inlineMark),
		min:     1,
		tmpl: "\t\t\tif field.IsDeferred() {\n\t\t\t\tinnerFunc := " + innerFuncSig + " {\n\t\t\t\t\tctx = deferredField{ctx}\n${1}\t\t\t\t}\n${2}\t\t\t}\n\n" +
			"\t\t\tout.Values[i] = " + innerFuncSig + " {\n${1}\t\t\t}(ctx, out)\n",
	}, {
		// Every object computes its path for @defer, which nothing here
		// uses unless the operation defers a fragment.
		name:    "@defer groups",
		pattern: regexp.MustCompile(`(?m)^\tec\.ProcessDeferredGroup\(graphql\.DeferredGroup\{\n((?:\t\t.*\n)+?)\t\}\)\n`),
		want:    perObject,
		min:     1,
		tmpl:    "\tif len(deferLabelToView) > 0 {\n\t\tec.ProcessDeferredGroup(graphql.DeferredGroup{\n${1}\t\t})\n\t}\n",
	}, {
		// An object's collected fields: once per list for the elements of a
		// list (graph.collectFields), not a cache key made per object.
		name:    "collected fields",
		pattern: regexp.MustCompile(`(?m)^\tfields := graphql\.CollectFields\(ec\.OperationContext, sel, ([A-Za-z0-9_]+)\)$`),
		want:    count(collectMark),
		min:     1,
		tmpl:    "\tfields := collectFields(ctx, ec.OperationContext, sel, ${1})",
	}, {
		// A field's arguments, read from the document and the variables
		// anew for every object asked it (a map, and each argument
		// unmarshalled): once per list (graph.fieldArgs).
		name:    "field arguments",
		pattern: regexp.MustCompile(`ec\.(field_[A-Za-z0-9_]+_args)\(ctx, field\.ArgumentMap\(ec\.Variables\)\)`),
		want:    count(argsMark),
		min:     1,
		tmpl:    "fieldArgs(ctx, field, ec.Variables, ec.${1})",
	}, {
		// A scalar field's context carries an error made anew for every
		// field resolved; one per message is enough.
		name:    "scalar field-context errors",
		pattern: regexp.MustCompile(`errors\.New\("(field of type [A-Za-z0-9_]+ ` + noChildMark + `)"\)`),
		want:    count(noChildMark),
		min:     1,
		fn: func(m []byte) []byte {
			msg := string(m[len(`errors.New("`) : len(m)-len(`")`)])
			name, ok := msgs[msg]
			if !ok {
				name = fmt.Sprintf("errNoChildren%d", len(msgs))
				msgs[msg] = name
			}
			return []byte(name)
		},
	}}
	for i, r := range rules {
		if src, n[4+i], err = r.apply(src); err != nil {
			return nil, "", err
		}
	}
	// With nothing left to run concurrently (only a root field's is), an
	// object's Dispatch does nothing but make its FieldSet escape to the
	// heap: dropped. Such an object's FieldSet then stays on the stack,
	// and its answer (graph.newObjectFields) holds the field values, in
	// one allocation for an object of a few fields: 950 objects in a
	// nested catalog answer made two each (the values and the answer).
	funcs := bytes.Split(src, []byte("\nfunc "))
	dispatches := 0
	for i, f := range funcs {
		if !bytes.Contains(f, []byte(objectMark)) {
			continue
		}
		if d := bytes.Count(f, []byte(dispatchMark)); d != 1 {
			return nil, "", fmt.Errorf("rewrite \"object dispatches\": an object marshaller calls %s %d times, want 1; gqlgen's output changed shape", strings.TrimSpace(dispatchMark), d)
		}
		if concurrent(f) {
			continue
		}
		if a := bytes.Count(f, []byte(objectAnswer)); a != 1 {
			return nil, "", fmt.Errorf("rewrite \"object dispatches\": an object marshaller answers %d times, want 1", a)
		}
		f = bytes.Replace(f, []byte(dispatchMark), nil, 1)
		f = bytes.Replace(f, []byte(objectMark), []byte(ownAnswerMark), 1)
		funcs[i] = bytes.Replace(f, []byte(objectAnswer), []byte(ownAnswer), 1)
		dispatches++
	}
	src = bytes.Join(funcs, []byte("\nfunc "))
	var vars []string
	for msg, name := range msgs {
		vars = append(vars, fmt.Sprintf("\t%s = errors.New(%q)\n", name, msg))
	}
	sort.Strings(vars)
	src = append(src, []byte("\n// Errors of scalar field contexts, made once (graph/sequential).\nvar (\n"+strings.Join(vars, "")+")\n")...)
	if src, err = format.Source(src); err != nil {
		return nil, "", fmt.Errorf("the rewritten file does not parse: %w", err)
	}
	if err := checkRewritten(src); err != nil {
		return nil, "", err
	}
	direct, slices, fields, inlined := n[4], n[5], n[6], n[7]
	return src, fmt.Sprintf("%d list marshallers and %d resolver fields run in the operation's goroutine; %d resolver fields answered without a closure on the heap; %d fields' arguments read once per list; %d objects compute their @defer path only when deferring; %d scalar struct fields marshalled without a field context; %d objects written by objectFields, %d of them with nothing to dispatch; %d object marshallers share their list's collected fields; %d scalar-field errors made once",
		slices, fields, inlined, n[10], n[8], direct, objects, dispatches, n[9], len(msgs)), nil
}

// checkRewritten reports what in an executor still runs a list element or
// an object's resolver field in a goroutine of its own, or still has a
// shape rewrite changes: nil for rewrite's output, an error for gqlgen's.
func checkRewritten(src []byte) error {
	var bad []string
	if n := bytes.Count(src, []byte(sliceMark)); n > 0 {
		bad = append(bad, fmt.Sprintf("%d list marshallers start a goroutine per element (%s)", n, sliceMark))
	}
	if n := objectFieldCalls(src); n > 0 {
		bad = append(bad, fmt.Sprintf("%d resolver fields of objects run in a goroutine of their own (%s)", n, fieldMark))
	}
	objects := bytes.Count(src, []byte(objectMark)) + bytes.Count(src, []byte(ownAnswerMark))
	if answers := bytes.Count(src, []byte(objectAnswer)) + bytes.Count(src, []byte("\t"+ownAnswer+"\n}")); objects == 0 || answers != objects {
		bad = append(bad, fmt.Sprintf("%d of %d object marshallers answer with objectFields", answers, objects))
	}
	if n := bytes.Count(src, []byte(collectMark)); n > 0 {
		bad = append(bad, fmt.Sprintf("%d object marshallers collect their fields through gqlgen's cache (%s)", n, strings.TrimSpace(collectMark)))
	}
	if n := bytes.Count(src, []byte("out.Values[i] = innerFunc(ctx, out)")); n > 0 {
		bad = append(bad, fmt.Sprintf("%d resolver fields answered through a closure made on the heap (innerFunc)", n))
	}
	if n := bytes.Count(src, []byte(argsMark)); n > 0 {
		bad = append(bad, fmt.Sprintf("%d fields read their arguments for every object (%s)", n, argsMark))
	}
	if n := directFields(src); n > 0 {
		bad = append(bad, fmt.Sprintf("%d scalar struct fields are marshalled through ResolveField", n))
	}
	if n := len(freshError.FindAll(src, -1)); n > 0 {
		bad = append(bad, fmt.Sprintf("%d scalar field contexts make their error anew", n))
	}
	if n := bytes.Count(src, []byte(queryAnswer)); n != 1 {
		bad = append(bad, fmt.Sprintf("%d query answers written into the lent buffer, want 1", n))
	}
	if len(bad) > 0 {
		return errors.New("not rewritten by graph/sequential: " + strings.Join(bad, "; "))
	}
	return nil
}
