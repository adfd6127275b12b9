// Package testwait is how tests wait for what happens on another goroutine,
// process or instance (a job's poll, a retry, a NOTIFY, a browser): they
// wait on the event, and a deadline only ends a test that is stuck. The
// binary does not link it.
package testwait

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Patience is the least a test waits for something it expects to happen.
// It is not a performance target (those live in `make bench`): it only
// ends a stuck test. Beside the rest of the suite on a loaded 2-core
// machine (load 15 to 25, another suite running), waits that take a
// second alone took more than a minute, so it is minutes.
const Patience = 3 * time.Minute

// margin is kept before the test binary's -timeout, so a stuck wait fails
// naming what it waited for instead of panicking with every goroutine.
const margin = 30 * time.Second

// deadliner is *testing.T's Deadline, which testing.TB lacks.
type deadliner interface {
	Deadline() (time.Time, bool)
}

// Deadline returns when a wait for something that takes about d on a quiet
// machine gives up: after Patience, or ten times d when that is longer,
// and before the test binary's own -timeout ends it.
func Deadline(tb testing.TB, d time.Duration) time.Time {
	tb.Helper()
	end := time.Now().Add(max(Patience, 10*d))
	if t, ok := tb.(deadliner); ok {
		if binary, ok := t.Deadline(); ok && binary.Add(-margin).Before(end) {
			end = binary.Add(-margin)
		}
	}
	return end
}

// For calls cond every 10 ms until it holds, and fails tb naming what it
// waited for if it still does not at Deadline(tb, d). d is how long it
// takes on a quiet machine at most.
func For(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	start := time.Now()
	deadline := Deadline(tb, d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("still waiting for %s after %s", what, time.Since(start).Round(time.Second))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Context returns a context that ends at Deadline(tb, d), for a wait
// through an API that takes one.
func Context(tb testing.TB, d time.Duration) (context.Context, context.CancelFunc) {
	tb.Helper()
	return context.WithDeadline(context.Background(), Deadline(tb, d))
}

// Start calls start until it succeeds, and fails tb naming what when it
// fails otherwise than by a deadline, or still does at Deadline(tb, 10 s).
// River's Start bounds its first statements with a short timeout of its
// own, which SQLite on a loaded machine has outlasted: that start is tried
// again rather than the test failed.
func Start(tb testing.TB, what string, start func() error) {
	tb.Helper()
	deadline := Deadline(tb, 10*time.Second)
	for {
		err := start()
		if err == nil {
			return
		}
		if !errors.Is(err, context.DeadlineExceeded) || time.Now().After(deadline) {
			tb.Fatalf("start %s: %v", what, err)
		}
		tb.Logf("%s did not start in time (%v); again", what, err)
	}
}

// After is time.After(time.Until(Deadline(tb, d))), for a select that
// waits on a channel.
func After(tb testing.TB, d time.Duration) <-chan time.Time {
	tb.Helper()
	return time.After(time.Until(Deadline(tb, d)))
}
