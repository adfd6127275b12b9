package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// testClock is a clock a test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// mustNew builds a Main over db, migrated, with cfg changed by opts.
func mustNew(t *testing.T, db *store.DB, opts ...func(*Config)) *Main {
	t.Helper()
	cfg := DefaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	m, err := New(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(m.Listener.Close)
	t.Cleanup(m.Live.Close)
	require.NoError(t, m.Migrate(context.Background()))
	return m
}

// get answers a GET of path with h, in process.
func get(h http.Handler, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := &testClock{t: time.Now()}
		m := mustNew(t, db, func(c *Config) { c.ReadyClock = clock.Now })
		queries := storetest.Count(db)
		h := m.Handler()
		ready := func() *httptest.ResponseRecorder { return get(h, "/readyz") }

		t.Run("OneCheckPerSecond", func(t *testing.T) {
			queries.Reset()
			answers := make([]*httptest.ResponseRecorder, 200)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range answers {
				wg.Go(func() {
					<-start
					answers[i] = ready()
				})
			}
			close(start)
			wg.Wait()
			for _, res := range answers {
				require.Equal(t, http.StatusOK, res.Code, "%s", res.Body)
			}
			checks := queries.N()
			require.True(t, checks >= 1 && checks <= 2, "200 probes within a second made %d statements", checks)
			clock.Add(999 * time.Millisecond)
			require.Equal(t, http.StatusOK, ready().Code)
			require.Equal(t, checks, queries.N(), "still the same second")
			clock.Add(time.Millisecond)
			require.Equal(t, http.StatusOK, ready().Code)
			require.Equal(t, 2*checks, queries.N(), "a second later, one more check")
		})
		t.Run("ErrDatabaseGone", func(t *testing.T) {
			clock.Add(time.Second)
			require.Equal(t, http.StatusOK, ready().Code)
			require.NoError(t, db.Close())
			require.Equal(t, http.StatusOK, ready().Code, "the state of this second")
			clock.Add(time.Second)
			res := ready()
			require.Equal(t, http.StatusServiceUnavailable, res.Code)
			var body map[string]any
			require.NoError(t, json.Unmarshal(res.Body.Bytes(), &body))
			require.Equal(t, map[string]any{"status": "not_ready", "reason": "database unreachable"}, body)
			require.Equal(t, "no-store", res.Header().Get("Cache-Control"))
			require.Equal(t, http.StatusOK, get(h, "/healthz").Code, "the process is still up")
		})
	})
}
