package main

// fanout.go: `go run . fanout`. Webhook fan-out at scale: one app with 16
// test endpoints (every event type) on a receiver in this process that
// answers 204 at once, BENCH_FANOUT_EVENTS (default 10,000) events made
// by free test checkouts (each an order.paid, recorded with its 16
// deliveries and their jobs in the checkout's transaction), and the time
// until every one of the events × 16 deliveries has arrived: the delivery
// rate. Each endpoint's last delivery is reported too, so an endpoint
// whose deliveries lag behind the others' shows.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

const fanoutDB = "boxoffice_fanout"

// fanoutEndpoints is how many endpoints the app has: the most an app may
// have in one environment.
const fanoutEndpoints = 16

func fanoutMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	events := 10000
	if v := os.Getenv("BENCH_FANOUT_EVENTS"); v != "" {
		if events, err = strconv.Atoi(v); err != nil || events < 1 {
			return fmt.Errorf("BENCH_FANOUT_EVENTS %q is not a count", v)
		}
	}
	// The receiver is on this machine's loopback.
	if err := os.Setenv("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"); err != nil {
		return err
	}
	rc, err := newFanoutReceiver(events * fanoutEndpoints)
	if err != nil {
		return err
	}
	defer rc.close()
	m, drop, err := startModeServer(ctx, cfg, fanoutDB, "fanout")
	if err != nil {
		return err
	}
	defer joinErr(&err, drop)
	defer func() { _ = m.stop() }()
	base, sd := m.base, m.sd
	for i := range fanoutEndpoints {
		body, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("%s/ep/%d", rc.url, i), "enabled_events": []string{"*"}})
		e := endpoint{name: "endpoint", method: http.MethodPost, want: http.StatusCreated, target: func(_ uint64, t *vegeta.Target) {
			t.URL, t.Body = base+"/api/v1/webhook-endpoints", body
			t.Header = header("X-API-Key", sd.testKey, "Content-Type", "application/json")
		}}
		if code, resp, _, err := do(e, 0); err != nil || code != http.StatusCreated {
			return fmt.Errorf("creating endpoint %d: %d %s %v", i, code, resp, err)
		}
	}
	step("fanout: %d endpoints; making %d events (free test checkouts, %d at a time)", fanoutEndpoints, events, cfg.concurrency)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.concurrency)
	run := time.Now().UnixNano()
	for range cfg.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= events || ctx.Err() != nil {
					return
				}
				date := fmt.Sprintf("%s-D%d", refDoorEvent, i%datesPerEvent+1)
				body, _ := json.Marshal(checkoutRequest(sd, refDoorEvent, date, date+"-FREE", "Fan Out", "fanout@bench.example"))
				idem := fmt.Sprintf("fanout-%d-%d", run, i)
				e := endpoint{name: "free-cart", method: http.MethodPost, want: http.StatusCreated, target: func(_ uint64, t *vegeta.Target) {
					t.URL, t.Body = base+"/api/v1/checkout-sessions", body
					t.Header = header("X-API-Key", sd.testKey, "Content-Type", "application/json", "Idempotency-Key", idem)
				}}
				if code, resp, _, err := do(e, 0); err != nil || code != http.StatusCreated {
					errs <- fmt.Errorf("free cart %d: %d %.200s %v", i, code, resp, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	made := time.Since(start)
	step("fanout: %d events made in %v (%.0f/s), %d deliveries arrived meanwhile", events, made.Round(time.Millisecond),
		float64(events)/made.Seconds(), rc.total.Load())
	deadline := time.Now().Add(30 * time.Minute)
	for rc.total.Load() < int64(events*fanoutEndpoints) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("fanout: only %d of %d deliveries arrived", rc.total.Load(), events*fanoutEndpoints)
		}
		time.Sleep(100 * time.Millisecond)
	}
	all := time.Since(start)
	lasts := rc.lastArrivals(start)
	slices.Sort(lasts)
	step("fanout: all %d deliveries arrived %v after the first event: %.0f deliveries/s; each endpoint's last delivery after %v (first endpoint done) to %v (last); duplicates %d",
		events*fanoutEndpoints, all.Round(time.Millisecond), float64(events*fanoutEndpoints)/all.Seconds(),
		lasts[0].Round(time.Millisecond), lasts[len(lasts)-1].Round(time.Millisecond), rc.duplicates.Load())
	return nil
}

// fanoutReceiver counts the deliveries each endpoint gets, and the
// deliveries of one event to one endpoint it got more than once.
type fanoutReceiver struct {
	srv        *http.Server
	url        string
	total      atomic.Int64
	duplicates atomic.Int64
	mu         sync.Mutex
	seen       map[string]bool
	last       [fanoutEndpoints]time.Time
}

func newFanoutReceiver(expect int) (*fanoutReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &fanoutReceiver{url: "http://" + ln.Addr().String(), seen: make(map[string]bool, expect)}
	rc.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ep int
		_, _ = fmt.Sscanf(r.URL.Path, "/ep/%d", &ep)
		key := r.Header.Get("X-SVC-Event-Id") + r.URL.Path
		rc.mu.Lock()
		if rc.seen[key] {
			rc.duplicates.Add(1)
		} else {
			rc.seen[key] = true
			rc.total.Add(1)
		}
		if ep >= 0 && ep < fanoutEndpoints {
			rc.last[ep] = time.Now()
		}
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = rc.srv.Serve(ln) }()
	return rc, nil
}

func (rc *fanoutReceiver) lastArrivals(start time.Time) []time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]time.Duration, fanoutEndpoints)
	for i, t := range rc.last {
		out[i] = t.Sub(start)
	}
	return out
}

func (rc *fanoutReceiver) close() { _ = rc.srv.Close() }
