package checkout

import (
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/stretchr/testify/require"
)

// TestReferenceOrder: a reference is its prefix, 9 characters of creation
// time and 120 random bits (24 characters), all of [a-z2-7] as the API
// documents, and references sort by the millisecond they were made in, so
// that a new one's index entry goes after the others'.
func TestReferenceOrder(t *testing.T) {
	t.Parallel()
	format := regexp.MustCompile(`^(ord|sbx)_[a-z2-7]{33}$`)
	start := time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)
	var refs []string
	seen := map[string]bool{}
	for i := range 2000 {
		// From 8 ms apart to hours apart, over a year.
		at := start.Add(time.Duration(i*i) * time.Millisecond * 7919)
		ref := newReference(store.EnvLive, at)
		require.Regexp(t, format, ref)
		require.False(t, seen[ref], "reference %s made twice", ref)
		seen[ref] = true
		refs = append(refs, ref)
	}
	require.True(t, sort.StringsAreSorted(refs), "references sort by creation time")
	same := []string{newReference(store.EnvTest, start), newReference(store.EnvTest, start)}
	require.NotEqual(t, same[0], same[1], "the random part differs within a millisecond")
	require.Equal(t, same[0][:13], same[1][:13], "the time part is the same within a millisecond")
	require.Regexp(t, `^sbx_`, same[0])
	require.Less(t, newReference(store.EnvLive, time.Date(2999, 12, 31, 0, 0, 0, 0, time.UTC))[:13],
		newReference(store.EnvLive, time.Date(3084, 1, 1, 0, 0, 0, 0, time.UTC))[:13], "good until 3084")
}
