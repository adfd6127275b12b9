package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// waitJobs waits until the open batch of key has n callers.
func waitJobs(t *testing.T, g *store.GroupCommit[int], key string, n int) {
	t.Helper()
	testwait.For(t, 10*time.Second, "n writers waiting", func() bool { return g.Waiting(key) == n })
}

// TestGroupCommit: callers that arrive while every writer of their key is
// busy go together in the next batch, written by one call with all their
// jobs in the order they came, and each gets its own outcome; up to
// Writers batches of a key are written at once; another key does not
// wait; an idle line is dropped.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	g := &store.GroupCommit[int]{Writers: 2}
	var mu sync.Mutex
	var batches [][]int
	gates := map[int]chan struct{}{0: make(chan struct{}), 1: make(chan struct{})}
	started := make(chan int, 10)
	write := func(ctx context.Context, jobs []int) []error {
		mu.Lock()
		batches = append(batches, slices.Clone(jobs))
		mu.Unlock()
		started <- jobs[0]
		if gate, ok := gates[jobs[0]]; ok {
			<-gate
		}
		errs := make([]error, len(jobs))
		for i, j := range jobs {
			if j%2 == 1 && j > 1 {
				errs[i] = errors.New("odd")
			}
		}
		return errs
	}
	errs := make([]error, 7)
	var wg sync.WaitGroup
	// Jobs 0 and 1 each take a writer and hold it.
	for i := range 2 {
		wg.Go(func() { errs[i] = g.Do(ctx, "7", i, write) })
		require.Equal(t, i, <-started)
	}
	// Both writers busy: 2 to 5 gather in one batch.
	for i := 2; i <= 5; i++ {
		wg.Go(func() { errs[i] = g.Do(ctx, "7", i, write) })
		waitJobs(t, g, "7", i-1)
	}
	// Another key has writers of its own.
	require.NoError(t, g.Do(ctx, "8", 6, write))
	require.Equal(t, 6, <-started)
	close(gates[0])
	require.Equal(t, 2, <-started, "the batch starts once a writer is free")
	close(gates[1])
	wg.Wait()

	require.Equal(t, [][]int{{0}, {1}, {6}, {2, 3, 4, 5}}, batches)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.NoError(t, errs[2])
	require.EqualError(t, errs[3], "odd")
	require.NoError(t, errs[4])
	require.EqualError(t, errs[5], "odd")
	require.Zero(t, g.Lines(), "idle lines are dropped")
}
