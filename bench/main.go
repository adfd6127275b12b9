// Command bench is Boxoffice's end-to-end benchmark (`make bench`).
//
// It creates a fresh PostgreSQL database (boxoffice_bench), builds the real
// binary, migrates, imports a generated catalog of 1,000 events × 3 dates ×
// 4 tickets, creates an app, runs `boxoffice serve` with rate limits far
// above the load, and drives it with vegeta used as a library: catalog
// reads, a nested GraphQL query over 50 events and live checkout creation.
// A bare net/http handler serving the same bytes as the catalog response is
// driven identically in the same run, as the ceiling of this machine. SQL
// statements per request are counted by a PostgreSQL wire-protocol proxy in
// front of a second server instance (pgcount.go). The table goes to stdout
// and to bench/results.md; the server is stopped with SIGTERM and the
// database dropped.
//
// Environment: BENCH_DATABASE_URL (admin connection, default
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable),
// BENCH_CONCURRENCY (closed-loop workers, default 32), BENCH_DURATION
// (per endpoint, default 10s), BENCH_WARMUP (default 2s), BENCH_GOBENCH=0
// to skip the testing.B hot-path benchmarks, BENCH_KEEP_DB=1 to keep the
// database afterwards, BENCH_PERF=1 to also record the server with perf
// under each endpoint's load (after the measured runs) and list its top
// symbols.
//
// `go run . peers` (`make bench-peers`) instead compares Boxoffice with
// PostGraphile 5 on the same catalog and the same GraphQL queries; see
// peers.go.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

const defaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Performance targets of the benchmark issue, measured on a 2-core machine.
const (
	targetCatalogRPS = 2000
	targetCatalogP99 = 25 * time.Millisecond
	targetGraphQLRPS = 500
	// A query text the server has not seen: parsed, validated, executed.
	targetGraphQLNewRPS = 300
	targetGraphQLNewCPU = 4 * time.Millisecond // server CPU per request
	targetCheckoutRPS   = 300
	targetPeakRSS       = 150_000_000 // bytes (150 MB)
)

// The small GraphQL query: one event and its dates, over every event id.
const smallQuery = `query Small($id: Int!) { event(id: $id) { id name dates { id startdateIso venueName } } }`

// The nested GraphQL query: 50 events → dates → venue and tickets.
const nestedQuery = `query Nested($n: Int!) { events(perPage: $n) { nodes { id name nextStartdateDisplay
  pricing { hasFreeTickets hasPaidTickets isEntirelyFree }
  dates { id startdateDisplay venueName venue { name city } tickets { id name effectivePrice quantityAvailable requiresPayment } } }
  pageInfo { total hasNext } } }`

type config struct {
	adminURL    string
	concurrency int
	duration    time.Duration
	warmup      time.Duration
	goBench     bool
	keepDB      bool
	perf        bool
	root        string // the repository
	dir         string // bench/
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := benchMain
	switch args := os.Args[1:]; {
	case len(args) == 1 && args[0] == "peers":
		run = peersMain
	case len(args) == 1 && args[0] == "soak":
		run = soakMain
	case len(args) > 0:
		fmt.Fprintln(os.Stderr, "usage: go run . [peers|soak]")
		os.Exit(2)
	}
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench: "+err.Error())
		os.Exit(1)
	}
}

func loadConfig() (config, error) {
	c := config{adminURL: cmp.Or(os.Getenv("BENCH_DATABASE_URL"), defaultAdminURL),
		concurrency: 32, duration: 10 * time.Second, warmup: 2 * time.Second,
		goBench: os.Getenv("BENCH_GOBENCH") != "0", keepDB: os.Getenv("BENCH_KEEP_DB") == "1",
		perf: os.Getenv("BENCH_PERF") == "1"}
	var err error
	if v := os.Getenv("BENCH_CONCURRENCY"); v != "" {
		if c.concurrency, err = strconv.Atoi(v); err != nil || c.concurrency < 1 {
			return c, fmt.Errorf("BENCH_CONCURRENCY %q is not a positive integer", v)
		}
	}
	for name, p := range map[string]*time.Duration{"BENCH_DURATION": &c.duration, "BENCH_WARMUP": &c.warmup} {
		if v := os.Getenv(name); v != "" {
			if *p, err = time.ParseDuration(v); err != nil {
				return c, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	// Run from the repository (go run ./bench) or from bench/ (cd bench && go run .).
	wd, _ := os.Getwd()
	for _, cand := range []string{wd, filepath.Dir(wd)} {
		if _, err := os.Stat(filepath.Join(cand, "cmd", "boxoffice")); err == nil {
			c.root = cand
			break
		}
	}
	if c.root == "" {
		return c, errors.New("run from the repository or its bench/ directory")
	}
	c.dir = filepath.Join(c.root, "bench")
	return c, nil
}

// result is everything the report shows.
type result struct {
	cfg        config
	started    time.Time
	pgVersion  string
	cpuModel   string
	closed     map[string]stats // by endpoint name
	open       map[string]stats
	statements map[string]countResult
	oversell   oversellResult
	peakRSS    int64
	stopErr    error
	goBench    string
	bodySizes  map[string]int
	profiles   []profile
	loadBefore string // load average before and after, showing other work on the machine
	loadAfter  string
}

// profile is the perf top list of the server under one endpoint's load.
type profile struct{ name, file, top string }

// Endpoint names, in report order.
const (
	epBaseline = "bare net/http (same bytes as GET /events?per_page=100)"
	epEvents   = "GET /api/v1/events?per_page=100"
	epTickets  = "GET /api/v1/event-dates/{id}/tickets"
	epGraphQLS = "POST /graphql event(id)→dates (small; over 1,000 event ids)"
	epGraphQL  = "POST /graphql events(perPage: 50)→dates→tickets"
	epGraphQLN = "POST /graphql, the same query, a new text each request (no response cache)"
	epCheckout = "POST /api/v1/checkout-sessions (live, paid, one hot ticket)"
	epSpread   = "POST /api/v1/checkout-sessions (live, paid, over 1,000 events)"
)

// loadOrder is the order of the closed-loop runs and of the report.
var loadOrder = []string{epBaseline, epEvents, epTickets, epGraphQLS, epGraphQL, epGraphQLN, epCheckout, epSpread}

func benchMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	res := &result{cfg: cfg, started: time.Now(), closed: map[string]stats{}, open: map[string]stats{},
		statements: map[string]countResult{}, bodySizes: map[string]int{}}
	bin, dbURL, drop, err := prepareRun(ctx, cfg.dir, cfg.root, cfg.adminURL, benchDB, cfg.keepDB)
	if err != nil {
		return err
	}
	defer joinErr(&err, drop)
	binDir := filepath.Dir(bin)
	res.pgVersion = pgVersion(ctx, dbURL)
	res.cpuModel = cpuModel()

	step("migrating and importing %d events × %d dates × %d tickets", nEvents, datesPerEvent, ticketsPerDate)
	t0 := time.Now()
	sd, err := seed(ctx, bin, binDir, dbURL)
	if err != nil {
		return err
	}
	step("seeded in %s", time.Since(t0).Round(time.Millisecond))
	// Statistics, as autovacuum would gather shortly after a bulk import;
	// without them the planner guesses (seq scans, hash joins).
	if err := adminExec(ctx, dbURL, "ANALYZE"); err != nil {
		return err
	}

	// 1. SQL statements per request, through the counting proxy.
	hostport, err := pgHostPort(dbURL)
	if err != nil {
		return err
	}
	proxy, err := startPGCounter(hostport)
	if err != nil {
		return err
	}
	step("counting SQL statements per request (server #1 behind the wire-protocol proxy)")
	counting, err := startServer(ctx, bin, withHost(dbURL, proxy.Addr()), filepath.Join(binDir, "server-count.log"), sd.testKey)
	if err != nil {
		proxy.Close()
		return err
	}
	eps := endpoints(counting.base, sd)
	for _, name := range loadOrder[1:] {
		cr, err := countStatements(ctx, proxy, eps[name], 50)
		if err != nil {
			_ = counting.stop()
			proxy.Close()
			return fmt.Errorf("counting %s: %w", name, err)
		}
		res.statements[name] = cr
		step("  %-55s %s statements/request", name, cr.summary)
	}
	if err := counting.stop(); err != nil {
		step("warning: %v", err)
	}
	proxy.Close()

	// 2. Load, against a fresh server connected straight to PostgreSQL.
	step("starting server #2 for the load runs")
	srv, err := startServer(ctx, bin, dbURL, filepath.Join(binDir, "server.log"), sd.testKey)
	if err != nil {
		return err
	}
	defer func() {
		if srv != nil {
			_ = srv.stop()
		}
	}()
	eps = endpoints(srv.base, sd)
	for _, name := range loadOrder[1:] {
		n, err := checkOnce(eps[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		res.bodySizes[name] = n
	}
	baseline, stopBaseline, err := startBaseline(eps[epEvents])
	if err != nil {
		return err
	}
	defer stopBaseline()
	eps[epBaseline] = baseline
	res.bodySizes[epBaseline] = res.bodySizes[epEvents]

	pid := srv.cmd.Process.Pid
	measure := func(e endpoint, warm, measured func() stats) stats {
		s := measureRun(pid, benchDB, warm, measured)
		if e.name == "baseline" { // the bare handler runs in this process, not the server
			s.serverCPU, s.pgCPU = 0, 0
		}
		return s
	}
	// alive fails the benchmark when the server died under a run (a crash,
	// or something else on the machine killing it).
	alive := func(name string) error {
		if gone, err := srv.gone(); gone {
			return fmt.Errorf("boxoffice serve exited during %s: %v (see %s)", name, err, filepath.Join(binDir, "server.log"))
		}
		return nil
	}
	res.loadBefore = loadAvg()
	for _, name := range loadOrder {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e := eps[name]
		step("closed loop, %d workers, %s (+%s warm-up): %s", cfg.concurrency, cfg.duration, cfg.warmup, name)
		s := measure(e, func() stats { return closedLoop(e, cfg.concurrency, 0, cfg.warmup) },
			func() stats { return closedLoop(e, cfg.concurrency, 0, cfg.duration) })
		res.closed[name] = s
		if err := alive(name); err != nil {
			return err
		}
		step("  %8.0f req/s  p50 %-9s p99 %-9s errors %d  server CPU %s/req  PostgreSQL CPU %s/req  VmHWM %s  other CPU %.0f%%",
			s.rps, ms(s.p50), ms(s.p99), s.errors, ms(s.serverCPU), ms(s.pgCPU), mb(s.hwm), 100*s.otherCPU)
	}
	for _, name := range []string{epEvents, epTickets} {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e := eps[name]
		step("open loop at %d req/s, %s (+%s warm-up): %s", targetCatalogRPS, cfg.duration, cfg.warmup, name)
		s := measure(e, func() stats { return openLoop(e, targetCatalogRPS, 512, 0, cfg.warmup) },
			func() stats { return openLoop(e, targetCatalogRPS, 512, 0, cfg.duration) })
		res.open[name] = s
		if err := alive(name); err != nil {
			return err
		}
		step("  %8.0f req/s  p50 %-9s p99 %-9s errors %d  VmHWM %s", s.rps, ms(s.p50), ms(s.p99), s.errors, mb(s.hwm))
	}
	if cfg.perf {
		for _, name := range loadOrder[1:] {
			step("perf profile of the server under %s", name)
			out := filepath.Join(binDir, "perf-"+eps[name].name+".data")
			top, err := perfProfile(pid, out, 5*time.Second, func() { closedLoop(eps[name], cfg.concurrency, 0, 6*time.Second) }, 15)
			if err != nil {
				top = err.Error()
			}
			res.profiles = append(res.profiles, profile{name: name, file: out, top: top})
		}
	}

	step("oversell check: 200 concurrent live checkouts for a ticket with %d left", oversellStock)
	res.oversell, err = oversellCheck(srv.base, sd)
	if err != nil {
		return err
	}
	step("  %s", res.oversell)

	if res.peakRSS, err = srv.peakRSS(); err != nil {
		return err
	}
	res.loadAfter = loadAvg()
	step("stopping server #2 with SIGTERM")
	res.stopErr = srv.stop()
	srv = nil
	stopBaseline()

	if cfg.goBench {
		step("running the testing.B hot-path benchmarks")
		res.goBench = runGoBench(ctx, cfg.dir)
	}

	report := res.markdown()
	fmt.Println()
	fmt.Print(report)
	old, _ := os.ReadFile(filepath.Join(cfg.dir, "results.md")) // keeps make bench-peers' section
	if err := os.WriteFile(filepath.Join(cfg.dir, "results.md"), []byte(withPeersSection(report, string(old), "")), 0o644); err != nil {
		return err
	}
	step("wrote %s", filepath.Join(cfg.dir, "results.md"))
	return nil
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// measureRun warms up, then runs measured, with the CPU time of the server
// process pid and of the PostgreSQL backends of database db over the
// measured part (per request), the share of the machine's CPU that other
// processes used meanwhile, and the server's VmHWM afterwards.
func measureRun(pid int, db string, warm, measured func() stats) stats {
	warm()
	self := os.Getpid()
	pg := newPGTracker(db)
	pg.Start()
	srv0, me0, all0, t0 := procCPU(pid), procCPU(self), machineBusy(), time.Now()
	s := measured()
	srv1, me1, all1, wall := procCPU(pid), procCPU(self), machineBusy(), time.Since(t0)
	pgUsed := pg.Stop()
	n := time.Duration(max(s.requests, 1))
	s.serverCPU = (srv1 - srv0) / n
	s.pgCPU = pgUsed / n
	ours := (srv1 - srv0) + pgUsed + (me1 - me0)
	s.otherCPU = max(float64(all1-all0-ours), 0) / float64(wall*time.Duration(runtime.NumCPU()))
	s.hwm, _ = peakRSS(pid)
	return s
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

// endpoints builds the driven requests against base.
func endpoints(base string, sd *seeded) map[string]endpoint {
	keyHdr := header("X-API-Key", sd.testKey)
	dateIDs, eventIDs := sortedIDs(sd.ids.EventDates), sortedIDs(sd.ids.Events)
	gqlBody, _ := json.Marshal(map[string]any{"query": nestedQuery, "variables": map[string]any{"n": 50}})
	gqlHdr := header("X-API-Key", sd.testKey, "Content-Type", "application/json")
	checkoutBody, _ := json.Marshal(checkoutRequest(sd, refCheckoutEvent, refCheckoutDate, refCheckoutTicket, "Bench Buyer", "buyer@bench.example"))
	// The spread checkout buys the unlimited Regular ticket of the first
	// date of event i, round robin over every event.
	spread := make([][]byte, nEvents)
	for i := range spread {
		ev := fmt.Sprintf("BEV-%04d", i+1)
		spread[i], _ = json.Marshal(checkoutRequest(sd, ev, ev+"-D1", ev+"-D1-REG", "Bench Buyer", "buyer@bench.example"))
	}
	run := time.Now().UnixNano()
	return map[string]endpoint{
		epEvents: {name: "events", method: http.MethodGet, want: http.StatusOK, target: func(_ uint64, t *vegeta.Target) {
			t.URL, t.Header = base+"/api/v1/events?per_page=100", keyHdr
		}},
		epTickets: {name: "tickets", method: http.MethodGet, want: http.StatusOK, target: func(i uint64, t *vegeta.Target) {
			t.URL, t.Header = fmt.Sprintf("%s/api/v1/event-dates/%d/tickets", base, dateIDs[i%uint64(len(dateIDs))]), keyHdr
		}},
		// The same text each request, over every event id in turn (so the
		// response cache answers once it has seen an id twice).
		epGraphQLS: {name: "graphql-small", method: http.MethodPost, want: http.StatusOK, graphql: true, target: func(i uint64, t *vegeta.Target) {
			body, _ := json.Marshal(map[string]any{"query": smallQuery, "variables": map[string]any{"id": eventIDs[i%uint64(len(eventIDs))]}})
			t.URL, t.Header, t.Body = base+"/graphql", gqlHdr, body
		}},
		epGraphQL: {name: "graphql", method: http.MethodPost, want: http.StatusOK, graphql: true, target: func(_ uint64, t *vegeta.Target) {
			t.URL, t.Header, t.Body = base+"/graphql", gqlHdr, gqlBody
		}},
		// A new alias per request makes a new query text: the response
		// cache never answers, so every request parses, validates and
		// executes (the catalog cache still serves the rows).
		epGraphQLN: {name: "graphql-new", method: http.MethodPost, want: http.StatusOK, graphql: true, target: func(i uint64, t *vegeta.Target) {
			body, _ := json.Marshal(map[string]any{"variables": map[string]any{"n": 50},
				"query": strings.Replace(nestedQuery, "nodes { id", fmt.Sprintf("nodes { r%d: id", i), 1)})
			t.URL, t.Header, t.Body = base+"/graphql", gqlHdr, body
		}},
		epCheckout: {name: "checkout", method: http.MethodPost, want: http.StatusCreated, target: func(i uint64, t *vegeta.Target) {
			t.URL, t.Body = base+"/api/v1/checkout-sessions", checkoutBody
			t.Header = header("X-API-Key", sd.liveKey, "Content-Type", "application/json",
				"Idempotency-Key", fmt.Sprintf("bench-%d-%d", run, i))
		}},
		epSpread: {name: "checkout-spread", method: http.MethodPost, want: http.StatusCreated, target: func(i uint64, t *vegeta.Target) {
			t.URL, t.Body = base+"/api/v1/checkout-sessions", spread[i%uint64(len(spread))]
			t.Header = header("X-API-Key", sd.liveKey, "Content-Type", "application/json",
				"Idempotency-Key", fmt.Sprintf("bench-spread-%d-%d", run, i))
		}},
	}
}

// sortedIDs is the ids of an import result's map, in order.
func sortedIDs(byRef map[string]int64) []int64 {
	ids := make([]int64, 0, len(byRef))
	for _, id := range byRef {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func checkoutRequest(sd *seeded, event, date, ticket, name, email string) map[string]any {
	return map[string]any{
		"event_id": sd.ids.Events[event], "eventdate_id": sd.ids.EventDates[date],
		"items":       []any{map[string]any{"ticket_id": sd.ids.Tickets[ticket], "quantity": 1}},
		"customer":    map[string]any{"name": name, "email": email, "phone": "024 123 4567"},
		"success_url": "https://bench.example/done", "cancel_url": "https://bench.example/cancel",
	}
}

// do sends the i-th request of e once and returns status and body.
func do(e endpoint, i uint64) (int, []byte, http.Header, error) {
	var t vegeta.Target
	t.Method = e.method
	e.target(i, &t)
	req, err := t.Request()
	if err != nil {
		return 0, nil, nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, body, res.Header, err
}

// checkOnce sends one request and checks the answer is the expected one
// (and, for GraphQL, has no errors); it returns the body size.
func checkOnce(e endpoint) (int, error) {
	code, body, _, err := do(e, 1<<40)
	if err != nil {
		return 0, err
	}
	if code != e.want {
		return 0, fmt.Errorf("status %d, want %d: %.300s", code, e.want, body)
	}
	var v struct {
		Errors []any `json:"errors"`
		Data   any   `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Data == nil || len(v.Errors) > 0 {
		return 0, fmt.Errorf("unexpected answer: %.300s", body)
	}
	return len(body), nil
}

// startBaseline serves the exact bytes and Content-Type of one answer of
// like from a bare net/http handler in this process.
func startBaseline(like endpoint) (endpoint, func(), error) {
	code, body, h, err := do(like, 1)
	if err != nil || code != http.StatusOK {
		return endpoint{}, nil, fmt.Errorf("fetching the baseline bytes: %d %v", code, err)
	}
	ct := h.Get("Content-Type")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return endpoint{}, nil, err
	}
	length := strconv.Itoa(len(body))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", length)
		_, _ = w.Write(body)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	var once sync.Once
	stop := func() { once.Do(func() { _ = srv.Close() }) }
	url := "http://" + ln.Addr().String() + "/api/v1/events?per_page=100"
	hdr := like.targetHeader()
	return endpoint{name: "baseline", method: http.MethodGet, want: http.StatusOK, target: func(_ uint64, t *vegeta.Target) {
		t.URL, t.Header = url, hdr
	}}, stop, nil
}

func (e endpoint) targetHeader() http.Header {
	var t vegeta.Target
	e.target(0, &t)
	return t.Header
}

// countResult is the statements of one endpoint's requests.
type countResult struct {
	summary  stmtSummary // of a request with the most common count
	min, max int         // executed statements over all requests
	requests int
	repeated stmtSummary // the same request sent again at once (most common)
}

// countStatements sends n sequential requests (after 5 warm-up ones) and
// reads what each made the server send to PostgreSQL. Background work
// (River, pings) is filtered by text; a stray statement of a periodic job
// could still land in one request's window, so the count reported is the
// most common one.
func countStatements(ctx context.Context, p *pgCounter, e endpoint, n int) (countResult, error) {
	for i := range 5 {
		if code, body, _, err := do(e, uint64(1_000_000+i)); err != nil || code != e.want {
			return countResult{}, fmt.Errorf("warm-up request: %d %v %.300s", code, err, body)
		}
	}
	var first, again mode
	cr := countResult{min: 1 << 30, requests: n}
	for i := range n {
		for _, m := range []*mode{&first, &again} {
			if ctx.Err() != nil {
				return cr, ctx.Err()
			}
			mark := p.Mark()
			code, body, _, err := do(e, uint64(2_000_000+i*7))
			if err != nil || code != e.want {
				return cr, fmt.Errorf("request: %d %v %.300s", code, err, body)
			}
			m.add(summarize(p.Since(mark)))
		}
	}
	cr.summary, cr.min, cr.max = first.best()
	cr.repeated, _, _ = again.best()
	return cr, nil
}

// mode finds the most common statement count of a series of requests.
type mode struct {
	freq     map[int]int
	byCount  map[int]stmtSummary
	min, max int
}

func (m *mode) add(s stmtSummary) {
	if m.freq == nil {
		m.freq, m.byCount, m.min = map[int]int{}, map[int]stmtSummary{}, 1<<30
	}
	m.freq[s.exec]++
	m.byCount[s.exec] = s
	m.min, m.max = min(m.min, s.exec), max(m.max, s.exec)
}

func (m *mode) best() (stmtSummary, int, int) {
	best := -1
	for c, f := range m.freq {
		if best < 0 || f > m.freq[best] || (f == m.freq[best] && c < best) {
			best = c
		}
	}
	return m.byCount[best], m.min, m.max
}

// oversellResult is the outcome of the oversell check.
type oversellResult struct {
	created, soldOut, other int
	otherSample             string
	available               int64
	ok                      bool
}

func (o oversellResult) String() string {
	s := fmt.Sprintf("%d × 201, %d × 409 sold_out, %d other; quantity_available afterwards %d", o.created, o.soldOut, o.other, o.available)
	if o.other > 0 {
		s += " (other: " + o.otherSample + ")"
	}
	return s
}

// oversellCheck fires 200 live checkouts of one ticket each, all at once,
// at the ticket with exactly oversellStock left.
func oversellCheck(base string, sd *seeded) (oversellResult, error) {
	const n = 200
	body, _ := json.Marshal(checkoutRequest(sd, refOversellEvent, refOversellDate, refOversellTicket, "Race Buyer", "race@bench.example"))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n}, Timeout: 60 * time.Second}
	type answer struct {
		code int
		err  string
		body string
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	run := time.Now().UnixNano()
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/checkout-sessions", bytes.NewReader(body))
			req.Header.Set("X-API-Key", sd.liveKey)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("oversell-%d-%d", run, i))
			<-start
			res, err := client.Do(req)
			if err != nil {
				answers[i] = answer{err: err.Error()}
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			var e struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			_ = json.Unmarshal(b, &e)
			answers[i] = answer{code: res.StatusCode, err: e.Error.Code, body: string(b)}
		})
	}
	close(start)
	wg.Wait()
	var o oversellResult
	for _, a := range answers {
		switch {
		case a.code == http.StatusCreated:
			o.created++
		case a.code == http.StatusConflict && a.err == "sold_out":
			o.soldOut++
		default:
			o.other++
			if o.otherSample == "" {
				o.otherSample = fmt.Sprintf("%d %s %.200s", a.code, a.err, a.body)
			}
		}
	}
	// Availability as the API reports it afterwards.
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/event-dates/%d/tickets", base, sd.ids.EventDates[refOversellDate]), nil)
	req.Header.Set("X-API-Key", sd.testKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return o, err
	}
	defer res.Body.Close()
	var tickets struct {
		Data []struct {
			ID                int64 `json:"id"`
			QuantityAvailable int64 `json:"quantity_available"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tickets); err != nil {
		return o, fmt.Errorf("reading tickets after the oversell check: %w", err)
	}
	o.available = -1
	for _, t := range tickets.Data {
		if t.ID == sd.ids.Tickets[refOversellTicket] {
			o.available = t.QuantityAvailable
		}
	}
	o.ok = o.created == oversellStock && o.soldOut == n-oversellStock && o.other == 0 && o.available == 0
	return o, nil
}

// runGoBench runs the hot-path benchmarks of hotpath_test.go.
func runGoBench(ctx context.Context, dir string) string {
	cmd := exec.CommandContext(ctx, goTool(), "test", "-mod=mod", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", "1s", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("go test -bench failed: %v\n%s", err, out)
	}
	var keep []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(line, "Benchmark") || strings.HasPrefix(line, "cpu:") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
