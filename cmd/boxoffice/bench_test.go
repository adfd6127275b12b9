package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// BenchmarkNestedGraphQL is the benchmark's nested query (50 events → 3
// dates → venue and 4 tickets) against a warm catalog cache, in process, on
// PostgreSQL when TEST_DATABASE_URL is set: the server side of make bench's
// GraphQL row, for profiling (-cpuprofile).
func BenchmarkNestedGraphQL(b *testing.B) {
	kind := "sqlite"
	if os.Getenv("TEST_DATABASE_URL") != "" {
		kind = "postgres"
	}
	db := storetest.MustOpen(b, kind)
	tb := setup(b, db)
	tb.catalogWatched(b)
	_, err := catalog.Import(context.Background(), db, bigCatalog(60, time.Now()), time.Now())
	require.NoError(b, err)
	const query = `query Nested($n: Int!) { events(perPage: $n) { nodes { id name nextStartdateDisplay
  pricing { hasFreeTickets hasPaidTickets isEntirelyFree }
  dates { id startdateDisplay venueName venue { name city } tickets { id name effectivePrice quantityAvailable requiresPayment } } }
  pageInfo { total hasNext } } }`
	// make bench-peers' nested query, which PostGraphile answers too.
	const peersQuery = `query Peers($n: Int!) { events(perPage: $n) { nodes { id name
  dates { id startdateIso venue { name city } tickets { id name price quantity } } } } }`
	h := tb.m.Handler()
	run := func(text string) *httptest.ResponseRecorder {
		body, err := json.Marshal(map[string]any{"query": text, "variables": map[string]any{"n": 50}})
		require.NoError(b, err)
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", tb.testKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	require.Equal(b, http.StatusOK, run(query).Code)
	var seq atomic.Int64
	for name, text := range map[string]func() string{
		// The same text: the parsed-query and response caches answer.
		"Repeated": func() string { return query },
		// A new text each request, as ad-hoc dashboard queries are: parsed,
		// validated and executed every time.
		"NewText": func() string { return query + " # " + strconv.FormatInt(seq.Add(1), 10) },
		// bench-peers' new-text row.
		"PeersNewText": func() string { return peersQuery + " # " + strconv.FormatInt(seq.Add(1), 10) },
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if rec := run(text()); rec.Code != http.StatusOK {
						b.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
				}
			})
		})
	}
}

// BenchmarkCachedEventsPage is make bench's cached catalog read,
// GET /api/v1/events?per_page=100 from the catalog cache, in process: what
// the server adds to writing the bytes (admission, limits, the log line),
// for profiling (-cpuprofile, -memprofile).
func BenchmarkCachedEventsPage(b *testing.B) {
	db := storetest.MustOpen(b, "sqlite")
	tb := setup(b, db)
	tb.catalogWatched(b)
	_, err := catalog.Import(context.Background(), db, bigCatalog(120, time.Now()), time.Now())
	require.NoError(b, err)
	h := tb.m.Handler()
	get := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/events?per_page=100", nil)
		req.Header.Set("X-API-Key", tb.testKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	require.Equal(b, http.StatusOK, get().Code)
	b.ReportAllocs()
	for b.Loop() {
		if rec := get(); rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
