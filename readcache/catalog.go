package readcache

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/boxoffice/boxoffice/store"
)

// Versions reports the catalog's version: a number that changes whenever
// the catalog may have changed, and ok false when nobody can tell
// (store.NewCatalogWatch).
type Versions interface {
	Version(ctx context.Context) (version uint64, ok bool)
}

// DefaultCacheBudget is how many cost units (roughly, catalog rows) a Cache
// keeps before it starts over: about 25 MB of converted catalog, room for
// every page, date and ticket of a catalog of 3,000 dates with 12,000
// tickets.
const DefaultCacheBudget = 60_000

// Cache keeps what readers derive from the published catalog (converted
// events, dates, venues, ticket fields other than stock) for as long as it
// cannot differ from a fresh read: until the catalog's version moves (an
// import, from any process) or the next active date ends, which is the only
// way time changes a listing. Live stock is never kept. Values are shared by
// every request and must not be modified. A nil *Cache keeps nothing.
type Cache struct {
	versions Versions
	db       *store.DB
	now      func() time.Time
	budget   int

	mu  sync.Mutex
	gen *generation
}

// generation is the content of a Cache for one catalog version, valid
// before until (zero: no date ends).
type generation struct {
	version uint64
	until   time.Time
	cost    int
	items   map[any]any
	// prev is the generation this one followed, whose values CachedValid
	// may carry over after checking them; nil when there was none or the
	// budget was spent.
	prev *generation
	// loads are the values being loaded, so that requests arriving while
	// one loads wait for it instead of loading it again.
	loads map[any]*loading
}

// loading is one value being loaded for a generation.
type loading struct {
	done  chan struct{}
	value any
	err   error
}

// Token ties a put to the generation its reader looked in, so a value read
// before a change is never kept after it. The zero Token keeps nothing.
type Token struct{ g *generation }

// NewCache returns a cache over db whose validity follows versions and
// now, keeping at most budget cost units.
func NewCache(db *store.DB, versions Versions, now func() time.Time, budget int) *Cache {
	return &Cache{versions: versions, db: db, now: now, budget: budget}
}

// current returns the token of the generation valid now, starting a new
// one when the version moved or a date ended. It costs one statement when a
// generation starts, and on SQLite one to read the version.
func (c *Cache) current(ctx context.Context) Token {
	version, ok := c.versions.Version(ctx)
	if !ok {
		return Token{}
	}
	now := c.now()
	c.mu.Lock()
	g := c.gen
	c.mu.Unlock()
	if g != nil && g.version == version && (g.until.IsZero() || now.Before(g.until)) {
		return Token{g}
	}
	until, err := store.NextDateEnd(ctx, c.db, now)
	if err != nil {
		return Token{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == g {
		c.gen = &generation{version: version, until: until, items: map[any]any{}, prev: g}
		if g != nil {
			g.prev = nil // one generation back at most
		}
	}
	if c.gen.version != version {
		return Token{}
	}
	return Token{c.gen}
}

// get returns the value kept for key in tok's generation.
func (c *Cache) get(tok Token, key any) (any, bool) {
	if tok.g == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := tok.g.items[key]
	return v, ok
}

// Snapshot is one request's view of a Cache: the generation current when
// the request first looks, so a request sees one version of the catalog
// and reads the version once. A nil *Snapshot keeps nothing.
type Snapshot struct {
	c    *Cache
	once sync.Once
	tok  Token
}

// Snapshot returns a new view for one request.
func (c *Cache) Snapshot() *Snapshot {
	if c == nil {
		return nil
	}
	return &Snapshot{c: c}
}

func (s *Snapshot) token(ctx context.Context) Token {
	s.once.Do(func() { s.tok = s.c.current(ctx) })
	return s.tok
}

// Get returns the value kept for key, if any.
func (s *Snapshot) Get(ctx context.Context, key any) (any, bool) {
	if s == nil {
		return nil, false
	}
	return s.c.get(s.token(ctx), key)
}

// Put keeps value for key, unless the catalog has moved on since the
// request first looked. cost is the value's size in catalog rows.
func (s *Snapshot) Put(ctx context.Context, key, value any, cost int) {
	if s == nil {
		return
	}
	s.c.put(s.token(ctx), key, value, cost)
}

// put keeps value for key in the generation tok came from, if that is still
// current. When the budget is spent, the generation starts over empty.
func (c *Cache) put(tok Token, key, value any, cost int) {
	if tok.g == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gen
	if g != tok.g {
		return
	}
	if g.cost+cost > c.budget {
		g = &generation{version: g.version, until: g.until, items: map[any]any{}, loads: g.loads}
		c.gen = g
	}
	g.items[key] = value
	g.cost += cost
}

// Cached returns the value of key from s, or loads it and keeps it. Requests
// of one generation that miss the same key while it loads wait for that
// load: a value is loaded once, not once per request that arrives meanwhile.
func Cached[V any](ctx context.Context, s *Snapshot, key any, cost func(V) int, load func() (V, error)) (V, error) {
	return CachedValid(ctx, s, key, cost, nil, load)
}

// CachedValid is Cached that may also carry a value over from the
// generation before the current one, when valid (if not nil) says it is
// still what a fresh load would give: a change of one event then leaves
// every value it did not touch warm. valid runs outside the cache's lock.
func CachedValid[V any](ctx context.Context, s *Snapshot, key any, cost func(V) int, valid func(V) bool, load func() (V, error)) (V, error) {
	if v, hit := s.Get(ctx, key); hit {
		return v.(V), nil
	}
	if s == nil {
		return load()
	}
	tok := s.token(ctx)
	if tok.g == nil {
		return load()
	}
	s.c.mu.Lock()
	if v, ok := tok.g.items[key]; ok {
		s.c.mu.Unlock()
		return v.(V), nil
	}
	if l, ok := tok.g.loads[key]; ok {
		s.c.mu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		}
		if l.err != nil {
			var zero V
			return zero, l.err
		}
		return l.value.(V), nil
	}
	var old any
	var carried bool
	if valid != nil && tok.g.prev != nil {
		old, carried = tok.g.prev.items[key]
	}
	l := &loading{done: make(chan struct{})}
	if tok.g.loads == nil {
		tok.g.loads = map[any]*loading{}
	}
	tok.g.loads[key] = l
	s.c.mu.Unlock()

	var fresh V
	var err error
	if carried && valid(old.(V)) {
		fresh = old.(V)
	} else {
		fresh, err = load()
	}
	l.value, l.err = fresh, err
	if err == nil {
		s.c.put(tok, key, fresh, cost(fresh))
	}
	s.c.mu.Lock()
	delete(tok.g.loads, key)
	s.c.mu.Unlock()
	close(l.done)
	return fresh, err
}

type snapshotKey struct{}

// WithSnapshot returns a context whose requests read the catalog cache
// through s.
func WithSnapshot(ctx context.Context, s *Snapshot) context.Context {
	return context.WithValue(ctx, snapshotKey{}, s)
}

// For returns the snapshot of the request ctx belongs to; nil (which keeps
// nothing) outside Middleware.
func For(ctx context.Context) *Snapshot {
	s, _ := ctx.Value(snapshotKey{}).(*Snapshot)
	return s
}

// Middleware gives each request its own view of c (Cache.Snapshot), so a
// request sees one version of the catalog however long it runs.
func Middleware(c *Cache) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(WithSnapshot(r.Context(), c.Snapshot())))
		})
	}
}
