// Command bench is Boxoffice's end-to-end benchmark (`make bench`).
//
// It builds two binaries, the current tree and a baseline commit
// (BENCH_BASELINE, default 2ec159f, built once from `git archive` into
// bench/.baseline/), seeds a template database with each (1,000 events × 3
// dates × 4 tickets, an account and an app), and copies a template afresh
// for every run that writes: the hot-ticket live checkout create runs on
// each binary in turn (A/B/A/B, BENCH_ROUNDS times each) beside pgbench
// running the least a create must write (the physical limit); the other
// rows run round after round on one server of the current tree (catalog
// reads, GraphQL, checkouts, door scans beside checkouts); a flash sale
// drives the hot ticket for BENCH_SALE_DURATION; order sync pages are
// timed over BENCH_ORDERS orders. Load comes from vegeta used as a library;
// SQL statements per request are counted by a PostgreSQL wire-protocol
// proxy in front of a second server instance (pgcount.go); CPU comes from
// /proc (proc.go). The table goes to stdout and to bench/results.md; the
// servers are stopped with SIGTERM and the databases dropped.
//
// Environment: BENCH_DATABASE_URL (admin connection, default
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable), BENCH_DB
// (the name every database of the run begins with, default
// boxoffice_bench), BENCH_CONCURRENCY (closed-loop workers, default 32),
// BENCH_DURATION (per run, default 10s), BENCH_WARMUP (default 2s),
// BENCH_ROUNDS (runs of each row, default 3), BENCH_SALE_DURATION (default
// 5m), BENCH_ORDERS (default 1000000), BENCH_BASELINE (default 2ec159f),
// BENCH_GOBENCH=0 to skip the testing.B hot-path benchmarks,
// BENCH_KEEP_DB=1 to keep the databases afterwards, BENCH_PERF=1 to also
// record the server with perf under each endpoint's load and list its top
// symbols.
//
// `go run . peers` (`make bench-peers`) instead compares Boxoffice with
// PostGraphile 5 on the same catalog and the same GraphQL queries; see
// peers.go. `go run . soak` is make soak (soak.go).
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// settleLimit bounds the wait for an idle server before a row's run.
const settleLimit = 15 * time.Second

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
	// Issue 27: one commit per create and at most six statements.
	targetCreateStatements = 6
	// Issue 27: a catalog read served from the cache costs at most this
	// many times the server CPU of a bare handler writing the same bytes.
	targetCachedVsBare = 2.0
)

// The small GraphQL query: one event and its dates, over every event id.
const smallQuery = `query Small($id: Int!) { event(id: $id) { id name dates { id startdateIso venueName } } }`

// The nested GraphQL query: 50 events → dates → venue and tickets.
const nestedQuery = `query Nested($n: Int!) { events(perPage: $n) { nodes { id name nextStartdateDisplay
  pricing { hasFreeTickets hasPaidTickets isEntirelyFree }
  dates { id startdateDisplay venueName venue { name city } tickets { id name effectivePrice quantityAvailable requiresPayment } } }
  pageInfo { total hasNext } } }`

type config struct {
	adminURL     string
	db           string // BENCH_DB: the name every database of the run starts with
	concurrency  int
	duration     time.Duration
	warmup       time.Duration
	rounds       int           // BENCH_ROUNDS: runs of each row, interleaved
	saleDuration time.Duration // BENCH_SALE_DURATION: the flash sale
	orders       int           // BENCH_ORDERS: the order sync rows' orders
	baseline     string        // BENCH_BASELINE: the commit of the A/B's other side
	goBench      bool
	keepDB       bool
	perf         bool
	root         string // the repository
	dir          string // bench/
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
	case len(args) == 1 && args[0] == "door":
		run = doorMain
	case len(args) == 1 && args[0] == "sale":
		run = saleMain
	case len(args) == 1 && args[0] == "drift":
		run = driftMain
	case len(args) == 1 && args[0] == "cached":
		run = cachedMain
	case len(args) == 1 && args[0] == "ab":
		run = abMain
	case len(args) == 1 && args[0] == "fanout":
		run = fanoutMain
	case len(args) == 1 && args[0] == "catalog":
		run = catalogMain
	case len(args) == 1 && args[0] == "bare":
		run = bareMain // startBaseline's process, not for people
	case len(args) > 0:
		fmt.Fprintln(os.Stderr, "usage: go run . [peers|soak|door|drift|sale|cached|ab|fanout|catalog]")
		os.Exit(2)
	}
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench: "+err.Error())
		os.Exit(1)
	}
}

// dbName is a database name the bench may create and drop: lower-case
// letters, digits and underscores, short enough for the suffixes added.
var dbName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`)

func loadConfig() (config, error) {
	c := config{adminURL: cmp.Or(os.Getenv("BENCH_DATABASE_URL"), defaultAdminURL), db: cmp.Or(os.Getenv("BENCH_DB"), benchDB),
		concurrency: 32, duration: 10 * time.Second, warmup: 2 * time.Second, rounds: 3, saleDuration: 5 * time.Minute,
		orders: 1_000_000, baseline: cmp.Or(os.Getenv("BENCH_BASELINE"), defaultBaseline),
		goBench: os.Getenv("BENCH_GOBENCH") != "0", keepDB: os.Getenv("BENCH_KEEP_DB") == "1",
		perf: os.Getenv("BENCH_PERF") == "1"}
	var err error
	if !dbName.MatchString(c.db) {
		return c, fmt.Errorf("BENCH_DB %q: use lower-case letters, digits and underscores (at most 48)", c.db)
	}
	for name, p := range map[string]*int{"BENCH_CONCURRENCY": &c.concurrency, "BENCH_ROUNDS": &c.rounds, "BENCH_ORDERS": &c.orders} {
		if v := os.Getenv(name); v != "" {
			if *p, err = strconv.Atoi(strings.ReplaceAll(v, "_", "")); err != nil || *p < 1 {
				return c, fmt.Errorf("%s %q is not a positive integer", name, v)
			}
		}
	}
	for name, p := range map[string]*time.Duration{"BENCH_DURATION": &c.duration, "BENCH_WARMUP": &c.warmup,
		"BENCH_SALE_DURATION": &c.saleDuration} {
		if v := os.Getenv(name); v != "" {
			if *p, err = time.ParseDuration(v); err != nil {
				return c, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if c.saleDuration < saleWindows*time.Second {
		return c, fmt.Errorf("BENCH_SALE_DURATION %s: at least %ds (it is measured in %d windows)", c.saleDuration, saleWindows, saleWindows)
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

// short reports whether the run is shorter than the defaults, so that its
// figures are provisional.
func (c config) short() bool {
	return c.duration < 10*time.Second || c.rounds < 3 || c.saleDuration < 5*time.Minute || c.orders < 1_000_000
}

// result is everything the report shows.
type result struct {
	cfg          config
	started      time.Time
	pgVersion    string
	cpuModel     string
	baselineHash string
	closed       map[string]series // by endpoint name, one stats per round
	open         map[string]series
	statements   map[string]countResult // the current side's
	baseCount    countResult            // the baseline's hot-ticket create
	ab           map[string][]abRun     // by side name
	pgb          []pgbenchRun
	door         doorResult
	drift        []driftRun
	sale         saleResult
	sync         syncResult
	oversell     oversellResult
	peakRSS      int64
	stopErr      error
	goBench      string
	bodySizes    map[string]int
	profiles     []profile
	loadBefore   string // load average before and after, showing other work on the machine
	loadAfter    string
	phases       []phase
}

// phase is one part of the run with the load average before and after it.
type phase struct{ name, before, after string }

// begin records the load average as a phase starts; the returned func
// records it at its end.
func (r *result) begin(name string) func() {
	i := len(r.phases)
	r.phases = append(r.phases, phase{name: name, before: loadAvg()})
	return func() { r.phases[i].after = loadAvg() }
}

// profile is the perf top list of the server under one endpoint's load.
type profile struct{ name, file, top string }

// Endpoint names, in report order. The two GraphQL rows that send the same
// query text every request are answered by the response cache once it has
// seen a text (and, for the small one, an id): they measure that cache.
const (
	epBaseline = "bare net/http (same bytes as GET /events?per_page=100)"
	epEvents   = "GET /api/v1/events?per_page=100"
	epTickets  = "GET /api/v1/event-dates/{id}/tickets"
	epGraphQLS = "response-cache row: POST /graphql event(id)→dates (small, the same text over 1,000 event ids)"
	epGraphQL  = "response-cache row: POST /graphql events(perPage: 50)→dates→tickets (the same text each request)"
	epGraphQLN = "POST /graphql, the same nested query, a new text each request (the response cache never answers)"
	epCheckout = "POST /api/v1/checkout-sessions (live, paid, one hot ticket)"
	epSpread   = "POST /api/v1/checkout-sessions (live, paid, over 1,000 events)"
)

// loadOrder is every endpoint: statements are counted for each.
var loadOrder = []string{epBaseline, epEvents, epTickets, epGraphQLS, epGraphQL, epGraphQLN, epCheckout, epSpread}

// epScan is the door's scan: its statements are counted with the others'.
const epScan = "POST /api/v1/check-ins (door scan, admitted)"

// countOrder is every endpoint whose statements are counted.
var countOrder = append(slices.Clone(loadOrder[1:]), epScan)

// rowsOrder is the closed-loop rows run on one server, round after round;
// the hot-ticket create runs in the A/B instead, on a fresh server and
// database per run.
var rowsOrder = []string{epBaseline, epEvents, epTickets, epGraphQLS, epGraphQL, epGraphQLN, epSpread}

func benchMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		return errNoPgbench
	}
	res := &result{cfg: cfg, started: time.Now(), closed: map[string]series{}, open: map[string]series{},
		statements: map[string]countResult{}, bodySizes: map[string]int{}, ab: map[string][]abRun{}}
	res.cpuModel = cpuModel()
	res.loadBefore = loadAvg()

	// The two binaries, and a template database seeded by each.
	done := res.begin("building and seeding")
	bin, err := buildCurrent(ctx, cfg.dir, cfg.root)
	if err != nil {
		return err
	}
	binDir := filepath.Dir(bin)
	baseBin, hash, err := baselineBinary(ctx, cfg.root, cfg.dir, cfg.baseline)
	if err != nil {
		return err
	}
	res.baselineHash = hash
	cur := &side{name: "current", label: "current tree", bin: bin, template: cfg.db + "_tpl_cur"}
	base := &side{name: "baseline", label: cfg.baseline, bin: baseBin, template: cfg.db + "_tpl_base"}
	var (
		mainDB = cfg.db
		abDB   = cfg.db + "_ab"
		pgbDB  = cfg.db + "_pgb"
		saleDB = cfg.db + "_sale"
		syncDB = cfg.db + "_sync"
	)
	if !cfg.keepDB {
		defer joinErr(&err, func() error {
			for _, db := range []string{mainDB, abDB, pgbDB, saleDB, syncDB, cur.template, base.template} {
				if err := dropBenchDB(context.Background(), cfg.adminURL, db); err != nil {
					return err
				}
			}
			step("dropped the databases %s and %s_*", cfg.db, cfg.db)
			return nil
		})
	}
	catalogPath, err := writeCatalog(binDir, time.Now())
	if err != nil {
		return err
	}
	step("%d events × %d dates × %d tickets, into both templates", nEvents, datesPerEvent, ticketsPerDate)
	for _, sd := range []*side{cur, base} {
		if err := prepareSide(ctx, cfg, sd, catalogPath); err != nil {
			return err
		}
	}
	dbURL, err := copyDB(ctx, cfg.adminURL, mainDB, cur.template)
	if err != nil {
		return err
	}
	res.pgVersion = pgVersion(ctx, dbURL)
	sd := cur.sd
	done()

	// 1. SQL statements per request, through the counting proxy: every
	// endpoint on the current binary, the hot-ticket create on both.
	done = res.begin("counting statements")
	hostport, err := pgHostPort(dbURL)
	if err != nil {
		return err
	}
	proxy, err := startPGCounter(hostport)
	if err != nil {
		return err
	}
	step("counting SQL statements per request (a server behind the wire-protocol proxy)")
	counting, err := startServer(ctx, bin, withHost(dbURL, proxy.Addr()), filepath.Join(binDir, "server-count.log"), sd.testKey)
	if err != nil {
		proxy.Close()
		return err
	}
	eps := endpoints(counting.base, sd)
	step("door: a test scanner key for %s and %d test tickets from free test carts", refDoorEvent, doorTickets)
	door, err := makeDoorCodes(ctx, bin, dbURL, counting.base, sd)
	if err != nil {
		_ = counting.stop()
		proxy.Close()
		return err
	}
	eps[epScan] = door.endpoint(counting.base)
	for _, name := range countOrder {
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
	if res.baseCount, err = countSide(ctx, cfg, base, abDB); err != nil {
		return err
	}
	step("  %-55s %s statements/request (baseline %s)", epCheckout, res.baseCount.summary, cfg.baseline)
	done()

	// 2. The A/B: the hot-ticket create on each binary in turn, each run on
	// a fresh copy of its seeded database and a fresh server, and pgbench's
	// minimum create in the same rounds.
	done = res.begin("A/B hot-ticket creates and pgbench")
	script, err := writePgbenchScript(binDir, cur)
	if err != nil {
		return err
	}
	for r := range cfg.rounds {
		for _, s := range []*side{cur, base} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			step("A/B round %d/%d, %s (%s): %d workers, %s (+%s warm-up), hot-ticket live creates", r+1, cfg.rounds, s.name, s.label,
				cfg.concurrency, cfg.duration, cfg.warmup)
			run, err := abRound(ctx, cfg, s, abDB)
			if err != nil {
				return err
			}
			res.ab[s.name] = append(res.ab[s.name], run)
			step("  %8.0f creates/s  p50 %-9s p99 %-9s errors %d  server CPU %s/create  PostgreSQL CPU %s/create; %s",
				run.s.rps, ms(run.s.p50), ms(run.s.p99), run.s.errors, ms(run.s.serverCPU), ms(run.s.pgCPU), run.stock)
		}
		for _, clients := range pgbenchClients(cfg) {
			step("A/B round %d/%d, pgbench: %d clients, one order INSERT + the hot row's conditional UPDATE, one commit", r+1, cfg.rounds, clients)
			pr, err := pgbenchRound(ctx, cfg, pgbench, script, clients, cur, pgbDB)
			if err != nil {
				return err
			}
			res.pgb = append(res.pgb, pr)
			step("  %8.0f tps  latency average %s  PostgreSQL CPU %s/transaction  failed %d; %s", pr.tps, ms(pr.latency), ms(pr.pgCPU), pr.failed, pr.stock)
		}
	}
	done()

	// 3. The other rows, on one server connected straight to PostgreSQL.
	done = res.begin("rows on one server")
	step("starting the server for the rows")
	srv, err := startServer(ctx, bin, dbURL, filepath.Join(binDir, "server.log"), sd.testKey, gcTraceEnv)
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
	bare, bareSrv, err := startBaseline(ctx, eps[epEvents], binDir)
	if err != nil {
		return err
	}
	stopBare := sync.OnceValue(bareSrv.stop)
	defer func() { _ = stopBare() }()
	eps[epBaseline] = bare
	res.bodySizes[epBaseline] = res.bodySizes[epEvents]

	pid := srv.cmd.Process.Pid
	measure := func(e endpoint, warm, measured func() stats) stats {
		if waited := max(settle(pid, settleLimit), settle(bareSrv.cmd.Process.Pid, settleLimit)); waited > time.Second {
			step("  waited %s for the server to go idle", waited.Round(100*time.Millisecond))
		}
		if e.name != "baseline" {
			return measureRun(pid, mainDB, warm, measured)
		}
		s := measureRun(bareSrv.cmd.Process.Pid, mainDB, warm, measured)
		s.pgCPU = 0 // the bare handler reads nothing; the server's idle polling is not its
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
	for r := range cfg.rounds {
		for _, name := range rowsOrder {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			e := eps[name]
			step("round %d/%d, closed loop, %d workers, %s (+%s warm-up): %s", r+1, cfg.rounds, cfg.concurrency, cfg.duration, cfg.warmup, name)
			s := measure(e, func() stats { return closedLoop(e, cfg.concurrency, 0, cfg.warmup) },
				func() stats { return closedLoop(e, cfg.concurrency, 0, cfg.duration) })
			res.closed[name] = append(res.closed[name], s)
			if err := alive(name); err != nil {
				return err
			}
			step("  %8.0f req/s  p50 %-9s p99 %-9s errors %d  server CPU %s/req  PostgreSQL CPU %s/req  VmHWM %s  other CPU %.0f%%",
				s.rps, ms(s.p50), ms(s.p99), s.errors, ms(s.serverCPU), ms(s.pgCPU), mb(s.hwm), 100*s.otherCPU)
		}
	}
	for r := range cfg.rounds {
		for _, name := range []string{epEvents, epTickets} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			e := eps[name]
			step("round %d/%d, open loop at %d req/s, %s (+%s warm-up): %s", r+1, cfg.rounds, targetCatalogRPS, cfg.duration, cfg.warmup, name)
			s := measure(e, func() stats { return openLoop(e, targetCatalogRPS, 512, 0, cfg.warmup) },
				func() stats { return openLoop(e, targetCatalogRPS, 512, 0, cfg.duration) })
			res.open[name] = append(res.open[name], s)
			if err := alive(name); err != nil {
				return err
			}
			step("  %8.0f req/s  p50 %-9s p99 %-9s errors %d  VmHWM %s", s.rps, ms(s.p50), ms(s.p99), s.errors, mb(s.hwm))
		}
	}
	done()

	// New-text GraphQL, run after run on the same server: flat or growing?
	done = res.begin("new-text GraphQL, ten runs")
	step("new-text GraphQL: %d consecutive runs of %s on the rows' server", driftRuns, cfg.duration)
	hwmBefore, err := srv.peakRSS()
	if err != nil {
		return err
	}
	res.drift = newTextDrift(cfg, pid, srv.logPath, mainDB, eps[epGraphQLN])
	if err := alive("the new-text runs"); err != nil {
		return err
	}
	done()

	// 4. The door: scans beside checkouts, on the same server.
	done = res.begin("door scans beside checkouts")
	scan := door.endpoint(srv.base)
	if _, err := checkOnce(scan); err != nil {
		return fmt.Errorf("check-in: %w", err)
	}
	res.door = doorResult{codes: len(door.codes), checkoutRate: doorCheckoutRate}
	for r := range cfg.rounds {
		for _, open := range []bool{false, true} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			how := fmt.Sprintf("closed loop, %d workers", cfg.concurrency)
			if open {
				how = fmt.Sprintf("open loop at %d scans/s", targetScanRate)
			}
			step("round %d/%d, door scans, %s, beside %d live checkouts/s over 1,000 events, %s (+%s warm-up)",
				r+1, cfg.rounds, how, res.door.checkoutRate, cfg.duration, cfg.warmup)
			d := doorRound(cfg, scan, eps[epSpread], open, res.door.checkoutRate)
			if open {
				res.door.open = append(res.door.open, d)
			} else {
				res.door.closed = append(res.door.closed, d)
			}
			if err := alive("the door's scans"); err != nil {
				return err
			}
			step("  %8.0f scans/s  p50 %-9s p99 %-9s errors %d;  checkouts beside: %.0f/s, p50 %s, errors %d",
				d.scans.rps, ms(d.scans.p50), ms(d.scans.p99), d.scans.errors, d.checkouts.rps, ms(d.checkouts.p50), d.checkouts.errors)
			if d.scans.errors > 0 {
				step("  first scan error: %.300s", d.scans.firstErr)
			}
		}
		o, err := offlineRound(srv.base, door, doorDate(sd))
		if err != nil {
			return fmt.Errorf("the offline door: %w", err)
		}
		res.door.offline = append(res.door.offline, o)
		step("  offline door: manifest of %d tickets in %s (%d pages); a sync after %d scans p50 %s p99 %s; a batch of %d scans %s",
			o.tickets, ms(o.download), o.pages, offlineSyncScans, ms(o.syncP50), ms(o.syncP99), batchSize, ms(o.batch))
	}
	done()

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
	// The new-text runs reset VmHWM: the run's peak is the larger of
	// before them, during them and since.
	res.peakRSS = max(res.peakRSS, hwmBefore, driftPeak(res.drift))
	step("stopping the rows' server with SIGTERM")
	res.stopErr = srv.stop()
	srv = nil
	if err := stopBare(); err != nil {
		return err
	}
	// The rows' database is done with. Dropped now, and the pages the
	// rows dirtied written out, the sale does not share PostgreSQL's
	// buffers and autovacuum with it: in a run that kept it, one minute of
	// the sale cost 4.39 ms of PostgreSQL CPU per create, where the sale
	// alone (go run . sale) held 0.6 ms in every minute.
	if !cfg.keepDB {
		if err := dropBenchDB(ctx, cfg.adminURL, mainDB); err != nil {
			return err
		}
	}
	if err := adminExec(ctx, cfg.adminURL, "CHECKPOINT"); err != nil {
		return err
	}

	// 5. The flash sale, on a fresh copy and server.
	done = res.begin("flash sale")
	step("flash sale: %s of hot-ticket live creates, %d workers, on a fresh database and server", cfg.saleDuration, cfg.concurrency)
	if res.sale, err = flashSale(ctx, cfg, cur, saleDB); err != nil {
		return err
	}
	step("  %s", res.sale.stock)
	done()

	// 6. Order sync at scale.
	done = res.begin("order sync")
	if res.sync, err = orderSync(ctx, cfg, cur, syncDB); err != nil {
		return err
	}
	done()

	res.loadAfter = loadAvg()
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

	// 7. A catalog of a million events (catalogmode.go), its own database
	// and server.
	if os.Getenv("BENCH_CATALOG") != "0" {
		step("a catalog of a million events (go run . catalog alone; BENCH_CATALOG=0 leaves it out)")
		return catalogMain(ctx)
	}
	return nil
}

// orderSync seeds cfg.orders orders into a fresh copy of sd's template,
// starts a server on it and follows chains of pages of the list and the
// feed, round after round.
func orderSync(ctx context.Context, cfg config, sd *side, db string) (syncResult, error) {
	res := syncResult{orders: cfg.orders, chains: map[string][]syncChain{}}
	dbURL, err := copyDB(ctx, cfg.adminURL, db, sd.template)
	if err != nil {
		return res, err
	}
	step("order sync: seeding %d test orders for the bench app (INSERT … SELECT generate_series)", cfg.orders)
	t0 := time.Now()
	if err := seedOrders(ctx, dbURL, sd.sd, cfg.orders); err != nil {
		return res, err
	}
	res.seeded = time.Since(t0)
	step("  seeded in %s", res.seeded.Round(time.Second))
	logPath := filepath.Join(cfg.dir, ".bin", "server-sync.log")
	srv, err := startServer(ctx, sd.bin, dbURL, logPath, sd.sd.testKey)
	if err != nil {
		return res, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.stop()
		}
	}()
	for r := range cfg.rounds {
		for _, route := range syncOrder {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			c, missing, err := syncRound(srv.base, sd.sd.testKey, route, logPath, r)
			if err != nil {
				return res, err
			}
			res.missing += missing
			res.chains[route] = append(res.chains[route], c)
			s := slices.Clone(c.server)
			slices.Sort(s)
			step("  round %d/%d, %s: server time median %s, p95 %s over %d pages", r+1, cfg.rounds, route,
				ms(percentile(s, 0.5)), ms(percentile(s, 0.95)), len(s))
		}
	}
	res.ran = true
	stopped = true
	if err := srv.stop(); err != nil {
		step("warning: %v", err)
	}
	return res, dropBenchDB(ctx, cfg.adminURL, db)
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
	s.pgBackends = pg.Processes()
	n := time.Duration(max(s.requests, 1))
	s.serverCPU = (srv1 - srv0) / n
	s.pgCPU = pgUsed / n
	ours := (srv1 - srv0) + pgUsed + (me1 - me0)
	s.otherCPU = max(float64(all1-all0-ours), 0) / float64(wall*time.Duration(runtime.NumCPU()))
	s.hwm, _ = peakRSS(pid)
	return s
}

// ms writes d in milliseconds: two decimals, three below a millisecond
// (a cached read's CPU is a few hundredths).
func ms(d time.Duration) string {
	prec := 2
	if d < time.Millisecond && d > -time.Millisecond {
		prec = 3
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', prec, 64) + " ms"
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
// like from a bare net/http handler in a process of its own (this
// program, run as `bare`), so that its CPU per request is measured as the
// server's is. binDir holds its bytes and its log.
func startBaseline(ctx context.Context, like endpoint, binDir string) (endpoint, *server, error) {
	code, body, h, err := do(like, 1)
	if err != nil || code != http.StatusOK {
		return endpoint{}, nil, fmt.Errorf("fetching the baseline bytes: %d %v", code, err)
	}
	file := filepath.Join(binDir, "bare-body")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		return endpoint{}, nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return endpoint{}, nil, err
	}
	addr, err := freePort()
	if err != nil {
		return endpoint{}, nil, err
	}
	cmd := exec.Command(self, "bare")
	cmd.Env = append(os.Environ(), "BENCH_BARE_ADDR="+addr, "BENCH_BARE_FILE="+file, "BENCH_BARE_TYPE="+h.Get("Content-Type"))
	url := "http://" + addr + "/api/v1/events?per_page=100"
	hdr := like.targetHeader()
	e := endpoint{name: "baseline", method: http.MethodGet, want: http.StatusOK, target: func(_ uint64, t *vegeta.Target) {
		t.URL, t.Header = url, hdr
	}}
	srv, err := startProcess(ctx, "bare net/http", cmd, "http://"+addr, filepath.Join(binDir, "bare.log"), 10*time.Second, func() bool {
		code, err := checkOnce(e)
		return err == nil && code > 0
	})
	return e, srv, err
}

// bareMain is the bare handler's process: the bytes of BENCH_BARE_FILE
// with Content-Type BENCH_BARE_TYPE, on BENCH_BARE_ADDR, until SIGTERM.
func bareMain(ctx context.Context) error {
	body, err := os.ReadFile(os.Getenv("BENCH_BARE_FILE"))
	if err != nil {
		return err
	}
	ct, length := os.Getenv("BENCH_BARE_TYPE"), strconv.Itoa(len(body))
	srv := &http.Server{Addr: os.Getenv("BENCH_BARE_ADDR"), ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Content-Length", length)
			_, _ = w.Write(body)
		})}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
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
