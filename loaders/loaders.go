// Package loaders holds the per-request dataloaders that batch every child
// lookup of the catalog (dates of events, tickets of dates, venues), so the
// number of SQL statements a request makes does not grow with its page size.
package loaders

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/graph-gophers/dataloader/v7"
)

// wait is how long a loader gathers keys before it queries. GraphQL starts
// the field resolvers of a list together, so a short window sees them all.
const wait = 5 * time.Millisecond

// Loaders are the dataloaders of one request.
type Loaders struct {
	// Dates maps an event id to its active dates, past ones included.
	Dates *Loader[[]store.EventDate]
	// Tickets maps an event date id to its tickets.
	Tickets *Loader[[]store.Ticket]
	// Venue maps a venue id to the venue (nil when missing).
	Venue *Loader[*store.Venue]
	// Stock maps an event date id to the stock columns of its tickets.
	Stock *Loader[[]store.Stock]
}

// New returns fresh loaders over the catalog service.
func New(c *catalog.Service) *Loaders {
	return &Loaders{
		Dates:   newLoader("Dates", c.ActiveDates, wait),
		Tickets: newLoader("Tickets", c.Tickets, wait),
		Venue:   newLoader("Venue", c.Venues, wait),
		Stock:   newLoader("Stock", c.Stock, wait),
	}
}

// LoadDates returns the dates of these events, fetching those not yet
// loaded in one query, at once.
func (l *Loaders) LoadDates(ctx context.Context, eventIDs []int64) ([][]store.EventDate, error) {
	return l.Dates.LoadAll(ctx, eventIDs)
}

// PrimeVenues loads these venues in one query, at once, for later
// Venue.Load calls: a parent that knows every venue of a level hands them
// over together, so the batch cannot split however the machine schedules
// the children.
func (l *Loaders) PrimeVenues(ctx context.Context, ids []int64) error {
	_, err := l.Venue.LoadAll(ctx, ids)
	return err
}

// PrimeTickets loads the tickets of these dates in one query, at once, for
// later Tickets.Load calls.
func (l *Loaders) PrimeTickets(ctx context.Context, dateIDs []int64) error {
	_, err := l.Tickets.LoadAll(ctx, dateIDs)
	return err
}

// PrimeStock loads the stock columns of the tickets of these dates in one
// query, at once, for later Stock.Load calls.
func (l *Loaders) PrimeStock(ctx context.Context, dateIDs []int64) error {
	_, err := l.Stock.LoadAll(ctx, dateIDs)
	return err
}

// Loader is a dataloader keyed by id that can also be handed all keys of
// a level at once (Now): what is known is answered from memory, the rest
// is fetched in one call, and every later Load of those keys is answered
// without a query.
type Loader[V any] struct {
	name  string
	dl    *dataloader.Loader[int64, V]
	fetch func(context.Context, []int64) (map[int64]V, error)
	mu    sync.Mutex
	have  map[int64]V
}

// newLoader adapts a batch function returning a map into a Loader; a key
// absent from the map gets the zero value.
func newLoader[V any](name string, fetch func(context.Context, []int64) (map[int64]V, error), d time.Duration) *Loader[V] {
	batch := func(ctx context.Context, keys []int64) []*dataloader.Result[V] {
		out := make([]*dataloader.Result[V], len(keys))
		found, err := fetch(ctx, keys)
		for i, k := range keys {
			out[i] = &dataloader.Result[V]{Data: found[k], Error: err}
		}
		return out
	}
	return &Loader[V]{
		dl: dataloader.NewBatchedLoader(batch,
			dataloader.WithWait[int64, V](d),
			dataloader.WithBatchCapacity[int64, V](1000),
		),
		name:  name,
		fetch: fetch,
		have:  map[int64]V{},
	}
}

// Strict makes Load of a key no parent primed an error instead of a batch
// window: every test binary runs strict, so a field that reads a loader
// without its parent priming it (resolvers' field-needs table) fails the
// tests that reach it instead of costing a wait and a statement of its
// own in production, where the batch window stays as the fallback.
var Strict = testing.Testing()

// Load returns a thunk for key: at once when the key was handed over by
// Now, otherwise through the dataloader's batch window (an error when
// Strict).
func (l *Loader[V]) Load(ctx context.Context, key int64) dataloader.Thunk[V] {
	l.mu.Lock()
	v, ok := l.have[key]
	l.mu.Unlock()
	if ok {
		return func() (V, error) { return v, nil }
	}
	if Strict {
		err := fmt.Errorf("loaders: %s of %d was loaded but not primed by its parent (resolvers' field-needs table)", l.name, key)
		return func() (V, error) { var zero V; return zero, err }
	}
	return l.dl.Load(ctx, key)
}

// LoadAll returns the values of keys in order, fetching the unknown ones with
// one call of the batch function, at once. When the caller knows every
// key it needs, waiting for a batch window gains nothing, and a window
// that closes half-way through a long list of keys (a busy machine) would
// split the query in two.
func (l *Loader[V]) LoadAll(ctx context.Context, keys []int64) ([]V, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	l.mu.Lock()
	var missing []int64
	for _, k := range keys {
		if _, ok := l.have[k]; !ok {
			missing = append(missing, k)
		}
	}
	l.mu.Unlock()
	if len(missing) > 0 {
		found, err := l.fetch(ctx, missing)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		for _, k := range missing {
			l.have[k] = found[k]
		}
		l.mu.Unlock()
	}
	out := make([]V, len(keys))
	l.mu.Lock()
	for i, k := range keys {
		out[i] = l.have[k]
	}
	l.mu.Unlock()
	return out, nil
}

type ctxKey struct{}

// For returns the loaders of the request ctx belongs to. A context without
// them is a wiring mistake (a handler outside Middleware) and panics.
func For(ctx context.Context) *Loaders {
	switch l := ctx.Value(ctxKey{}).(type) {
	case *Loaders:
		return l
	case *lazy:
		l.once.Do(func() { l.l = New(l.c) })
		return l.l
	}
	panic("loaders: context has no loaders; wrap the handler with loaders.Middleware")
}

// lazy makes a request's loaders at their first use: most REST requests
// (a cached page, a checkout) never use them.
type lazy struct {
	c    *catalog.Service
	once sync.Once
	l    *Loaders
}

// WithLoaders returns a context carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// Middleware gives each request its own loaders, so cached values never
// outlive the request that loaded them.
func Middleware(c *catalog.Service) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(With(r.Context(), c)))
		})
	}
}

// With returns ctx carrying loaders over c, made on first use, as
// Middleware gives each request.
func With(ctx context.Context, c *catalog.Service) context.Context {
	return context.WithValue(ctx, ctxKey{}, &lazy{c: c})
}
