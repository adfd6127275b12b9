package main

// load.go: driving an endpoint with vegeta (github.com/tsenart/vegeta/v12,
// used as a library) and summarising every recorded latency exactly.

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// endpoint is one request shape the benchmark drives.
type endpoint struct {
	name   string
	method string
	want   int // the status every request must get
	// target fills the i-th request (called concurrently).
	target func(i uint64, t *vegeta.Target)
}

func (e endpoint) targeter() vegeta.Targeter {
	var seq atomic.Uint64
	return func(t *vegeta.Target) error {
		t.Method = e.method
		e.target(seq.Add(1), t)
		return nil
	}
}

// stats summarises one load run.
type stats struct {
	requests  int
	errors    int            // answers other than want, and transport errors
	codes     map[string]int // what the errors were
	duration  time.Duration
	rps       float64
	p50, p99  time.Duration
	max       time.Duration
	offered   float64 // open-loop runs: the rate asked for
	workers   int     // closed-loop runs: concurrent workers
	firstErr  string
	bytesRecv uint64
	serverCPU time.Duration // per request: the boxoffice process
	pgCPU     time.Duration // per request: PostgreSQL backends of the bench database
	hwm       int64         // the server's VmHWM after the run
	otherCPU  float64       // share of the machine's CPU other processes used during the run
}

// closedLoop runs `workers` concurrent workers, each sending its next
// request as soon as the previous answer is read, for warmup (discarded)
// and then for d.
func closedLoop(e endpoint, workers int, warmup, d time.Duration) stats {
	if warmup > 0 {
		run(e, vegeta.ConstantPacer{}, workers, workers, warmup)
	}
	s := run(e, vegeta.ConstantPacer{}, workers, workers, d)
	s.workers = workers
	return s
}

// openLoop sends requests at a constant rate whatever the latency (up to
// maxWorkers in flight), so latency percentiles include queueing at that
// rate instead of being capped by a fixed concurrency.
func openLoop(e endpoint, rate, maxWorkers int, warmup, d time.Duration) stats {
	p := vegeta.ConstantPacer{Freq: rate, Per: time.Second}
	if warmup > 0 {
		run(e, p, 32, maxWorkers, warmup)
	}
	s := run(e, p, 32, maxWorkers, d)
	s.offered = float64(rate)
	return s
}

func run(e endpoint, p vegeta.Pacer, workers, maxWorkers int, d time.Duration) stats {
	if d <= 0 { // vegeta would attack until stopped (BENCH_WARMUP=0s)
		return stats{codes: map[string]int{}}
	}
	atk := vegeta.NewAttacker(
		vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(maxWorkers)),
		vegeta.Connections(maxWorkers), vegeta.KeepAlive(true), vegeta.Timeout(30*time.Second),
		vegeta.Redirects(vegeta.NoFollow), vegeta.MaxBody(512),
	)
	lat := make([]time.Duration, 0, 1<<16)
	s := stats{codes: map[string]int{}}
	var first, last time.Time
	for r := range atk.Attack(e.targeter(), p, d, e.name) {
		if first.IsZero() || r.Timestamp.Before(first) {
			first = r.Timestamp
		}
		if end := r.End(); end.After(last) {
			last = end
		}
		lat = append(lat, r.Latency)
		s.bytesRecv += r.BytesIn
		if int(r.Code) != e.want || (r.Error != "" && r.Code == 0) {
			s.errors++
			key := fmt.Sprintf("%d", r.Code)
			if r.Code == 0 {
				key = r.Error
			}
			s.codes[key]++
			if s.firstErr == "" {
				s.firstErr = fmt.Sprintf("%d %s %s", r.Code, r.Error, r.Body)
			}
		}
	}
	s.requests = len(lat)
	s.duration = last.Sub(first)
	if s.duration > 0 {
		s.rps = float64(s.requests) / s.duration.Seconds()
	}
	slices.Sort(lat)
	s.p50, s.p99 = percentile(lat, 0.50), percentile(lat, 0.99)
	if len(lat) > 0 {
		s.max = lat[len(lat)-1]
	}
	return s
}

// percentile is the exact nearest-rank percentile of sorted latencies.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// header builds a request header.
func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}
