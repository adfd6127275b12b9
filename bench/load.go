package main

// load.go: driving an endpoint with vegeta (github.com/tsenart/vegeta/v12,
// used as a library) and summarising every recorded latency exactly.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net"
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
	// graphql: an answer with an "errors" key anywhere in its body is an
	// error too, whatever its status (gqlErrorsTransport).
	graphql bool
	// mustContain, when set, must be in the first 512 bytes of every
	// answer (what vegeta keeps), or it counts as an error.
	mustContain []byte
	// target fills the i-th request (called concurrently).
	target func(i uint64, t *vegeta.Target)
}

// requestSeq numbers every request of the process, across endpoints and
// runs: a warm-up and its measured run never send the same number, so a
// new query text or idempotency key is never one a previous run sent (which
// the server would answer from its caches or as a replay).
var requestSeq atomic.Uint64

func (e endpoint) targeter() vegeta.Targeter {
	seq := &requestSeq
	return func(t *vegeta.Target) error {
		t.Method = e.method
		e.target(seq.Add(1), t)
		return nil
	}
}

// stats summarises one load run.
type stats struct {
	requests   int
	errors     int            // answers other than want, and transport errors
	codes      map[string]int // what the errors were
	duration   time.Duration
	rps        float64
	p50, p99   time.Duration
	max        time.Duration
	offered    float64 // open-loop runs: the rate asked for
	workers    int     // closed-loop runs: concurrent workers
	firstErr   string
	bytesRecv  uint64
	serverCPU  time.Duration // per request: the boxoffice process
	pgCPU      time.Duration // per request: PostgreSQL backends of the bench database
	pgBackends int           // how many backends of the database were seen
	hwm        int64         // the server's VmHWM after the run
	otherCPU   float64       // share of the machine's CPU other processes used during the run
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
	opts := []func(*vegeta.Attacker){vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(maxWorkers))}
	if e.graphql {
		// vegeta's own client, as Connections and KeepAlive(true) set it
		// up, with gqlErrorsTransport around its transport.
		tr := &http.Transport{DialContext: (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext, MaxIdleConnsPerHost: maxWorkers}
		opts = append(opts, vegeta.Client(&http.Client{Transport: gqlErrorsTransport{tr}}))
	} else {
		opts = append(opts, vegeta.Connections(maxWorkers), vegeta.KeepAlive(true))
	}
	opts = append(opts, vegeta.Timeout(30*time.Second), vegeta.Redirects(vegeta.NoFollow), vegeta.MaxBody(512))
	atk := vegeta.NewAttacker(opts...)
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
		gqlErr := r.Headers.Get(gqlErrorsHeader) != ""
		missing := e.mustContain != nil && int(r.Code) == e.want && !bytes.Contains(r.Body, e.mustContain)
		if int(r.Code) != e.want || (r.Error != "" && r.Code == 0) || gqlErr || missing {
			s.errors++
			key := fmt.Sprintf("%d", r.Code)
			switch {
			case r.Code == 0:
				key = r.Error
			case gqlErr:
				key += " with GraphQL errors"
			case missing:
				key += " without " + string(e.mustContain)
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

// gqlErrorsHeader marks an answer that gqlErrorsTransport found errors in.
const gqlErrorsHeader = "X-Bench-Graphql-Errors"

// gqlErrorsTransport reads each whole answer as it arrives and marks it
// with gqlErrorsHeader when it holds an "errors" key. A GraphQL server may
// put errors after megabytes of data (PostGraphile does: {"data":…,
// "errors":…}), beyond the 512 bytes vegeta keeps, and answers them with
// 200. The body handed on is the first 512 bytes.
type gqlErrorsTransport struct{ base http.RoundTripper }

func (t gqlErrorsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return res, err
	}
	defer res.Body.Close()
	var scan errorsScan
	if _, err := io.Copy(&scan, res.Body); err != nil {
		return nil, err
	}
	if scan.found {
		res.Header.Set(gqlErrorsHeader, "1")
	}
	res.Body = io.NopCloser(bytes.NewReader(scan.head))
	res.ContentLength = int64(len(scan.head))
	return res, nil
}

// errorsScan looks for `"errors":` in a stream, across write boundaries,
// keeping the stream's first 512 bytes.
type errorsScan struct {
	head  []byte
	tail  []byte // the stream's last len(errorsKey)-1 bytes so far
	found bool
}

var errorsKey = []byte(`"errors":`)

func (s *errorsScan) Write(p []byte) (int, error) {
	if n := 512 - len(s.head); n > 0 {
		s.head = append(s.head, p[:min(n, len(p))]...)
	}
	if s.found {
		return len(p), nil
	}
	// A key that straddles writes lies in the stream's last k bytes before p
	// (s.tail) and p's first k.
	k := len(errorsKey) - 1
	joined := append(s.tail[:len(s.tail):len(s.tail)], p[:min(k, len(p))]...)
	s.found = bytes.Contains(joined, errorsKey) || bytes.Contains(p, errorsKey)
	if len(p) < k {
		s.tail = joined[max(len(joined)-k, 0):]
	} else {
		s.tail = append([]byte(nil), p[len(p)-k:]...)
	}
	return len(p), nil
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
