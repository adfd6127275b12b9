package admission

import (
	"context"
	"sync"
	"testing"
	"time"
)

func (t *Tarpit) heldNow() (total int, per map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	per = map[string]int{}
	for k, v := range t.held {
		per[k] = v
	}
	return t.total, per
}

// waitHeld waits until t holds n answers in all.
func waitHeld(t *testing.T, tp *Tarpit, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if total, _ := tp.heldNow(); total == n {
			return
		}
		if time.Now().After(deadline) {
			total, per := tp.heldNow()
			t.Fatalf("holding %d (%v), want %d", total, per, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestTarpitHolds(t *testing.T) {
	tp := &Tarpit{Delay: 80 * time.Millisecond, PerClient: 4, Total: 8}
	for _, c := range []struct {
		name       string
		retryAfter time.Duration
		atLeast    time.Duration
	}{
		{"the delay", 0, 80 * time.Millisecond},
		{"Retry-After when shorter", 30 * time.Millisecond, 30 * time.Millisecond},
		{"the delay when Retry-After is longer", time.Second, 80 * time.Millisecond},
	} {
		start := time.Now()
		if !tp.Hold(context.Background(), "a", c.retryAfter) {
			t.Fatalf("%s: not held", c.name)
		}
		took := time.Since(start)
		if took < c.atLeast || took > c.atLeast+time.Second {
			t.Errorf("%s: held %s, want %s", c.name, took, c.atLeast)
		}
	}
	if total, per := tp.heldNow(); total != 0 || len(per) != 0 {
		t.Errorf("after the holds: %d held, %v", total, per)
	}
	var off *Tarpit
	if off.Hold(context.Background(), "a", 0) || (&Tarpit{PerClient: 1, Total: 1}).Hold(context.Background(), "a", 0) {
		t.Error("a nil Tarpit or one without a delay held an answer")
	}
}

// A client holds at most PerClient answers and everyone at most Total;
// beyond, refusals are answered at once. A client that leaves stops its
// hold.
func TestTarpitBounds(t *testing.T) {
	tp := &Tarpit{Delay: time.Hour, PerClient: 3, Total: 5}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	hold := func(client string) {
		wg.Go(func() {
			if !tp.Hold(ctx, client, 0) {
				t.Errorf("%s: a hold within the bounds was refused", client)
			}
		})
	}
	for range 3 {
		hold("a")
	}
	waitHeld(t, tp, 3)
	if tp.Hold(ctx, "a", 0) {
		t.Error("a's fourth refusal was held (PerClient 3)")
	}
	hold("b")
	hold("b")
	waitHeld(t, tp, 5)
	if tp.Hold(ctx, "c", 0) {
		t.Error("c's refusal was held with 5 held (Total 5)")
	}
	cancel() // every client leaves
	wg.Wait()
	if total, per := tp.heldNow(); total != 0 || len(per) != 0 {
		t.Errorf("after the clients left: %d held, %v", total, per)
	}
}
