package graph

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAdmit: no more than n requests run at once; the rest wait their
// turn, and one whose client leaves while waiting never runs.
func TestAdmit(t *testing.T) {
	var running, most, ran atomic.Int32
	release := make(chan struct{})
	h := admit(2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		running.Add(-1)
		ran.Add(1)
	}))
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/graphql", nil)) })
	}
	require.Eventually(t, func() bool { return running.Load() == 2 }, 5*time.Second, time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan struct{})
	go func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/graphql", nil).WithContext(ctx))
		close(gone)
	}()
	cancel()
	<-gone

	close(release)
	wg.Wait()
	require.Equal(t, int32(2), most.Load())
	require.Equal(t, int32(6), ran.Load(), "the client that left never ran")
}
