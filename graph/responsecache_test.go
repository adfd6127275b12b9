package graph

import (
	"hash/maphash"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSeenKeys: a query is kept only when asked again, and the set of
// queries asked stays bounded.
func TestSeenKeys(t *testing.T) {
	s := &seenKeys{seed: maphash.MakeSeed(), keys: map[uint64]struct{}{}}
	k := responseKey{query: "{ events { nodes { id } } }", variables: "null"}
	require.False(t, s.again(k))
	require.True(t, s.again(k))
	require.False(t, s.again(responseKey{query: k.query, variables: `{"n":1}`}), "other variables are another query")
	for i := range maxSeenKeys {
		s.again(responseKey{query: string(rune(i))})
	}
	require.LessOrEqual(t, len(s.keys), maxSeenKeys)
}
