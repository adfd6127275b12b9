package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// waitJobs waits until the open batch of key has n writers.
func waitJobs(t *testing.T, g *store.GroupCommit, key string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return g.Waiting(key) == n }, 10*time.Second, time.Millisecond)
}

// TestGroupCommit: writers that arrive while a batch of their key is
// being written go together in the next transaction; a refusal in it
// leaves the others committed; any other error fails the whole batch and
// commits nothing of it; a batch of another key does not wait.
func TestGroupCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		_, err := db.ExecContext(ctx, `CREATE TABLE gc_rows (job INTEGER NOT NULL)`)
		require.NoError(t, err)
		count := func() int {
			n, err := db.NewSelect().Table("gc_rows").Count(ctx)
			require.NoError(t, err)
			return int(n)
		}
		g := &store.GroupCommit{Refusal: func(err error) bool { return apperr.CodeOf(err) == apperr.SoldOut }}
		insert := func(job int) func(ctx context.Context, tx bun.Tx) error {
			return func(ctx context.Context, tx bun.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (job) VALUES (?)`, job)
				return err
			}
		}

		// The first create's batch blocks until four more have gathered.
		release := make(chan struct{})
		var mu sync.Mutex
		txs := map[int]bun.Tx{}
		record := func(job int, then func(ctx context.Context, tx bun.Tx) error) func(ctx context.Context, tx bun.Tx) error {
			return func(ctx context.Context, tx bun.Tx) error {
				mu.Lock()
				txs[job] = tx
				mu.Unlock()
				return then(ctx, tx)
			}
		}
		errs := make([]error, 6)
		var wg sync.WaitGroup
		wg.Go(func() {
			errs[0] = g.Do(ctx, db, "7", record(0, func(ctx context.Context, tx bun.Tx) error {
				<-release
				return insert(0)(ctx, tx)
			}))
		})
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return txs[0] != (bun.Tx{}) }, 10*time.Second, time.Millisecond)
		for i := 1; i <= 4; i++ {
			wg.Go(func() {
				write := record(i, insert(i))
				if i == 2 {
					write = record(i, func(ctx context.Context, tx bun.Tx) error {
						return apperr.New(apperr.SoldOut, "Ticket 7 does not have enough tickets left.")
					})
				}
				errs[i] = g.Do(ctx, db, "7", write)
			})
			waitJobs(t, g, "7", i)
		}
		// Another set of tickets has a line of its own and does not wait
		// (on PostgreSQL: SQLite has one writer at a time anyway).
		if db.Postgres() {
			require.NoError(t, g.Do(ctx, db, "8", insert(5)))
		}
		close(release)
		if !db.Postgres() {
			require.NoError(t, g.Do(ctx, db, "8", insert(5)))
		}
		wg.Wait()
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		require.Equal(t, apperr.SoldOut, apperr.CodeOf(errs[2]))
		require.NoError(t, errs[3])
		require.NoError(t, errs[4])
		require.Equal(t, 5, count(), "jobs 0, 1, 3, 4 and the other line's")
		require.Equal(t, txs[1], txs[4], "the four that waited share one transaction")
		require.Equal(t, txs[1], txs[3])
		require.NotEqual(t, txs[0], txs[1])

		// An error that is not a refusal fails its whole batch.
		release = make(chan struct{})
		clear(txs)
		boom := errors.New("disk on fire")
		wg.Go(func() {
			errs[0] = g.Do(ctx, db, "7", record(0, func(ctx context.Context, tx bun.Tx) error {
				<-release
				return insert(10)(ctx, tx)
			}))
		})
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return txs[0] != (bun.Tx{}) }, 10*time.Second, time.Millisecond)
		wg.Go(func() { errs[1] = g.Do(ctx, db, "7", insert(11)) })
		waitJobs(t, g, "7", 1)
		wg.Go(func() { errs[2] = g.Do(ctx, db, "7", func(context.Context, bun.Tx) error { return boom }) })
		waitJobs(t, g, "7", 2)
		close(release)
		wg.Wait()
		require.NoError(t, errs[0])
		require.ErrorIs(t, errs[1], boom)
		require.ErrorIs(t, errs[2], boom)
		require.Equal(t, 6, count(), "the failed batch left nothing")
		require.Zero(t, g.Lines(), "idle lines are dropped")
	})
}
