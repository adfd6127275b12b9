package readcache

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/maphash"
	"slices"
	"sync"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
	"github.com/vektah/gqlparser/v2/ast"
)

// ResponseCache is a GraphQL extension that answers a repeated catalog
// query with the data of its last run, when that run's inputs are provably
// unchanged: the catalog cache's generation (no catalog change, no date
// ended) and the live stock of every date whose availability it showed, read
// again for each answer. A query whose stock moved runs again. Queries
// reading anything but the catalog (order) and answers with errors are
// never kept, nor the answer of a query asked for the first time.
// It keeps its answers in the request's catalog cache snapshot (For).
type ResponseCache struct {
	stock StockReader
	seen  *seenKeys
}

// StockReader reads the live stock of the tickets of event dates, by date
// (catalog.Service.Stock).
type StockReader interface {
	Stock(ctx context.Context, dateIDs []int64) (map[int64][]store.Stock, error)
}

// NewResponseCache returns a response cache that checks kept answers
// against the stock stock reads.
func NewResponseCache(stock StockReader) ResponseCache {
	return ResponseCache{stock: stock, seen: &seenKeys{seed: maphash.MakeSeed(), keys: map[uint64]struct{}{}}}
}

// seenKeys remembers which queries were asked before, by hash: an answer
// is kept only for a query asked twice, so ever-new query texts (the
// playground, a client gone wrong) cost no memory.
type seenKeys struct {
	mu   sync.Mutex
	seed maphash.Seed
	keys map[uint64]struct{}
}

// maxSeenKeys bounds seenKeys (8 bytes and a map slot each); past it the
// set starts over.
const maxSeenKeys = 100_000

// again records k and reports whether it was asked before.
func (s *seenKeys) again(k responseKey) bool {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(k.query)
	h.WriteByte(0)
	h.WriteString(k.operation)
	h.WriteByte(0)
	h.WriteString(k.variables)
	sum := h.Sum64()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[sum]; ok {
		return true
	}
	if len(s.keys) >= maxSeenKeys {
		clear(s.keys)
	}
	s.keys[sum] = struct{}{}
	return false
}

var (
	_ graphql.HandlerExtension     = ResponseCache{}
	_ graphql.OperationInterceptor = ResponseCache{}
)

// catalogRoots are the Query fields whose answers depend on the catalog
// and live stock only.
var catalogRoots = map[string]bool{
	"events": true, "eventsConnection": true, "event": true, "eventBySlug": true, "eventDate": true, "__typename": true,
}

// responseKey identifies one operation with its inputs.
type responseKey struct {
	query, operation, variables string
}

// keptResponse is the data of a run and the stock it showed.
type keptResponse struct {
	data  json.RawMessage
	stock map[int64][]store.Stock
}

// stockRecorder collects the stock an operation's answer shows, by date.
type stockRecorder struct {
	mu   sync.Mutex
	seen map[int64][]store.Stock
}

type recorderKey struct{}

// SawStock records the stock of a date's tickets as the answer being built
// shows them, when the response cache records this operation. Resolvers
// call it wherever they read availability.
// The rows are the loader's, which nothing writes to.
func SawStock(ctx context.Context, dateID int64, stock []store.Stock) {
	rec, ok := ctx.Value(recorderKey{}).(*stockRecorder)
	if !ok {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.seen[dateID] = stock
}

// Recording reports whether the response cache records the stock the
// answer being built shows, so a caller holding whole tickets knows
// whether to make their stock rows for SawStock.
func Recording(ctx context.Context) bool {
	_, ok := ctx.Value(recorderKey{}).(*stockRecorder)
	return ok
}

// ExtensionName implements graphql.HandlerExtension.
func (ResponseCache) ExtensionName() string { return "CatalogResponseCache" }

// Validate implements graphql.HandlerExtension.
func (ResponseCache) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation implements graphql.OperationInterceptor.
func (rc ResponseCache) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if p, err := auth.FromContext(ctx); err == nil && p.Scanner() {
		// The catalog is the apps': a scanner key's catalog fields are
		// refused field by field as the operation runs (graph's key
		// fields), so its answers are never served from here.
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	key, ok := cacheable(oc)
	if !ok {
		return next(ctx)
	}
	snap := For(ctx)
	if v, hit := snap.Get(ctx, key); hit {
		kept := v.(*keptResponse)
		if rc.stockUnchanged(ctx, kept.stock) {
			answered := false
			return func(context.Context) *graphql.Response {
				if answered {
					return nil
				}
				answered = true
				return &graphql.Response{Data: kept.data}
			}
		}
	}
	if !rc.seen.again(key) {
		return next(ctx)
	}
	rec := &stockRecorder{seen: map[int64][]store.Stock{}}
	run := next(context.WithValue(ctx, recorderKey{}, rec))
	return func(ctx context.Context) *graphql.Response {
		res := run(context.WithValue(ctx, recorderKey{}, rec))
		if res != nil && len(res.Errors) == 0 && res.HasNext == nil && res.Data != nil {
			rec.mu.Lock()
			// A copy of exactly its length: the buffer gqlgen wrote has
			// grown by doubling, and the cost charged is the length.
			kept := &keptResponse{data: bytes.Clone(res.Data), stock: rec.seen}
			rec.mu.Unlock()
			snap.Put(ctx, key, kept, kept.cost(key))
		}
		return res
	}
}

// cost charges a kept answer for everything it holds, its key (the query
// text, which a client may pad) included, in the catalog cache's units of
// about 512 bytes.
func (k *keptResponse) cost(key responseKey) int {
	n := len(k.data) + len(key.query) + len(key.operation) + len(key.variables)
	for _, rows := range k.stock {
		n += int(unsafe.Sizeof(store.Stock{}))*len(rows) + 48 // rows and their map entry
	}
	return n/512 + 1
}

// cacheable returns the key of a query that reads the catalog only.
func cacheable(oc *graphql.OperationContext) (responseKey, bool) {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return responseKey{}, false
	}
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
		if !catalogRoots[f.Name] {
			return responseKey{}, false
		}
	}
	vars, err := json.Marshal(oc.Variables) // maps marshal with sorted keys
	if err != nil {
		return responseKey{}, false
	}
	return responseKey{query: oc.RawQuery, operation: oc.OperationName, variables: string(vars)}, true
}

// stockUnchanged reads the stock of the dates a kept answer showed and
// reports whether it is what the answer showed; any error reads as changed.
func (rc ResponseCache) stockUnchanged(ctx context.Context, seen map[int64][]store.Stock) bool {
	if len(seen) == 0 {
		return true
	}
	ids := make([]int64, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	now, err := rc.stock.Stock(ctx, ids)
	if err != nil {
		return false
	}
	for id, rows := range seen {
		if !slices.Equal(rows, now[id]) {
			return false
		}
	}
	return true
}
