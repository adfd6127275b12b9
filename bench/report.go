package main

// report.go: the Markdown results table.

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

func passFail(ok bool) string {
	if ok {
		return "**pass**"
	}
	return "**FAIL**"
}

func mb(b int64) string {
	return fmt.Sprintf("%.1f MB (%.1f MiB)", float64(b)/1e6, float64(b)/(1<<20))
}

func errCell(s stats) string {
	if s.errors == 0 {
		return "0"
	}
	var parts []string
	for k, v := range s.codes {
		parts = append(parts, fmt.Sprintf("%d×%s", v, k))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func (r *result) markdown() string {
	var b strings.Builder
	c := r.cfg
	fmt.Fprintf(&b, "# Boxoffice benchmark results\n\n")
	if c.short() {
		fmt.Fprintf(&b, "> **Provisional: a short run** (BENCH_DURATION=%s, BENCH_ROUNDS=%d, BENCH_SALE_DURATION=%s, BENCH_ORDERS=%d; "+
			"the defaults are 10s, 3, 5m and 1,000,000). It shows that every row works; its figures are not the benchmark's.\n\n",
			c.duration, c.rounds, c.saleDuration, c.orders)
	}
	fmt.Fprintf(&b, "- date: %s\n", r.started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "- machine: %d CPUs (%s), %s/%s\n", runtime.NumCPU(), r.cpuModel, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- Go: %s; PostgreSQL: %s (on the same machine)\n", runtime.Version(), r.pgVersion)
	fmt.Fprintf(&b, "- data: %d published upcoming events × %d dates × %d tickets (%d tickets), %d venues, seeded once per side "+
		"into a template database that every A/B run, the flash sale and the order sync copy afresh\n",
		nEvents, datesPerEvent, ticketsPerDate, nEvents*datesPerEvent*ticketsPerDate, nVenues)
	fmt.Fprintf(&b, "- load: vegeta v12.12.0 as a library, in this process on the same machine; closed loop of %d workers, "+
		"%s warm-up then %s measured per run; every row runs %d times, its runs interleaved with the other rows' (A/B/A/B); "+
		"figures are the median with the spread (min–max) in brackets; percentiles are exact over every recorded latency of a run\n",
		c.concurrency, c.warmup, c.duration, c.rounds)
	fmt.Fprintf(&b, "- server: the real `boxoffice serve` binary (CGO_ENABLED=0), rate limits at 100,000,000/window, no Redis, "+
		"PAYMENT_PROVIDER=dev (a real provider adds an outside HTTP call per live paid checkout); tables ANALYZEd after the import\n")
	fmt.Fprintf(&b, "- the load generator, the server and PostgreSQL share the machine; anything else running on it lowers every figure. "+
		"\"other CPU\" is the share of the machine's CPU used during a run by processes other than the server, its PostgreSQL "+
		"backends and the bench process (PostgreSQL's background workers count as other); CPU per request (from /proc) is the "+
		"steadier figure to compare runs by. PostgreSQL CPU counts every backend of the run's database, those that exit during "+
		"the run included (sampled every %s)\n", pollEvery)
	fmt.Fprintf(&b, "- load average (1, 5, 15 min) before the run: %s; after: %s\n\n", r.loadBefore, r.loadAfter)
	b.WriteString("| phase | load average before | after |\n|---|---|---|\n")
	for _, p := range r.phases {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", p.name, p.before, p.after)
	}

	r.writeAB(&b)
	r.writeRows(&b)
	writeDrift(&b, r.cfg, r.drift)
	r.writeDoor(&b)
	r.writeSale(&b)
	r.writeSync(&b)
	r.writeTargets(&b)
	b.WriteString("\n## How SQL statements per request were measured\n\n")
	b.WriteString("The server has no statement counter, and `pg_stat_statements` needs `shared_preload_libraries` and a " +
		"PostgreSQL restart, so the benchmark runs a second `boxoffice serve` (same binary, same database) whose `DATABASE_URL` " +
		"points at a PostgreSQL wire-protocol proxy in this process (bench/pgcount.go). The proxy reads every frontend message: " +
		"each simple `Query` and each extended-protocol `Execute` is one statement (BEGIN/COMMIT included), each `Parse` of a named statement a prepare " +
		"round trip (an unnamed one goes with its `Execute` in one round trip). Statement texts (from `Query`, or `Parse`→`Bind`→`Execute` per connection) separate the server's own " +
		"statements from River's job polling and pool pings, which are excluded. Each endpoint gets 5 warm-up and 50 sequential " +
		"requests, each sent twice in a row; the figure is the most common count of the first sending (a periodic job's statement " +
		"landing in one request's window shows up only as a range), and \"repeated\" that of the second, when the catalog cache " +
		"(and for GraphQL the response cache) holds what the first read. The first sending of a tickets request is the first " +
		"read of that date. The load runs use a different server instance connected straight to PostgreSQL.\n\n")
	counts := []struct {
		name string
		cr   countResult
	}{}
	for _, name := range countOrder {
		if cr, ok := r.statements[name]; ok {
			counts = append(counts, struct {
				name string
				cr   countResult
			}{name, cr})
		}
	}
	counts = append(counts, struct {
		name string
		cr   countResult
	}{epCheckout + ", baseline " + c.baseline, r.baseCount})
	for _, x := range counts {
		name, cr := x.name, x.cr
		fmt.Fprintf(&b, "**%s**: %d statements, %d prepares (Parse) per request; over %d requests %d–%d statements; repeated at once: %d statements\n\n",
			name, cr.summary.exec, cr.summary.parse, cr.requests, cr.min, cr.max, cr.repeated.exec)
		for i, t := range cr.summary.texts {
			if len(t) > 160 {
				t = t[:160] + "…"
			}
			fmt.Fprintf(&b, "%d. `%s`\n", i+1, strings.ReplaceAll(t, "`", "'"))
		}
		b.WriteString("\n")
	}

	if len(r.profiles) > 0 {
		b.WriteString("## Server profiles (BENCH_PERF=1: perf record -F 499 --call-graph fp, 5 s under each closed-loop load)\n\n")
		for _, p := range r.profiles {
			fmt.Fprintf(&b, "**%s** (`%s`)\n\n```\n%s\n```\n\n", p.name, p.file, p.top)
		}
	}
	if r.goBench != "" {
		b.WriteString("## Hot paths (`go test -bench . -benchmem` in bench/)\n\n```\n")
		b.WriteString(r.goBench)
		b.WriteString("\n```\n")
	}
	return b.String()
}

// esc makes a table cell of s.
func esc(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// stmtCell is a countResult as a table cell.
func stmtCell(cr countResult, ok bool) string {
	if !ok || cr.requests == 0 {
		return "—"
	}
	sql := fmt.Sprintf("%d", cr.summary.exec)
	if cr.min != cr.max {
		sql += fmt.Sprintf(" (range %d–%d)", cr.min, cr.max)
	}
	if cr.repeated.exec != cr.summary.exec {
		sql += fmt.Sprintf("; repeated: %d", cr.repeated.exec)
	}
	return sql
}

func seriesErrCell(s series) string {
	n, codes := s.errors()
	if n == 0 {
		return "0"
	}
	return errCell(stats{errors: n, codes: codes})
}

// writeAB writes the interleaved A/B of the hot-ticket create and the
// physical limit.
func (r *result) writeAB(b *strings.Builder) {
	c := r.cfg
	cur, base := runsSeries(r.ab["current"]), runsSeries(r.ab["baseline"])
	fmt.Fprintf(b, "\n## Hot-ticket live checkout create: current tree against %s (interleaved A/B)\n\n", c.baseline)
	fmt.Fprintf(b, "`%s` for one ticket (paid, unlimited), %d workers, on each binary in turn (A/B/A/B…, %d runs each): "+
		"every run on a fresh copy of its side's seeded template database and a fresh server, so the dead tuples of one run "+
		"never weigh on the next; %s warm-up, %s measured. Baseline: commit %s (`%s`), built from `git archive` into "+
		"`bench/.baseline/` and seeded by its own binary.\n\n", epCheckout, c.concurrency, c.rounds, c.warmup, c.duration,
		c.baseline, r.baselineHash)
	b.WriteString("| side | creates/s | p50 | p99 | server CPU/create | PostgreSQL CPU/create | SQL statements/create | errors | stock after every run |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, x := range []struct {
		name string
		s    series
		runs []abRun
		cr   countResult
		ok   bool
	}{{"current tree", cur, r.ab["current"], r.statements[epCheckout], true}, {c.baseline, base, r.ab["baseline"], r.baseCount, true}} {
		ok, last := allStockOK(x.runs)
		stock := passFail(ok) + ": " + last
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", x.name, x.s.rps().format(fmtRate), x.s.p50().format(fmtMS),
			x.s.p99().format(fmtMS), x.s.srvCPU().format(fmtMS), x.s.pgCPU().format(fmtMS), stmtCell(x.cr, x.ok), seriesErrCell(x.s), esc(stock))
	}
	fmt.Fprintf(b, "\nRatio current/baseline (medians): **%.2f×** creates/s (target ≥ %.0f×); server CPU per create %.2f×, "+
		"PostgreSQL CPU per create %.2f×.\n\n", abRatio(r.ab["current"], r.ab["baseline"]), targetABRatio,
		ratio(cur.srvCPU().med, base.srvCPU().med), ratio(cur.pgCPU().med, base.pgCPU().med))
	b.WriteString("Runs in the order they ran: ")
	var order []string
	counts := pgbenchClients(c)
	for i := range max(len(cur), len(base)) {
		if i < len(cur) {
			order = append(order, fmt.Sprintf("current %.0f creates/s", cur[i].rps))
		}
		if i < len(base) {
			order = append(order, fmt.Sprintf("baseline %.0f", base[i].rps))
		}
		for j := range counts {
			if k := i*len(counts) + j; k < len(r.pgb) {
				order = append(order, fmt.Sprintf("pgbench -c %d %.0f tps", r.pgb[k].clients, r.pgb[k].tps))
			}
		}
	}
	b.WriteString(strings.Join(order, ", ") + ".\n")
	fmt.Fprintf(b, "\nPostgreSQL backends of the run's database seen during a measured run (the server's pool, River's included): "+
		"current %s, baseline %s.\n", cur.of(func(s stats) float64 { return float64(s.pgBackends) }).format(fmtRate),
		base.of(func(s stats) float64 { return float64(s.pgBackends) }).format(fmtRate))

	fmt.Fprintf(b, "\n### The physical limit: pgbench\n\n")
	fmt.Fprintf(b, "pgbench (`-M prepared`, %s warm-up, %s measured, in the same rounds as the A/B, each run on a fresh copy of "+
		"the current side's template) runs the least a create must write, in the create's order: `BEGIN`, one `INSERT` of an "+
		"order row (the columns a live paid create fills), the hot ticket's conditional `UPDATE tickets SET held = held + 1 … "+
		"WHERE id = … AND (quantity IS NULL OR quantity - sold - held >= 1)` (the stock rule of `store.HoldStock`), `COMMIT`. "+
		"The tables' triggers (the change log, the live stock notice) run as for the service. It runs with %d clients, the HTTP "+
		"load's concurrency, and with %d, the connections the server's pool keeps: transactions queued on one row's lock slow "+
		"each other down, so fewer can be faster, and the server never has more than its pool in PostgreSQL at once. The limit "+
		"is the better of the two.\n\n", c.warmup, c.duration, c.concurrency, serverPoolConns)
	b.WriteString("| pgbench, the minimum create | transactions/s | latency average | PostgreSQL CPU/transaction | failed | stock after every run |\n|---|---:|---:|---:|---:|---|\n")
	for _, n := range counts {
		runs := pgbenchOf(r.pgb, n)
		var failed int64
		stockOK, stockLast := len(runs) > 0, ""
		for _, p := range runs {
			failed += p.failed
			stockOK = stockOK && p.stock.ok()
			stockLast = p.stock.String()
		}
		fmt.Fprintf(b, "| %d clients | %s | %s | %s | %d | %s |\n", n,
			pgbenchSpread(runs, func(p pgbenchRun) float64 { return p.tps }).format(fmtRate),
			pgbenchSpread(runs, func(p pgbenchRun) float64 { return msf(p.latency) }).format(fmtMS),
			pgbenchSpread(runs, func(p pgbenchRun) float64 { return msf(p.pgCPU) }).format(fmtMS), failed, esc(passFail(stockOK)+": "+stockLast))
	}
	at, limit := pgbenchLimit(r.pgb, counts)
	fmt.Fprintf(b, "\nThe limit: %.0f transactions/s (%d clients). The current tree's creates/s are **%.0f%%** of it (medians; target ≥ 50%%); "+
		"the baseline's %.0f%%.\n", limit, at, 100*ratio(cur.rps().med, limit), 100*ratio(base.rps().med, limit))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// writeRows writes the rows run on one server.
func (r *result) writeRows(b *strings.Builder) {
	c := r.cfg
	fmt.Fprintf(b, "\n## Throughput and latency (closed loop, %d concurrent workers, one server, %d rounds)\n\n", c.concurrency, c.rounds)
	b.WriteString("Response-cache rows send the same GraphQL text every request, so the response cache answers them once it has " +
		"seen the text (and, for the small query, the id): they measure that cache, not GraphQL execution. The new-text row " +
		"measures execution.\n\n")
	b.WriteString("| endpoint | requests/s | p50 | p99 | vs bare net/http | server CPU/req | PostgreSQL CPU/req | SQL statements/req | response bytes | errors | other CPU |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	base := r.closed[epBaseline].rps().med
	for _, name := range rowsOrder {
		s, ok := r.closed[name]
		if !ok {
			continue
		}
		rps := s.rps().med
		vs := "1 (baseline)"
		if name != epBaseline && base > 0 && rps > 0 {
			vs = fmt.Sprintf("%.3f× (1/%.0f)", rps/base, base/rps)
		}
		srvCPU, pgCPU := s.srvCPU().format(fmtMS), "—"
		if name != epBaseline {
			pgCPU = s.pgCPU().format(fmtMS)
		}
		cr, counted := r.statements[name]
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s |\n", esc(name), s.rps().format(fmtRate),
			s.p50().format(fmtMS), s.p99().format(fmtMS), vs, srvCPU, pgCPU, stmtCell(cr, counted), r.bodySizes[name],
			seriesErrCell(s), s.other().format(fmtPct))
	}

	fmt.Fprintf(b, "\n### Catalog reads at the target rate (open loop, %d requests/s offered, %d rounds)\n\n", targetCatalogRPS, c.rounds)
	b.WriteString("A constant arrival rate, whatever the latency (up to 512 in flight), so p99 includes any queueing at that rate.\n\n")
	b.WriteString("| endpoint | achieved/s | p50 | p99 | max | errors | other CPU |\n|---|---:|---:|---:|---:|---|---:|\n")
	for _, name := range []string{epEvents, epTickets} {
		if s, ok := r.open[name]; ok {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", name, s.rps().format(fmtRate), s.p50().format(fmtMS),
				s.p99().format(fmtMS), s.max().format(fmtMS), seriesErrCell(s), s.other().format(fmtPct))
		}
	}
}

// writeDoor writes the door's rows.
func (r *result) writeDoor(b *strings.Builder) {
	c, d := r.cfg, r.door
	fmt.Fprintf(b, "\n## Door scans beside checkouts (%d rounds)\n\n", c.rounds)
	fmt.Fprintf(b, "`POST /api/v1/check-ins` with a test scanner key of %s over %d test tickets of its first date (free test carts of %d, issued at once; issued_tickets never ANALYZEd since, so every scan must reach its ticket by its code whatever the planner knows), "+
		"each scan with its own `Idempotency-Key`, as the door page sends: scan n reads code n mod %d (the codes interleaved "+
		"across the carts, so scans in a row are of different orders), as an entry on even passes and an exit on odd ones, so every scan is admitted (an answer without `\"result\":\"admitted\"` counts as an error). "+
		"Meanwhile live checkouts over the 1,000 events arrive at %d a second (open loop: a busy on-sale) on the same server. Scans run closed loop "+
		"(%d workers: the door's capacity) and open loop at %d scans/s (latency at the target rate).\n\n",
		refDoorEvent, d.codes, doorCart, max(d.codes, 1), d.checkoutRate, c.concurrency, targetScanRate)
	b.WriteString("| scans | scans/s | p50 | p99 | errors | checkouts beside: creates/s | their p50 | their errors |\n|---|---:|---:|---:|---|---:|---:|---|\n")
	for _, x := range []struct {
		name string
		runs []doorRun
	}{{fmt.Sprintf("closed loop, %d workers", c.concurrency), d.closed}, {fmt.Sprintf("open loop at %d/s", targetScanRate), d.open}} {
		s, co := doorSeries(x.runs, true), doorSeries(x.runs, false)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", x.name, s.rps().format(fmtRate), s.p50().format(fmtMS),
			s.p99().format(fmtMS), seriesErrCell(s), co.rps().format(fmtRate), co.p50().format(fmtMS), seriesErrCell(co))
	}
	cr, ok := r.statements[epScan]
	fmt.Fprintf(b, "\nSQL statements per scan (an admission, counted as for the other rows; River's work for the "+
		"`ticket.checked_in` delivery it enqueues is not counted): %s.\n", stmtCell(cr, ok))
}

// writeSale writes the flash sale.
func (r *result) writeSale(b *strings.Builder) {
	c, s := r.cfg, r.sale
	fmt.Fprintf(b, "\n## Flash sale: %s of hot-ticket live creates\n\n", c.saleDuration)
	fmt.Fprintf(b, "`%s`, %d closed-loop workers, on a fresh copy of the current side's template and a fresh server, measured in %d "+
		"windows of %s back to back (no warm-up: the sale starts cold, as a real one does). Does PostgreSQL's CPU per create grow "+
		"as dead tuples pile up?\n\n", epCheckout, c.concurrency, saleWindows, s.window)
	b.WriteString("| window | creates/s | p50 | p99 | server CPU/create | PostgreSQL CPU/create | errors | other CPU | PostgreSQL pages |\n|---|---:|---:|---:|---:|---:|---|---:|---|\n")
	for i, w := range s.windows {
		io := "—"
		if i < len(s.io) {
			io = s.io[i].String()
		}
		fmt.Fprintf(b, "| %d (%s–%s) | %.0f | %s | %s | %s | %s | %s | %.0f%% | %s |\n", i+1, time.Duration(i)*s.window, time.Duration(i+1)*s.window,
			w.rps, ms(w.p50), ms(w.p99), ms(w.serverCPU), ms(w.pgCPU), errCell(w), 100*w.otherCPU, io)
	}
	b.WriteString("\nPostgreSQL pages: what backends had to write out themselves to find a free buffer (`pg_stat_bgwriter.buffers_backend`), " +
		"what the background writer wrote, and the pages of the sale's database not found in shared_buffers (`blks_read`), in the window.\n")
	fmt.Fprintf(b, "\nPostgreSQL CPU per create over the sale, the least-squares line through the windows at the last window over the first: "+
		"**%.2f×** (must not grow: ≤ %.1f×); the last window over the first: %.2f×. Stock at the end: %s.\n\n",
		s.growth(), saleGrowth, s.endsRatio(), s.stock)
	b.WriteString("At the end (`pg_stat_user_tables`, after the server stopped; the counters began when the sale's database was " +
		"copied, so live tuples count only rows written since, and tickets' rows were all written before):\n\n")
	b.WriteString("| table | live tuples | dead tuples | updates | of them HOT | autovacuums | last autovacuum | autoanalyzes | options |\n|---|---:|---:|---:|---:|---:|---|---:|---|\n")
	for _, t := range s.tables {
		hot := "—"
		if t.upd > 0 {
			hot = fmt.Sprintf("%d (%.0f%%)", t.hotUpd, 100*float64(t.hotUpd)/float64(t.upd))
		}
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s | %d | %s | %d | %s |\n", t.name, t.live, t.dead, t.upd, hot, t.autovacuums,
			t.lastAutovacuum, t.autoanalyzes, t.fillfactorOpt)
	}
	if len(s.sizes) > 0 {
		orders := s.stock.orders
		b.WriteString("\nThe largest tables and indexes at the end, and their bytes per order of the sale:\n\n| relation | kind | size | per order |\n|---|---|---:|---:|\n")
		for _, r := range s.sizes {
			per := "—"
			if orders > 0 {
				per = fmt.Sprintf("%.0f B", float64(r.bytes)/float64(orders))
			}
			fmt.Fprintf(b, "| %s | %s | %.1f MB | %s |\n", r.name, r.kind, float64(r.bytes)/(1<<20), per)
		}
	}
}

// writeSync writes the order sync rows.
func (r *result) writeSync(b *strings.Builder) {
	c, s := r.cfg, r.sync
	fmt.Fprintf(b, "\n## Order sync at scale: %d orders for one app (%d rounds)\n\n", s.orders, c.rounds)
	fmt.Fprintf(b, "The bench app gets %d test orders (five statuses, three dates of two events, one item each) by `INSERT … SELECT "+
		"generate_series` in batches of 100,000, the change log's trigger running as for any insert (seeded in %s), on a fresh "+
		"copy of the current side's template; then, one request at a time, a chain of %d pages of 100 of each route, the first %d "+
		"warming the caches. Server time is the `latency_ms` the server logs for the request (found by its `X-Request-Id`): from "+
		"the request to the last byte written, without the network.\n\n", s.orders, s.seeded.Round(time.Second), syncPages, syncWarm)
	b.WriteString("| page of 100 | server time p50 | p95 | rounds' p50 (min–max) | client p50 | pages |\n|---|---:|---:|---:|---:|---:|\n")
	for _, route := range syncOrder {
		p50, p95, client, rounds := s.figures(route)
		n := 0
		for _, ch := range s.chains[route] {
			n += len(ch.server)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %d |\n", route, ms(p50), ms(p95), rounds.format(fmtMS), ms(client), n)
	}
	if s.missing > 0 {
		fmt.Fprintf(b, "\n%d pages' log lines were not found; they are left out.\n", s.missing)
	}
}

// writeTargets writes the targets table.
func (r *result) writeTargets(b *strings.Builder) {
	b.WriteString("\n## Targets\n\n| target | measured (median of the runs) | result |\n|---|---|---|\n")
	row := func(target, measured string, ok bool) {
		fmt.Fprintf(b, "| %s | %s | %s |\n", target, measured, passFail(ok))
	}
	noErr := func(s series) bool { n, _ := s.errors(); return n == 0 && len(s) > 0 }
	for _, name := range []string{epEvents, epTickets} {
		cl, op := r.closed[name], r.open[name]
		row(fmt.Sprintf("%s ≥ %d requests/s", name, targetCatalogRPS), cl.rps().format(fmtRate)+" requests/s (closed loop)",
			cl.rps().med >= targetCatalogRPS && noErr(cl))
		row(fmt.Sprintf("%s p99 ≤ %s at %d requests/s", name, ms(targetCatalogP99), targetCatalogRPS),
			fmt.Sprintf("p99 %s at %s requests/s achieved", op.p99().format(fmtMS), op.rps().format(fmtRate)),
			msf(targetCatalogP99) >= op.p99().med && noErr(op) && op.rps().med >= 0.98*targetCatalogRPS)
	}
	ev, bare := r.closed[epEvents], r.closed[epBaseline]
	vsBare := ratio(ev.srvCPU().med, bare.srvCPU().med)
	row(fmt.Sprintf("%s (cached bytes): server CPU ≤ %.0f× the bare handler's", epEvents, targetCachedVsBare),
		fmt.Sprintf("%.2f× (%s against %s per request)", vsBare, ev.srvCPU().format(fmtMS), bare.srvCPU().format(fmtMS)),
		bare.srvCPU().med > 0 && vsBare <= targetCachedVsBare && noErr(ev))
	if cr, ok := r.statements[epEvents]; ok {
		row(fmt.Sprintf("%s from the cache: no SQL statement", epEvents),
			fmt.Sprintf("%d statements, repeated at once (first read of a page: %d)", cr.repeated.exec, cr.summary.exec), cr.repeated.exec == 0)
	}
	g, gn := r.closed[epGraphQL], r.closed[epGraphQLN]
	row(fmt.Sprintf("nested GraphQL (50 events), response-cache row ≥ %d requests/s", targetGraphQLRPS), g.rps().format(fmtRate)+" requests/s",
		g.rps().med >= targetGraphQLRPS && noErr(g))
	row(fmt.Sprintf("the same, a new query text each request ≥ %d requests/s", targetGraphQLNewRPS), gn.rps().format(fmtRate)+" requests/s",
		gn.rps().med >= targetGraphQLNewRPS && noErr(gn))
	row(fmt.Sprintf("the same, server CPU per request ≤ %s", ms(targetGraphQLNewCPU)), gn.srvCPU().format(fmtMS),
		gn.srvCPU().med > 0 && gn.srvCPU().med <= msf(targetGraphQLNewCPU))

	row(fmt.Sprintf("the same over %d consecutive runs of one server: CPU per request within %.0f%% of the first run's", driftRuns, 100*(driftGrowth-1)),
		fmt.Sprintf("largest run %.2f× the first", driftGrowthOf(r.drift)),
		len(r.drift) == driftRuns && driftGrowthOf(r.drift) <= driftGrowth && driftErrors(r.drift) == 0)
	row("the same runs: peak RSS ≤ 150 MB in every run", mb(driftPeak(r.drift)), len(r.drift) == driftRuns && driftPeak(r.drift) <= targetPeakRSS)

	cur, base := runsSeries(r.ab["current"]), runsSeries(r.ab["baseline"])
	row(fmt.Sprintf("hot-ticket live creates ≥ %d/s", targetCheckoutRPS), cur.rps().format(fmtRate)+" creates/s", cur.rps().med >= targetCheckoutRPS && noErr(cur))
	row(fmt.Sprintf("hot-ticket live creates ≥ %.0f× %s's, same run", targetABRatio, r.cfg.baseline),
		fmt.Sprintf("%.2f× (%.0f against %.0f creates/s)", abRatio(r.ab["current"], r.ab["baseline"]), cur.rps().med, base.rps().med),
		abRatio(r.ab["current"], r.ab["baseline"]) >= targetABRatio && noErr(cur))
	cr := r.statements[epCheckout]
	row(fmt.Sprintf("a create is ≤ %d SQL statements", targetCreateStatements), fmt.Sprintf("%d (baseline %d)", cr.summary.exec, r.baseCount.summary.exec),
		cr.requests > 0 && cr.summary.exec <= targetCreateStatements)
	row(fmt.Sprintf("PostgreSQL CPU per create ≤ %s", ms(targetSalePGCPU)), cur.pgCPU().format(fmtMS), cur.pgCPU().med > 0 && cur.pgCPU().med <= msf(targetSalePGCPU))
	at, limit := pgbenchLimit(r.pgb, pgbenchClients(r.cfg))
	frac := ratio(cur.rps().med, limit)
	row("hot-ticket creates ≥ 50% of pgbench's minimum create (the physical limit)",
		fmt.Sprintf("%.0f%% (%.0f of %.0f/s, pgbench with %d clients)", 100*frac, cur.rps().med, limit, at), frac >= 0.5)
	okCur, lastCur := allStockOK(r.ab["current"])
	okBase, _ := allStockOK(r.ab["baseline"])
	row("zero oversell, exact sold + held after every A/B run (both sides)", esc(lastCur), okCur && okBase)
	row(fmt.Sprintf("zero oversell (200 concurrent live checkouts, %d left)", oversellStock), r.oversell.String(), r.oversell.ok)

	s := r.sale
	row(fmt.Sprintf("flash sale (%s): PostgreSQL CPU per create ≤ %s in every window", r.cfg.saleDuration, ms(targetSalePGCPU)),
		"largest window "+ms(s.maxPGCPU()), s.ran && s.maxPGCPU() > 0 && s.maxPGCPU() <= targetSalePGCPU)
	row(fmt.Sprintf("flash sale: PostgreSQL CPU per create not growing (the line through the windows ≤ %.1f× from first to last)", saleGrowth),
		fmt.Sprintf("%.2f× (last window over first: %.2f×)", s.growth(), s.endsRatio()), s.ran && s.growth() > 0 && s.growth() <= saleGrowth)
	row("flash sale: zero oversell, exact sold + held", esc(s.stock.String()), s.ran && s.stock.ok())

	ds, do := doorSeries(r.door.closed, true), doorSeries(r.door.open, true)
	row(fmt.Sprintf("door scans ≥ %d/s beside checkouts", targetScanRate), ds.rps().format(fmtRate)+" scans/s (closed loop)",
		ds.rps().med >= targetScanRate && noErr(ds))
	row(fmt.Sprintf("door scan p50 < %s at %d/s beside checkouts", ms(targetScanP50), targetScanRate),
		fmt.Sprintf("p50 %s, p99 %s", do.p50().format(fmtMS), do.p99().format(fmtMS)),
		len(do) > 0 && do.p50().med < msf(targetScanP50) && noErr(do) && do.rps().med >= 0.98*targetScanRate)
	off := r.door.offline
	median := func(f func(offlineRun) time.Duration) time.Duration {
		if len(off) == 0 {
			return 0
		}
		v := make([]time.Duration, len(off))
		for i, o := range off {
			v[i] = f(o)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	dl, syn, bat := median(func(o offlineRun) time.Duration { return o.download }),
		median(func(o offlineRun) time.Duration { return o.syncP50 }), median(func(o offlineRun) time.Duration { return o.batch })
	row(fmt.Sprintf("offline door: the manifest of a date of %d tickets downloads in < %s", doorTickets, targetManifest), ms(dl),
		len(off) > 0 && dl < targetManifest)
	row(fmt.Sprintf("offline door: a sync with since after %d scans < %s (p50)", offlineSyncScans, ms(targetSync)), ms(syn),
		len(off) > 0 && syn < targetSync)
	row(fmt.Sprintf("offline door: a batch of %d scans < %s", batchSize, targetBatch), ms(bat), len(off) > 0 && bat < targetBatch)
	for _, route := range syncOrder {
		p50, _, _, _ := r.sync.figures(route)
		row(fmt.Sprintf("%s, %d orders: server time p50 < %s", route, r.sync.orders, ms(targetSyncP50)), ms(p50),
			r.sync.ran && p50 > 0 && p50 < targetSyncP50)
	}
	row("peak RSS ≤ 150 MB", mb(r.peakRSS), r.peakRSS <= targetPeakRSS)

	b.WriteString("\nServer VmHWM after each row's runs: ")
	var hwm []string
	for _, name := range rowsOrder[1:] {
		hwm = append(hwm, fmt.Sprintf("%s %s", name, mb(r.closed[name].hwm())))
	}
	for _, name := range []string{epEvents, epTickets} {
		hwm = append(hwm, fmt.Sprintf("%s at %d/s %s", name, targetCatalogRPS, mb(r.open[name].hwm())))
	}
	b.WriteString(strings.Join(hwm, "; ") + ".\n")
	stopped := "exited 0 after SIGTERM"
	if r.stopErr != nil {
		stopped = r.stopErr.Error()
	}
	fmt.Fprintf(b, "\nPeak RSS is VmHWM of the rows' server process (/proc/PID/status) after every run on it, the door's included; the server %s.\n", stopped)
}
