package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/cancellation"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// TestCancellationSurvivesKill: a date with 300 completed orders is
// cancelled with refunds; `boxoffice serve`, as a process, works the
// refunds and is killed (SIGKILL) mid-work, twice; then, on PostgreSQL,
// two instances finish it together.
// When the work is done, every order has exactly one event_cancelled
// refund and its app exactly one refund.created for it, on SQLite and
// PostgreSQL.
func TestCancellationSurvivesKill(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rawURL := storetest.MigratedURL(t, kind)
			db := storetest.OpenURL(t, rawURL)
			tb := setup(t, db)
			const orders = 300
			var wg sync.WaitGroup
			sem := make(chan struct{}, 8)
			for range orders {
				wg.Go(func() {
					sem <- struct{}{}
					defer func() { <-sem }()
					res := tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
					require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
				})
			}
			wg.Wait()
			date := int64(tb.demo.Catalog.EventDates["DEMO-CHALEWOTE-1"])
			st, err := tb.m.Cancellations.Cancel(ctx, date, "Flooded site", true)
			require.NoError(t, err)
			require.Equal(t, orders, st.Orders)
			status := func() *cancellation.Status {
				st, err := tb.m.Cancellations.Status(ctx, date)
				require.NoError(t, err)
				return st
			}

			// Two kills, each once some more orders were refunded and
			// before all were.
			for kill := range 2 {
				before := status().Refunded
				cmd := startServe(t, rawURL)
				deadline := testwait.After(t, 2*time.Minute)
				for st := status(); st.Refunded == before; st = status() {
					select {
					case <-deadline:
						t.Fatalf("kill %d: no refund made by the server", kill+1)
					case <-time.After(20 * time.Millisecond):
					}
				}
				require.NoError(t, cmd.Process.Signal(os.Kill))
				_ = cmd.Wait()
				got := status()
				t.Logf("kill %d after %d of %d orders refunded", kill+1, got.Refunded, got.Orders)
			}
			// Two instances finish the work together on PostgreSQL (an
			// SQLite file is one instance's).
			cmds := []*exec.Cmd{startServe(t, rawURL)}
			if kind == "postgres" {
				cmds = append(cmds, startServe(t, rawURL))
			}
			waitFor(t, 3*time.Minute, "every order to have its refund", func() bool { return status().Done })
			for _, cmd := range cmds {
				require.NoError(t, cmd.Process.Signal(os.Kill))
				_ = cmd.Wait()
			}

			var rows []struct {
				OrderID int64 `bun:"order_id"`
				N       int   `bun:"n"`
			}
			require.NoError(t, db.NewRaw(`SELECT o.id AS order_id, count(rf.id) AS n FROM orders o
				LEFT JOIN refunds rf ON rf.order_id = o.id AND rf.reason = ? WHERE o.event_date_id = ? GROUP BY o.id`,
				store.RefundEventCancelled, date).Scan(ctx, &rows))
			require.Len(t, rows, orders)
			for _, r := range rows {
				require.Equal(t, 1, r.N, "order %d: one refund", r.OrderID)
			}
			require.NoError(t, db.NewRaw(`SELECT o.id AS order_id, count(e.id) AS n FROM orders o
				LEFT JOIN webhook_events e ON e.order_id = o.id AND e.type = 'refund.created' WHERE o.event_date_id = ? GROUP BY o.id`,
				date).Scan(ctx, &rows))
			require.Len(t, rows, orders)
			for _, r := range rows {
				require.Equal(t, 1, r.N, "order %d: one refund.created", r.OrderID)
			}
		})
	}
}

// startServe runs `boxoffice serve` as a process on the database at
// rawURL and returns once it listens; the test kills it.
func startServe(t *testing.T, rawURL string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append(os.Environ(), "BOXOFFICE_RUN_MAIN=1", "ADDR=127.0.0.1:0", "ADMIN_ADDR=", "DATABASE_URL="+rawURL)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			if len(sc.Text()) > 0 {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
	case <-testwait.After(t, time.Minute):
		t.Fatal("serve did not start")
	}
	return cmd
}
