package graph

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestBoundedCache: entries are evicted least recently used first once
// their bytes pass the bound, and one larger than a tenth is not kept.
func TestBoundedCache(t *testing.T) {
	ctx := context.Background()
	c := newBoundedCache(100, func(k, v string) int { return len(k) + len(v) })
	c.Add(ctx, "a", strings.Repeat("x", 9)) // 10
	c.Add(ctx, "b", strings.Repeat("x", 9)) // 20
	for i := range 8 {
		c.Add(ctx, string(rune('c'+i)), strings.Repeat("x", 9)) // up to 100
	}
	_, ok := c.Get(ctx, "a") // a is now the most recent
	require.True(t, ok)
	c.Add(ctx, "k", strings.Repeat("x", 9))
	_, ok = c.Get(ctx, "b")
	require.False(t, ok, "the least recently used goes first")
	_, ok = c.Get(ctx, "a")
	require.True(t, ok)
	require.LessOrEqual(t, c.used, 100)

	c.Add(ctx, "huge", strings.Repeat("x", 20))
	_, ok = c.Get(ctx, "huge")
	require.False(t, ok, "larger than a tenth of the cache")
}

// TestParsedQueryCost checks the estimate the parsed-query cache charges: a
// parsed and validated document takes no more than 40 times its text.
func TestParsedQueryCost(t *testing.T) {
	q := `query Nested($n: Int!) { events(perPage: $n) { nodes { id name nextStartdateDisplay
  pricing { hasFreeTickets hasPaidTickets isEntirelyFree }
  dates { id startdateDisplay venueName venue { name city } tickets { id name effectivePrice quantityAvailable requiresPayment } } }
  pageInfo { total hasNext } } }`
	schema := NewExecutableSchema(Config{}).Schema()
	var docs []*ast.QueryDocument
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 100 {
		doc, errs := gqlparser.LoadQuery(schema, q)
		require.Empty(t, errs)
		docs = append(docs, doc)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := int(after.HeapAlloc-before.HeapAlloc) / len(docs)
	t.Logf("a %d-byte query holds %d bytes parsed (%.1f×)", len(q), per, float64(per)/float64(len(q)))
	require.LessOrEqual(t, per, 40*len(q))
	runtime.KeepAlive(docs)
}

// TestSecondSight: a text's document is kept only when the text comes a
// second time, so texts that come once never fill the cache.
func TestSecondSight(t *testing.T) {
	ctx := context.Background()
	c := newSecondSight(newBoundedCache(1000, func(k, v string) int { return len(k) + len(v) }))
	for i := range 50 {
		c.Add(ctx, "once"+strings.Repeat("x", i), "doc")
	}
	require.Zero(t, c.used, "texts seen once are not kept")
	c.Add(ctx, "twice", "doc")
	_, ok := c.Get(ctx, "twice")
	require.False(t, ok)
	c.Add(ctx, "twice", "doc")
	v, ok := c.Get(ctx, "twice")
	require.True(t, ok, "kept from its second sighting")
	require.Equal(t, "doc", v)
}
