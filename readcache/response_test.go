package readcache

import (
	"hash/maphash"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store"
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

// TestKeptResponseCost: a kept answer is charged for everything it holds,
// its key (the query text, which a client may pad) included.
func TestKeptResponseCost(t *testing.T) {
	small := responseKey{query: "{ events { nodes { id } } }", variables: "null"}
	padded := responseKey{query: small.query + " #" + strings.Repeat("x", 1<<20), variables: "null"}
	kept := &keptResponse{data: []byte(`{"events":{"nodes":[]}}`), stock: map[int64][]store.Stock{1: make([]store.Stock, 4)}}
	require.Equal(t, 1, kept.cost(small))
	require.GreaterOrEqual(t, kept.cost(padded), (1<<20)/512, "a 1 MiB key costs its size, not one unit")
	big := &keptResponse{data: make([]byte, 100<<10)}
	require.GreaterOrEqual(t, big.cost(small), (100<<10)/512)
}
