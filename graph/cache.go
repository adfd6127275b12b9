package graph

import (
	"container/list"
	"context"
	"hash/maphash"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// boundedCache is a least-recently-used cache bounded by the size of what
// it holds, not by a count: a count lets clients that send large or ever
// new query texts fill memory. Each entry costs cost(key, value) bytes.
type boundedCache[T any] struct {
	mu    sync.Mutex
	max   int
	used  int
	cost  func(key string, value T) int
	order *list.List // front: most recently used
	byKey map[string]*list.Element
}

type cacheEntry[T any] struct {
	key   string
	value T
	cost  int
}

var _ graphql.Cache[string] = (*boundedCache[string])(nil)

func newBoundedCache[T any](maxBytes int, cost func(string, T) int) *boundedCache[T] {
	return &boundedCache[T]{max: maxBytes, cost: cost, order: list.New(), byKey: map[string]*list.Element{}}
}

// Get implements graphql.Cache.
func (c *boundedCache[T]) Get(_ context.Context, key string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cacheEntry[T]).value, true
	}
	var zero T
	return zero, false
}

// Add implements graphql.Cache. An entry larger than a tenth of the
// cache is not kept.
func (c *boundedCache[T]) Add(_ context.Context, key string, value T) {
	cost := c.cost(key, value)
	if cost > c.max/10 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.used -= e.Value.(*cacheEntry[T]).cost
		c.order.Remove(e)
		delete(c.byKey, key)
	}
	for c.used+cost > c.max && c.order.Len() > 0 {
		oldest := c.order.Back()
		ent := oldest.Value.(*cacheEntry[T])
		c.used -= ent.cost
		c.order.Remove(oldest)
		delete(c.byKey, ent.key)
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry[T]{key: key, value: value, cost: cost})
	c.used += cost
}

// secondSight keeps a parsed document only for a text seen before: a
// text that comes once (an ad-hoc dashboard query, a text made anew for
// every request) is parsed, run and dropped, instead of filling the cache
// and pushing out the texts that do repeat. Under new-text load the cache
// used to fill to its bound with documents never asked again, and the
// server's CPU per request rose by 15 % as it did (go run . drift: the
// collector has that much more to mark each cycle). A text that repeats
// is parsed twice, then kept. The response cache admits answers the same
// way (readcache.seenKeys).
type secondSight[T any] struct {
	*boundedCache[T]
	seed maphash.Seed
	mu   sync.Mutex
	seen map[uint64]struct{}
}

// maxSeenTexts bounds what secondSight remembers (8 bytes and a map slot
// each); past it the set starts over.
const maxSeenTexts = 100_000

func newSecondSight[T any](c *boundedCache[T]) *secondSight[T] {
	return &secondSight[T]{boundedCache: c, seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
}

// Add implements graphql.Cache: the document is kept if its text was
// added before.
func (c *secondSight[T]) Add(ctx context.Context, key string, value T) {
	if c.again(key) {
		c.boundedCache.Add(ctx, key, value)
	}
}

// again records key and reports whether it was recorded before.
func (c *secondSight[T]) again(key string) bool {
	h := maphash.String(c.seed, key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[h]; ok {
		return true
	}
	if len(c.seen) >= maxSeenTexts {
		clear(c.seen)
	}
	c.seen[h] = struct{}{}
	return false
}
