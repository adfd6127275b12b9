package graph

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

// TestScalarValues: the struct-field scalars write what gqlgen's
// marshallers write, into a bytes.Buffer and into any other writer, and
// allocate nothing into a buffer.
func TestScalarValues(t *testing.T) {
	written := func(m graphql.Marshaler) (buf, other string) {
		var b bytes.Buffer
		m.MarshalGQL(&b)
		var sb strings.Builder
		m.MarshalGQL(iotest.TruncateWriter(&sb, 1<<20))
		return b.String(), sb.String()
	}
	same := func(want graphql.Marshaler, got graphql.Marshaler) {
		t.Helper()
		w, _ := written(want)
		g, o := written(got)
		require.Equal(t, w, g)
		require.Equal(t, w, o)
	}
	for _, i := range []int{0, 7, -1, 255, 256, 1 << 40, -1 << 62} {
		same(graphql.MarshalInt(i), (*intValue)(&i))
	}
	for _, i := range []int64{0, 7, -1, 1 << 40, -1 << 63, 1<<63 - 1} {
		same(graphql.MarshalInt64(i), (*int64Value)(&i))
	}
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\tcr\rnl\n", "ctl\x00\x01\x1f\x7f", "é ✓ \u2028 🎫", "\xff broken utf-8"} {
		same(graphql.MarshalString(s), (*stringValue)(&s))
	}
	for _, v := range []bool{true, false} {
		same(graphql.MarshalBoolean(v), (*boolValue)(&v))
	}
	require.Equal(t, graphql.Null, optInt(nil))
	require.Equal(t, graphql.Null, optString(nil))
	require.Equal(t, graphql.Null, optBool(nil))
	n, s, b := 5, "x", true
	same(graphql.MarshalInt(n), optInt(&n))
	same(graphql.MarshalString(s), optString(&s))
	same(graphql.MarshalBoolean(b), optBool(&b))

	var buf bytes.Buffer
	buf.Grow(1 << 10)
	id, name, free := 123456789, `Jazz "live" night`, true
	var ticketID int64 = 987654321
	allocs := testing.AllocsPerRun(100, func() {
		buf.Reset()
		(*intValue)(&id).MarshalGQL(&buf)
		(*int64Value)(&ticketID).MarshalGQL(&buf)
		(*stringValue)(&name).MarshalGQL(&buf)
		(*boolValue)(&free).MarshalGQL(&buf)
		optInt(&id).MarshalGQL(&buf)
	})
	require.Zero(t, allocs)
}
