package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// update rewrites testdata/generated.go.golden from testdata/generated.go:
// go test ./graph/sequential -run TestRewriteGolden -update, after reading
// the difference it makes.
var update = flag.Bool("update", false, "write testdata/generated.go.golden")

// gqlgenOutput is gqlgen's executor for testdata/schema.graphql, as
// make generate writes it with the gqlgen go.mod pins.
func gqlgenOutput(tb testing.TB) string {
	tb.Helper()
	src, err := os.ReadFile("testdata/generated.go")
	require.NoError(tb, err)
	return string(src)
}

// TestRewriteGolden: the rewrite of gqlgen's output for a schema with one
// of each shape is the reviewed one, byte for byte.
func TestRewriteGolden(t *testing.T) {
	out, summary, err := rewrite([]byte(gqlgenOutput(t)))
	require.NoError(t, err)
	require.Equal(t, "10 list marshallers and 1 resolver fields run in the operation's goroutine; 1 resolver fields answered without a closure on the heap; 9 fields' arguments read once per list; 11 objects compute their @defer path only when deferring; 19 scalar struct fields marshalled without a field context; 11 objects written by objectFields, 10 of them with nothing to dispatch; 12 object marshallers share their list's collected fields; 7 scalar-field errors made once", summary)
	if *update {
		require.NoError(t, os.WriteFile("testdata/generated.go.golden", out, 0o644))
	}
	golden, err := os.ReadFile("testdata/generated.go.golden")
	require.NoError(t, err)
	require.Equal(t, string(golden), string(out), "rewrite of testdata/generated.go; -update rewrites the golden file")
}

// TestRewriteShapeChanged: when gqlgen writes one place of a rewrite in
// another shape, the rewriter fails and names that rewrite, rather than
// leave the place concurrent or allocating as gqlgen wrote it.
func TestRewriteShapeChanged(t *testing.T) {
	t.Parallel()
	// once replaces the first old after anchor.
	once := func(anchor, old, new string) func(string) string {
		return func(src string) string {
			a := strings.Index(src, anchor)
			require.GreaterOrEqual(t, a, 0, "anchor %q", anchor)
			i := strings.Index(src[a:], old)
			require.GreaterOrEqual(t, i, 0, "%q after %q", old, anchor)
			return src[:a+i] + new + src[a+i+len(old):]
		}
	}
	all := func(old, new string) func(string) string {
		return func(src string) string {
			require.Contains(t, src, old)
			return strings.ReplaceAll(src, old, new)
		}
	}
	for _, tc := range []struct {
		name    string
		change  func(string) string
		wantErr string
	}{
		{"ErrQueryAnswerBuffer", once("ec._Query(ctx", "response.Data = buf.Bytes()", "response.Data = bytes.Clone(buf.Bytes())"),
			`rewrite "query answer buffer" matched 0 times, want 1`},
		{"ErrObjectDeferSets", once("func (ec *executionContext) _Show(", "deferLabelToView := make(map[string]*graphql.FieldSetView)", "deferLabelToView := map[string]*graphql.FieldSetView{}"),
			`rewrite "object @defer sets" matched 10 times, want 11`},
		{"ErrDeferredFields", once("func (ec *executionContext) _Show(", "if field.IsDeferred() {", "if field.IsDeferred() == true {"),
			`rewrite "deferred fields" matched 0 times, want 1`},
		{"ErrDeferredFieldsAdd", all("deferredFieldSet.AddField(field)", "deferredFieldSet.Add(field)"),
			`rewrite "deferred fields" matched 1 times, want 0 (at least 1)`},
		{"ErrObjectAnswers", once("func (ec *executionContext) _Venue(", "\treturn out\n}", "\treturn graphql.Marshaler(out)\n}"),
			`rewrite "object answers" matched 10 times, want 11`},
		{"ErrObjectDispatch", once("func (ec *executionContext) _Venue(", "out.Dispatch(ctx)", "out.Run(ctx)"),
			`an object marshaller calls out.Dispatch(ctx) 0 times, want 1`},
		{"ErrScalarStructFields", once("return obj.Name, nil", "\t\ttrue,\n\t\ttrue,\n\t)", "\t\ttrue,\n\t\ttrue,\n\t\tfalse,\n\t)"),
			`rewrite "scalar struct fields" matched 18 times, want 19`},
		{"ErrListMarshallers", once("func (ec *executionContext) marshalNShow2", "MarshalSliceConcurrently(ctx, len(v), 0, false,", "MarshalSliceConcurrently(ctx, len(v), 0, false, nil,"),
			`rewrite "list marshallers" matched 9 times, want 10`},
		{"ErrResolverFields", once("func (ec *executionContext) _Show(", "{ return innerFunc(ctx, out) })", "{\n\t\t\t\treturn innerFunc(ctx, out)\n\t\t\t})"),
			`rewrite "resolver fields" matched 0 times, want 1`},
		{"ErrResolverFieldsRenamed", all("out.Concurrently(", "out.Go("),
			`rewrite "resolver fields" matched 0 times, want 0 (at least 1)`},
		{"ErrDeferGroups", once("func (ec *executionContext) _Show(", "ec.ProcessDeferredGroup(graphql.DeferredGroup{", "ec.ProcessDeferredGroup(ctx, graphql.DeferredGroup{"),
			`rewrite "@defer groups" matched 10 times, want 11`},
		{"ErrFieldContextErrors", once("func (ec *executionContext) fieldContext_Show_id(", `errors.New("field of type ID does not have child fields")`, `fmt.Errorf("field of type %s does not have child fields", "ID")`),
			`rewrite "scalar field-context errors" matched 39 times, want 40`},
		{"ErrNoObjects", all("\tout := graphql.NewFieldSet(fields)\n", "\tout := graphql.NewFieldSet(fields, nil)\n"),
			`no object marshallers`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := gqlgenOutput(t)
			changed := tc.change(src)
			require.NotEqual(t, src, changed)
			_, _, err := rewrite([]byte(changed))
			require.ErrorContains(t, err, tc.wantErr)
			require.ErrorContains(t, err, "gqlgen's output changed shape")
		})
	}
}

// TestCommittedExecutor: graph/generated.go is the rewritten executor, so
// an operation runs in one goroutine; gqlgen's output as it writes it is
// not.
func TestCommittedExecutor(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../generated.go")
	require.NoError(t, err)
	require.NoError(t, checkRewritten(src), "graph/generated.go: run make generate")
	err = checkRewritten([]byte(gqlgenOutput(t)))
	require.ErrorContains(t, err, "10 list marshallers start a goroutine per element")
	require.ErrorContains(t, err, "1 resolver fields of objects run in a goroutine of their own")
	require.ErrorContains(t, err, "0 of 11 object marshallers answer with objectFields")
	require.ErrorContains(t, err, "19 scalar struct fields are marshalled through ResolveField")
}
