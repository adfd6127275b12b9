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
	fmt.Fprintf(&b, "- date: %s\n", r.started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "- machine: %d CPUs (%s), %s/%s\n", runtime.NumCPU(), r.cpuModel, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- Go: %s; PostgreSQL: %s (on the same machine)\n", runtime.Version(), r.pgVersion)
	fmt.Fprintf(&b, "- data: %d published upcoming events × %d dates × %d tickets (%d tickets), %d venues\n",
		nEvents, datesPerEvent, ticketsPerDate, nEvents*datesPerEvent*ticketsPerDate, nVenues)
	fmt.Fprintf(&b, "- load: vegeta v12.12.0 as a library, in this process on the same machine; closed loop of %d workers, "+
		"%s warm-up then %s measured per endpoint; percentiles are exact over every recorded latency\n", c.concurrency, c.warmup, c.duration)
	fmt.Fprintf(&b, "- server: the real `boxoffice serve` binary (CGO_ENABLED=0), rate limits at 100,000,000/window, no Redis, "+
		"PAYMENT_PROVIDER=dev (a real provider adds an outside HTTP call per live paid checkout); tables ANALYZEd after the import\n")
	fmt.Fprintf(&b, "- the load generator, the server and PostgreSQL share the machine; anything else running on it lowers every figure. "+
		"\"other CPU\" is the share of the machine's CPU used during a run by processes other than the server, its PostgreSQL "+
		"backends and the bench process (PostgreSQL's background workers count as other); CPU per request (from /proc) is the "+
		"steadier figure to compare runs by. Load average before the runs: %s, after: %s\n\n", r.loadBefore, r.loadAfter)

	fmt.Fprintf(&b, "## Throughput and latency (closed loop, %d concurrent workers)\n\n", c.concurrency)
	b.WriteString("| endpoint | requests/s | p50 | p99 | max | vs bare net/http | server CPU/req | PostgreSQL CPU/req | SQL statements/req | response bytes | errors | other CPU |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	base := r.closed[epBaseline].rps
	for _, name := range loadOrder {
		s, ok := r.closed[name]
		if !ok {
			continue
		}
		ratio := "1 (baseline)"
		if name != epBaseline && base > 0 {
			ratio = fmt.Sprintf("%.3f× (1/%.0f)", s.rps/base, base/s.rps)
		}
		sql := "—"
		if cr, ok := r.statements[name]; ok {
			sql = fmt.Sprintf("%d", cr.summary.exec)
			if cr.min != cr.max {
				sql += fmt.Sprintf(" (range %d–%d)", cr.min, cr.max)
			}
			if cr.repeated.exec != cr.summary.exec {
				sql += fmt.Sprintf("; repeated: %d", cr.repeated.exec)
			}
		}
		srvCPU, pgCPU := "—", "—"
		if name != epBaseline {
			srvCPU, pgCPU = ms(s.serverCPU), ms(s.pgCPU)
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %d | %s | %.0f%% |\n", strings.ReplaceAll(name, "|", "\\|"),
			s.rps, ms(s.p50), ms(s.p99), ms(s.max), ratio, srvCPU, pgCPU, sql, r.bodySizes[name], errCell(s), 100*s.otherCPU)
	}

	fmt.Fprintf(&b, "\n## Catalog reads at the target rate (open loop, %d requests/s offered)\n\n", targetCatalogRPS)
	b.WriteString("A constant arrival rate, whatever the latency (up to 512 in flight), so p99 includes any queueing at that rate.\n\n")
	b.WriteString("| endpoint | offered/s | achieved/s | p50 | p99 | max | errors | other CPU |\n|---|---:|---:|---:|---:|---:|---|---:|\n")
	for _, name := range []string{epEvents, epTickets} {
		if s, ok := r.open[name]; ok {
			fmt.Fprintf(&b, "| %s | %.0f | %.0f | %s | %s | %s | %s | %.0f%% |\n", name, s.offered, s.rps, ms(s.p50), ms(s.p99), ms(s.max), errCell(s), 100*s.otherCPU)
		}
	}

	b.WriteString("\n## Targets\n\n| target | measured | result |\n|---|---|---|\n")
	for _, name := range []string{epEvents, epTickets} {
		cl, op := r.closed[name], r.open[name]
		okRPS := cl.rps >= targetCatalogRPS && cl.errors == 0
		okP99 := op.p99 <= targetCatalogP99 && op.errors == 0 && op.rps >= 0.98*targetCatalogRPS
		fmt.Fprintf(&b, "| %s ≥ %d requests/s | %.0f requests/s (closed loop) | %s |\n", name, targetCatalogRPS, cl.rps, passFail(okRPS))
		fmt.Fprintf(&b, "| %s p99 ≤ %s at %d requests/s | p99 %s at %.0f requests/s achieved | %s |\n", name, ms(targetCatalogP99),
			targetCatalogRPS, ms(op.p99), op.rps, passFail(okP99))
	}
	g := r.closed[epGraphQL]
	fmt.Fprintf(&b, "| nested GraphQL (50 events) ≥ %d requests/s | %.0f requests/s | %s |\n", targetGraphQLRPS, g.rps,
		passFail(g.rps >= targetGraphQLRPS && g.errors == 0))
	gn := r.closed[epGraphQLN]
	fmt.Fprintf(&b, "| the same, a new query text each request (the response cache never answers) ≥ %d requests/s | %.0f requests/s | %s |\n",
		targetGraphQLNewRPS, gn.rps, passFail(gn.rps >= targetGraphQLNewRPS && gn.errors == 0))
	fmt.Fprintf(&b, "| the same, server CPU per request ≤ %s | %s | %s |\n",
		ms(targetGraphQLNewCPU), ms(gn.serverCPU), passFail(gn.serverCPU > 0 && gn.serverCPU <= targetGraphQLNewCPU))
	for _, name := range []string{epCheckout, epSpread} {
		co := r.closed[name]
		what := strings.TrimPrefix(strings.TrimSuffix(name[strings.Index(name, "(")+1:], ")"), "live, paid, ")
		fmt.Fprintf(&b, "| live checkout ≥ %d creates/s (%s) | %.0f creates/s (%d errors) | %s |\n", targetCheckoutRPS, what, co.rps, co.errors,
			passFail(co.rps >= targetCheckoutRPS && co.errors == 0))
	}
	fmt.Fprintf(&b, "| zero oversell (200 concurrent live checkouts, %d left) | %s | %s |\n", oversellStock, r.oversell, passFail(r.oversell.ok))
	fmt.Fprintf(&b, "| peak RSS ≤ 150 MB | %s | %s |\n", mb(r.peakRSS), passFail(r.peakRSS <= targetPeakRSS))
	b.WriteString("\nServer VmHWM after each run: ")
	var hwm []string
	for _, name := range loadOrder[1:] {
		hwm = append(hwm, fmt.Sprintf("%s %s", name, mb(r.closed[name].hwm)))
	}
	for _, name := range []string{epEvents, epTickets} {
		hwm = append(hwm, fmt.Sprintf("%s at %d/s %s", name, targetCatalogRPS, mb(r.open[name].hwm)))
	}
	b.WriteString(strings.Join(hwm, "; ") + ".\n")
	stopped := "exited 0 after SIGTERM"
	if r.stopErr != nil {
		stopped = r.stopErr.Error()
	}
	fmt.Fprintf(&b, "\nPeak RSS is VmHWM of the load server's process (/proc/PID/status) after every run above; the server %s.\n", stopped)

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
	for _, name := range loadOrder[1:] {
		cr, ok := r.statements[name]
		if !ok {
			continue
		}
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
