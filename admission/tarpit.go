package admission

import (
	"context"
	"sync"
	"time"
)

// Tarpit holds the answer to a request refused for a rate limit
// (rate_limit_exceeded) for up to Delay, or the Retry-After it carries if
// shorter, before it is sent. A client that honours Retry-After never
// notices; one that retries at once in a loop — within its key's limits
// an attacker can still send thousands of refused requests a second, each
// costing the server a parse, a key lookup and a limiter check, and the
// sender's CPU on a shared machine — gets one answer per Delay per
// connection instead. A held request costs a sleeping goroutine and its
// connection, no CPU.
//
// Holding is bounded, so it cannot become a way to pin connections: at
// most PerClient held answers per client address (the failed-auth key:
// an IPv6 client per /64) and Total in all; a refusal beyond either is
// answered at once. A client that leaves stops its hold.
type Tarpit struct {
	Delay     time.Duration // 0 answers every refusal at once
	PerClient int
	Total     int

	mu    sync.Mutex
	held  map[string]int
	total int
}

// Default bounds of a Tarpit.
const (
	DefaultTarpitDelay     = time.Second
	DefaultTarpitPerClient = 256
	DefaultTarpitTotal     = 4096
)

// Hold waits before a refusal of client's request is answered: Delay, or
// retryAfter when shorter (and positive), unless the bounds are reached or
// ctx ends first. It reports whether it held the answer.
func (t *Tarpit) Hold(ctx context.Context, client string, retryAfter time.Duration) bool {
	if t == nil || t.Delay <= 0 {
		return false
	}
	d := t.Delay
	if retryAfter > 0 {
		d = min(d, retryAfter)
	}
	t.mu.Lock()
	if t.total >= t.Total || t.held[client] >= t.PerClient {
		t.mu.Unlock()
		return false
	}
	if t.held == nil {
		t.held = map[string]int{}
	}
	t.held[client]++
	t.total++
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		if t.held[client]--; t.held[client] == 0 {
			delete(t.held, client)
		}
		t.total--
		t.mu.Unlock()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	return true
}
