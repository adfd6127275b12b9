package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/readcache"
	"github.com/boxoffice/boxoffice/resolvers"
	"github.com/boxoffice/boxoffice/rest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// statements records the text of every statement a database runs while on.
type statements struct {
	mu   sync.Mutex
	on   bool
	seen []string
}

func (s *statements) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (s *statements) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on && e.Err == nil {
		s.seen = append(s.seen, e.Query)
	}
}

func (s *statements) record(on bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.on, s.seen = on, nil
	return out
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType     string     `json:"Node Type"`
	Relation     string     `json:"Relation Name"`
	ActualRows   float64    `json:"Actual Rows"`
	ActualLoops  float64    `json:"Actual Loops"`
	RemovedByF   float64    `json:"Rows Removed by Filter"`
	RemovedByIdx float64    `json:"Rows Removed by Index Recheck"`
	Plans        []planNode `json:"Plans"`
}

// catalogTables are the tables a sequential scan of must never be planned
// by a catalog read on a large catalog.
var catalogTables = map[string]bool{"events": true, "event_dates": true, "tickets": true}

// explain runs query under EXPLAIN ANALYZE and returns the rows its scans
// read (returned or filtered out, over every loop) and the catalog tables
// it scans sequentially.
func explain(t *testing.T, db *store.DB, query string) (rows int, seqScans []string) {
	t.Helper()
	var raw string
	require.NoError(t, db.DB.DB.QueryRowContext(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+query).Scan(&raw), query)
	var out []struct{ Plan planNode }
	require.NoError(t, json.Unmarshal([]byte(raw), &out))
	var walk func(n *planNode)
	walk = func(n *planNode) {
		if strings.Contains(n.NodeType, "Scan") && n.Relation != "" {
			rows += int((n.ActualRows + n.RemovedByF + n.RemovedByIdx) * max(n.ActualLoops, 1))
			if n.NodeType == "Seq Scan" && catalogTables[n.Relation] {
				seqScans = append(seqScans, n.Relation)
			}
		}
		for i := range n.Plans {
			walk(&n.Plans[i])
		}
	}
	for i := range out {
		walk(&out[i].Plan)
	}
	return rows, seqScans
}

// catalogDoors serves the catalog through both APIs as the server does:
// the read cache's snapshot and the loaders per request, the index behind
// the service.
type catalogDoors struct {
	rest, graphql http.Handler
}

func newCatalogDoors(svc *catalog.Service, cache *readcache.Cache) *catalogDoors {
	res := &resolvers.Resolver{Catalog: svc, Now: svc.Now}
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := auth.WithPrincipal(r.Context(), &auth.Principal{AppID: 1, Environment: store.EnvTest})
			ctx = readcache.WithSnapshot(ctx, cache.Snapshot())
			h.ServeHTTP(w, r.WithContext(loaders.With(ctx, svc)))
		})
	}
	r := chi.NewRouter()
	r.Route("/api/v1", (&rest.Handler{Resolver: res}).Routes)
	gql := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: res, Complexity: resolvers.Complexity()}))
	gql.AddTransport(transport.POST{})
	return &catalogDoors{rest: wrap(r), graphql: wrap(gql)}
}

func (d *catalogDoors) get(t *testing.T, path string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	d.rest.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	require.Equal(t, http.StatusOK, rec.Code, "%s: %s", path, rec.Body.String())
	return rec.Body.Bytes()
}

func (d *catalogDoors) query(t *testing.T, q string) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": q})
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	d.graphql.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), `"errors"`, q)
	return rec.Body.Bytes()
}

// TestColdListingReadsItsPage: on a catalog of 20,000 events (PostgreSQL),
// right after a catalog change, every listing and read of the catalog
// through REST and GraphQL (every filter, both orders, a far page, a
// cursor, the nested dashboard query) makes PostgreSQL read at most 5,000
// rows, and no statement it runs is planned as a sequential scan of
// events, dates or tickets: each statement is run again under EXPLAIN
// ANALYZE and its scans' rows summed. The index's first full read (once
// per process) reads the catalog by design and is left out.
func TestColdListingReadsItsPage(t *testing.T) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("needs PostgreSQL (TEST_DATABASE_URL): the plans and row counts are PostgreSQL's")
	}
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpen(t, "postgres")
	now := time.Now().UTC().Truncate(time.Second)
	storetest.MustLargeCatalog(t, db, 20_000, now)
	seen := &statements{}
	db.AddQueryHook(seen)
	l := store.NewListener(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer l.Close()
	w := store.NewCatalogWatch(db, l)
	clock := func() time.Time { return now }
	svc := &catalog.Service{DB: db, Now: clock, Index: catalog.NewIndex(db, w, catalog.DefaultIndexEvents)}
	doors := newCatalogDoors(svc, readcache.NewCache(db, w, clock, readcache.DefaultCacheBudget))
	waitVersion(t, w, "the watch to start", func(uint64) bool { return true })
	require.NoError(t, svc.Index.Warm(ctx)) // the index's first full read

	var ids struct {
		Event, Date, Venue int64
		Slug               string
	}
	require.NoError(t, db.NewRaw(`SELECT d.event_id, d.id, d.venue_id, e.slug FROM event_dates AS d
		JOIN events AS e ON e.id = d.event_id WHERE e.id = (SELECT max(id) FROM events WHERE NOT hidden_from_listings)
		ORDER BY d.id DESC LIMIT 1`).
		Scan(ctx, &ids.Event, &ids.Date, &ids.Venue, &ids.Slug))
	after := url.QueryEscape(now.Add(100 * time.Hour).Format(time.RFC3339))
	before := url.QueryEscape(now.Add(900 * time.Hour).Format(time.RFC3339))
	gqlAfter, gqlBefore := now.Add(100*time.Hour).Format(time.RFC3339), now.Add(900*time.Hour).Format(time.RFC3339)
	const nested = `nodes { id name pricing { isEntirelyFree } dates { id startdateIso venue { name city }
		tickets { id name effectivePrice quantityAvailable } } }`
	tests := []struct {
		name, rest, graphql string
	}{
		{"Page1", "/api/v1/events?per_page=100", `{ events(perPage: 100) { pageInfo { total } ` + nested + ` } }`},
		{"Page150", "/api/v1/events?per_page=100&page=150", `{ events(perPage: 100, page: 150) { pageInfo { total } ` + nested + ` } }`},
		{"Dashboard", "/api/v1/events?per_page=50&city=Accra&free=false&order_by=soonest",
			`{ events(perPage: 50, city: "Accra", free: false, orderBy: SOONEST) { pageInfo { total } ` + nested + ` } }`},
		{"Q", "/api/v1/events?per_page=100&q=jazz&page=20", `{ events(perPage: 100, q: "jazz", page: 20) { ` + nested + ` } }`},
		{"IncludePast", "/api/v1/events?per_page=100&include_past=true&page=100",
			`{ events(perPage: 100, includePast: true, page: 100) { ` + nested + ` } }`},
		{"DateRange", "/api/v1/events?per_page=100&starts_after=" + after + "&starts_before=" + before + "&order_by=soonest&page=30",
			fmt.Sprintf(`{ events(perPage: 100, startsAfter: %q, startsBefore: %q, orderBy: SOONEST, page: 30) { %s } }`, gqlAfter, gqlBefore, nested)},
		{"Venue", fmt.Sprintf("/api/v1/events?per_page=100&venue_id=%d", ids.Venue),
			fmt.Sprintf(`{ events(perPage: 100, venueId: %d) { %s } }`, ids.Venue, nested)},
		{"Online", "/api/v1/events?per_page=100&online=true&page=5", `{ events(perPage: 100, online: true, page: 5) { ` + nested + ` } }`},
		{"Free", "/api/v1/events?per_page=100&free=true&page=5", `{ events(perPage: 100, free: true, page: 5) { ` + nested + ` } }`},
		{"Slug", "/api/v1/events?slug=" + ids.Slug, fmt.Sprintf(`{ events(slug: %q) { %s } eventBySlug(slug: %q) { id } }`, ids.Slug, nested, ids.Slug)},
		{"Event", fmt.Sprintf("/api/v1/events/%d", ids.Event), fmt.Sprintf(`{ event(id: %d) { id dates { id } } }`, ids.Event)},
		{"Dates", fmt.Sprintf("/api/v1/events/%d/dates", ids.Event), fmt.Sprintf(`{ eventDate(id: %d) { id tickets { id quantityAvailable } } }`, ids.Date)},
		{"Tickets", fmt.Sprintf("/api/v1/event-dates/%d/tickets", ids.Date),
			`{ eventsConnection(first: 50, city: "Kumasi", orderBy: SOONEST) { pageInfo { endCursor } edges { node { id dates { tickets { id } } } } } }`},
	}
	change := 0
	cold := func(t *testing.T, request func()) {
		t.Helper()
		// One ticket's price moves: the catalog changed.
		change++
		v0, _ := w.Version(ctx)
		_, err := db.ExecContext(ctx, "UPDATE tickets SET price = price + 1 WHERE id = (SELECT min(id) FROM tickets WHERE price > 0)")
		require.NoError(t, err)
		waitVersion(t, w, "the change", func(v uint64) bool { return v != v0 })
		seen.record(true)
		request()
		total := 0
		for _, q := range seen.record(false) {
			if !strings.HasPrefix(strings.TrimSpace(q), "SELECT") {
				continue
			}
			rows, seq := explain(t, db, q)
			require.Empty(t, seq, "a sequential scan of a catalog table:\n%s", q)
			total += rows
		}
		t.Logf("rows read: %d", total)
		require.LessOrEqual(t, total, 5000, "a cold read reads more than its page")
	}
	for _, tt := range tests {
		t.Run(tt.name+"/REST", func(t *testing.T) { cold(t, func() { doors.get(t, tt.rest) }) })
		t.Run(tt.name+"/GraphQL", func(t *testing.T) { cold(t, func() { doors.query(t, tt.graphql) }) })
	}
	// The index's full read goes by id range, a chunk at a time: each
	// chunk's statements read their chunk, not the catalog.
	t.Run("FullReadChunk", func(t *testing.T) {
		seen.record(true)
		es, _, err := store.ListingEventsInRange(ctx, db, ids.Event-3000, 1000)
		require.NoError(t, err)
		require.Len(t, es, 1000)
		for _, q := range seen.record(false) {
			rows, seq := explain(t, db, q)
			require.Empty(t, seq, "a sequential scan of a catalog table:\n%s", q)
			require.LessOrEqual(t, rows, 20_000, q)
			t.Logf("rows read: %d", rows)
		}
	})
}

// TestChangeRewarms: a change of one event leaves every kept page it does
// not touch warm (no page read), reads again the page it is on, and
// requests arriving together for a page being read wait for that one
// read (PostgreSQL, where the index follows changes event by event).
func TestChangeRewarms(t *testing.T) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("needs PostgreSQL (TEST_DATABASE_URL): on SQLite the index reads everything on every change")
	}
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpen(t, "postgres")
	now := time.Now().UTC().Truncate(time.Second)
	storetest.MustLargeCatalog(t, db, 2_000, now)
	seen := &statements{}
	db.AddQueryHook(seen)
	l := store.NewListener(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer l.Close()
	w := store.NewCatalogWatch(db, l)
	clock := func() time.Time { return now }
	svc := &catalog.Service{DB: db, Now: clock, Index: catalog.NewIndex(db, w, catalog.DefaultIndexEvents)}
	doors := newCatalogDoors(svc, readcache.NewCache(db, w, clock, readcache.DefaultCacheBudget))
	waitVersion(t, w, "the watch to start", func(uint64) bool { return true })

	require.NoError(t, svc.Index.Warm(ctx))
	page := func(n int) string { return fmt.Sprintf("/api/v1/events?per_page=100&page=%d", n) }
	gqlPage := func(n int) string {
		return fmt.Sprintf(`{ events(perPage: 100, page: %d) { pageInfo { total } nodes { id name } } }`, n)
	}
	for n := 1; n <= 5; n++ {
		doors.get(t, page(n))
		doors.query(t, gqlPage(n))
	}
	// Page reads are the statements that read whole events rows.
	pageReads := func(run func()) int {
		seen.record(true)
		run()
		n := 0
		for _, q := range seen.record(false) {
			if strings.Contains(q, `"e"."timezone"`) {
				n++
			}
		}
		return n
	}
	firstOf := func(n int) int64 {
		var out struct {
			Data []struct{ ID int64 } `json:"data"`
		}
		require.NoError(t, json.Unmarshal(doors.get(t, page(n)), &out))
		return out.Data[0].ID
	}
	rename := func(id int64) {
		v0, _ := w.Version(ctx)
		_, err := db.ExecContext(ctx, "UPDATE events SET name = name || '!' WHERE id = ?", id)
		require.NoError(t, err)
		waitVersion(t, w, "the change", func(v uint64) bool { return v != v0 })
	}

	rename(firstOf(5))
	for n := 1; n <= 4; n++ {
		require.Zero(t, pageReads(func() { doors.get(t, page(n)) }), "page %d was not touched", n)
		require.Zero(t, pageReads(func() { doors.query(t, gqlPage(n)) }), "page %d was not touched", n)
	}
	require.Equal(t, 1, pageReads(func() { doors.get(t, page(5)) }), "page 5 shows the change")
	require.Contains(t, string(doors.get(t, page(5))), `!"`)

	rename(firstOf(3))
	codes := make(chan int, 20)
	reads := pageReads(func() {
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := httptest.NewRecorder()
				doors.rest.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, page(3), nil))
				codes <- rec.Code
			}()
		}
		wg.Wait()
	})
	close(codes)
	for code := range codes {
		require.Equal(t, http.StatusOK, code)
	}
	require.Equal(t, 1, reads, "20 requests arriving together read the changed page once")
}
