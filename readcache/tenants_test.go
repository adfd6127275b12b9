package readcache

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeVersions is a Versions a test moves by hand.
type fakeVersions struct {
	v  uint64
	ok bool
}

func (f *fakeVersions) Version(context.Context) (uint64, bool) { return f.v, f.ok }

// TestTenants: values are kept until the version moves; errors, values
// read across a change, and anything read while the version cannot be
// told are never kept; the entry cap starts the cache over.
func TestTenants(t *testing.T) {
	ctx := context.Background()
	loads := 0
	load := func(v string) func() (any, error) {
		return func() (any, error) { loads++; return v, nil }
	}
	t.Run("KeptUntilChange", func(t *testing.T) {
		f := &fakeVersions{ok: true}
		c := NewTenants(f, 10)
		loads = 0
		got, err := c.Get(ctx, "k", load("a"))
		require.NoError(t, err)
		require.Equal(t, "a", got)
		got, _ = c.Get(ctx, "k", load("b"))
		require.Equal(t, "a", got, "kept")
		require.Equal(t, 1, loads)
		f.v++
		got, _ = c.Get(ctx, "k", load("b"))
		require.Equal(t, "b", got, "read again after a change")
		require.Equal(t, 2, loads)
	})
	t.Run("ErrNotKept", func(t *testing.T) {
		c := NewTenants(&fakeVersions{ok: true}, 10)
		boom := errors.New("not found")
		_, err := c.Get(ctx, "k", func() (any, error) { return nil, boom })
		require.ErrorIs(t, err, boom)
		got, err := c.Get(ctx, "k", load("a"))
		require.NoError(t, err)
		require.Equal(t, "a", got)
	})
	t.Run("ReadAcrossChangeNotKept", func(t *testing.T) {
		f := &fakeVersions{ok: true}
		c := NewTenants(f, 10)
		got, _ := c.Get(ctx, "k", func() (any, error) { f.v++; return "old", nil })
		require.Equal(t, "old", got)
		got, _ = c.Get(ctx, "k", load("new"))
		require.Equal(t, "new", got, "a value read before a change is not kept after it")
		// Also when the generation was already started at the old
		// version: a value read across the change is not served.
		f.v++
		_, _ = c.Get(ctx, "other", load("x"))
		got, _ = c.Get(ctx, "k", func() (any, error) { f.v++; return "stale", nil })
		require.Equal(t, "stale", got)
		got, _ = c.Get(ctx, "k", load("fresh"))
		require.Equal(t, "fresh", got)
	})
	t.Run("CannotTell", func(t *testing.T) {
		f := &fakeVersions{ok: false}
		c := NewTenants(f, 10)
		loads = 0
		c.Get(ctx, "k", load("a"))
		c.Get(ctx, "k", load("a"))
		require.Equal(t, 2, loads, "nothing is kept while the version cannot be told")
	})
	t.Run("Cap", func(t *testing.T) {
		c := NewTenants(&fakeVersions{ok: true}, 2)
		loads = 0
		for _, k := range []string{"a", "b", "c", "a"} {
			c.Get(ctx, k, load(k))
		}
		require.Equal(t, 4, loads, "the third entry started the cache over")
		require.LessOrEqual(t, len(c.items), 2)
	})
	t.Run("Nil", func(t *testing.T) {
		var c *Tenants
		loads = 0
		c.Get(ctx, "k", load("a"))
		c.Get(ctx, "k", load("a"))
		require.Equal(t, 2, loads)
	})
}
