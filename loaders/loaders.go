// Package loaders holds the per-request dataloaders that batch every child
// lookup of the catalog (dates of events, tickets of dates, venues), so the
// number of SQL statements a request makes does not grow with its page size.
package loaders

import (
	"context"
	"net/http"
	"sync"
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
	Dates *dataloader.Loader[int64, []store.EventDate]
	// Tickets maps an event date id to its tickets.
	Tickets *dataloader.Loader[int64, []store.Ticket]
	// Venue maps a venue id to the venue (nil when missing).
	Venue *dataloader.Loader[int64, *store.Venue]
	// Stock maps an event date id to the stock columns of its tickets.
	Stock *dataloader.Loader[int64, []store.Ticket]
	// Cache is this request's view of the catalog cache.
	Cache *catalog.Snapshot

	mu        sync.Mutex
	stockSeen map[int64][]StockRow // nil: not recording

	catalog *catalog.Service
}

// New returns fresh loaders over the catalog service.
func New(c *catalog.Service) *Loaders {
	return &Loaders{
		Dates:   newLoader(c.ActiveDates, wait),
		Tickets: newLoader(c.Tickets, wait),
		Venue:   newLoader(c.Venues, wait),
		Stock:   newLoader(c.Stock, wait),
		Cache:   c.Cache.Snapshot(),
		catalog: c,
	}
}

// DatesNow loads the dates of these events in one query, at once, and
// keeps them for later Dates.Load calls.
func (l *Loaders) DatesNow(ctx context.Context, eventIDs []int64) ([][]store.EventDate, error) {
	return loadNow(ctx, l.Dates, l.catalog.ActiveDates, eventIDs)
}

// LoadNow fetches one key with one call of fetch, at once, and primes l
// with it: for a caller that knows no other key will join a batch.
func LoadNow[V any](ctx context.Context, l *dataloader.Loader[int64, V], fetch func(context.Context, []int64) (map[int64]V, error), key int64) (V, error) {
	vs, err := loadNow(ctx, l, fetch, []int64{key})
	if err != nil {
		var zero V
		return zero, err
	}
	return vs[0], nil
}

// newLoader adapts a batch function returning a map into a dataloader; a key
// absent from the map gets the zero value.
func newLoader[V any](fetch func(context.Context, []int64) (map[int64]V, error), d time.Duration) *dataloader.Loader[int64, V] {
	batch := func(ctx context.Context, keys []int64) []*dataloader.Result[V] {
		out := make([]*dataloader.Result[V], len(keys))
		found, err := fetch(ctx, keys)
		for i, k := range keys {
			out[i] = &dataloader.Result[V]{Data: found[k], Error: err}
		}
		return out
	}
	return dataloader.NewBatchedLoader(batch,
		dataloader.WithWait[int64, V](d),
		dataloader.WithBatchCapacity[int64, V](1000),
	)
}

// StockRow is the stock of one ticket as a response showed it.
type StockRow struct {
	ID, Sold, Held int64
	Quantity       int64 // -1: unlimited
}

// StockRows returns the stock of tickets.
func StockRows(ts []store.Ticket) []StockRow {
	out := make([]StockRow, len(ts))
	for i := range ts {
		q := int64(-1)
		if ts[i].Quantity != nil {
			q = *ts[i].Quantity
		}
		out[i] = StockRow{ID: ts[i].ID, Sold: ts[i].Sold, Held: ts[i].Held, Quantity: q}
	}
	return out
}

// RecordStock starts recording the stock this request shows.
func (l *Loaders) RecordStock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stockSeen = map[int64][]StockRow{}
}

// SawStock records the stock of a date's tickets as this request shows
// them, when recording.
func (l *Loaders) SawStock(dateID int64, ts []store.Ticket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stockSeen != nil {
		l.stockSeen[dateID] = StockRows(ts)
	}
}

// StockSeen returns the stock recorded since RecordStock, by date.
func (l *Loaders) StockSeen() map[int64][]StockRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stockSeen
}

type ctxKey struct{}

// For returns the loaders of the request ctx belongs to. A context without
// them is a wiring mistake (a handler outside Middleware) and panics.
func For(ctx context.Context) *Loaders {
	if l, ok := ctx.Value(ctxKey{}).(*Loaders); ok {
		return l
	}
	panic("loaders: context has no loaders; wrap the handler with loaders.Middleware")
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
			next.ServeHTTP(w, r.WithContext(WithLoaders(r.Context(), New(c))))
		})
	}
}

// loadNow fetches keys with one call of fetch and primes l with the
// results. When the caller knows every key it needs, waiting for a batch
// window gains nothing, and a window that closes half-way through a long
// list of keys (a busy machine) would split the query in two.
func loadNow[V any](ctx context.Context, l *dataloader.Loader[int64, V], fetch func(context.Context, []int64) (map[int64]V, error), keys []int64) ([]V, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	found, err := fetch(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]V, len(keys))
	for i, k := range keys {
		out[i] = found[k]
		l.Prime(ctx, k, found[k])
	}
	return out, nil
}
