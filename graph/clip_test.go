package graph

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestClip(t *testing.T) {
	t.Parallel()
	short := `Cannot query field "nope" on type "Query".`
	require.Equal(t, short, clip(short))
	for _, long := range []string{strings.Repeat("a", 10_000), strings.Repeat("é", 10_000), "xx" + strings.Repeat("€", 5_000)} {
		got := clip(long)
		require.True(t, utf8.ValidString(got), "cut on a character boundary")
		require.LessOrEqual(t, len(got), maxMessage+len("…"))
		require.True(t, strings.HasSuffix(got, "…"))
		require.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")))
	}
}
