package main

// drift.go: does new-text GraphQL stay fast as a server runs? Ten
// consecutive runs of the new-text nested query on one server, each run's
// server CPU per request and peak RSS (issue 27, item 3).

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Issue 27: across the runs, CPU per request within 20% of the first
// run's, and the server's resident set never above targetPeakRSS.
const (
	driftRuns   = 10
	driftGrowth = 1.2
)

// driftRun is one run of the series.
type driftRun struct {
	s       stats
	peakRSS int64   // VmHWM of this run alone (reset before it)
	gc      gcTrace // the collector's cycles during the run
}

// newTextDrift runs the new-text query driftRuns times back to back on the
// server pid, with no warm-up between runs: the server keeps its caches,
// its collector's pacing and its heap from one run to the next. logPath is
// the server's log, where GODEBUG=gctrace=1 (gcTraceEnv) has the runtime
// write a line per collection.
func newTextDrift(cfg config, pid int, logPath, db string, e endpoint) []driftRun {
	var runs []driftRun
	for i := range driftRuns {
		runs = append(runs, newTextDriftRun(cfg, pid, logPath, db, e, i))
	}
	return runs
}

// newTextDriftRun is run i of the series.
func newTextDriftRun(cfg config, pid int, logPath, db string, e endpoint, i int) driftRun {
	resetPeakRSS(pid)
	from := fileSize(logPath)
	s := measureRun(pid, db, func() stats { return stats{} }, func() stats {
		return closedLoop(e, cfg.concurrency, 0, cfg.duration)
	})
	gc := readGCTrace(logPath, from)
	step("  run %2d/%d: %6.0f req/s  server CPU %s/req  peak RSS %s  errors %d  other CPU %.0f%%  %s", i+1, driftRuns, s.rps, ms(s.serverCPU),
		mb(s.hwm), s.errors, 100*s.otherCPU, gc.String(s.rps*cfg.duration.Seconds()))
	return driftRun{s: s, peakRSS: s.hwm, gc: gc}
}

// resetPeakRSS resets the process's VmHWM to its current resident set
// (Linux: 5 written to /proc/PID/clear_refs), so the next reading is the
// peak since now. Where that is not allowed the reading stays the
// process's peak so far, which can only overstate.
func resetPeakRSS(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// driftGrowthOf is the largest run's server CPU per request over the
// first's.
func driftGrowthOf(runs []driftRun) float64 {
	if len(runs) == 0 || runs[0].s.serverCPU <= 0 {
		return 0
	}
	var worst time.Duration
	for _, r := range runs {
		worst = max(worst, r.s.serverCPU)
	}
	return float64(worst) / float64(runs[0].s.serverCPU)
}

func driftPeak(runs []driftRun) int64 {
	var p int64
	for _, r := range runs {
		p = max(p, r.peakRSS)
	}
	return p
}

func driftErrors(runs []driftRun) int {
	n := 0
	for _, r := range runs {
		n += r.s.errors
	}
	return n
}

// writeDrift writes the series.
func writeDrift(b *strings.Builder, c config, runs []driftRun) {
	fmt.Fprintf(b, "\n## New-text GraphQL as the server runs (%d consecutive runs)\n\n", len(runs))
	fmt.Fprintf(b, "The new-text nested query (the row above), %d runs of %s back to back with %d closed-loop workers on the rows' "+
		"server, with no pause or warm-up between them: does its CPU per request or its memory grow as the server runs? "+
		"Peak RSS is each run's own: VmHWM, reset before the run (`/proc/PID/clear_refs`).\n\n", len(runs), c.duration, c.concurrency)
	b.WriteString("The collector's columns come from the server's `GODEBUG=gctrace=1` lines written during the run: its cycles, per 1,000 " +
		"requests, the median heap left live after a cycle and the median goal the next cycle was paced to (the goal is GOGC's " +
		"unless the soft memory limit, `GOMEMLIMIT`, holds it lower), and the CPU the collector reports for its cycles, per request.\n\n")
	b.WriteString("\"Other CPU\" is the share of the machine's CPU that other processes used during the run (as in the rows above): " +
		"on two cores, work beside the server (PostgreSQL's checkpointer or autovacuum, say) slows the server's own CPU per request too.\n\n")
	b.WriteString("| run | requests/s | p50 | p99 | server CPU/req | vs run 1 | peak RSS | errors | other CPU | GC cycles | per 1,000 requests | live heap after GC | heap goal | GC CPU/req |\n" +
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, r := range runs {
		reqs := r.s.rps * c.duration.Seconds()
		fmt.Fprintf(b, "| %d | %.0f | %s | %s | %s | %.2f× | %s | %d | %.0f%% | %d | %.1f | %.0f MB | %.0f MB | %s |\n", i+1, r.s.rps, ms(r.s.p50), ms(r.s.p99), ms(r.s.serverCPU),
			float64(r.s.serverCPU)/float64(max(runs[0].s.serverCPU, 1)), mb(r.peakRSS), r.s.errors, 100*r.s.otherCPU,
			r.gc.cycles, r.gc.perThousand(reqs), r.gc.liveMB, r.gc.goalMB, ms(r.gc.cpuPer(reqs)))
	}
}

const driftDB = "boxoffice_drift"

// driftMain is `go run . drift`: the new-text series alone, on a fresh
// server, for working on GraphQL without the whole bench. BENCH_PROFILE=
// FILE also writes CPU profiles of the first and the last run
// (FILE.first, FILE.last) and heap profiles taken after each of them
// (FILE.first.heap, FILE.last.heap: what stays live as the server runs)
// from the server's admin listener. BENCH_DRIFT_AFTER_ROWS=1 first runs
// every closed-loop row once on the server, as the full bench does before
// its series (and with BENCH_PROFILE writes FILE.rows.heap after them).
func driftMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	m, drop, err := startModeServer(ctx, cfg, driftDB, "drift")
	if err != nil {
		return err
	}
	defer joinErr(&err, drop)
	defer func() { _ = m.stop() }()
	admin, eps := m.admin, endpoints(m.base, m.sd)
	if _, err := checkOnce(eps[epGraphQLN]); err != nil {
		return err
	}
	profile, adminURL := os.Getenv("BENCH_PROFILE"), "http://"+admin
	heapProfile := func(suffix string) {
		if err := fetchHeapProfile(adminURL, profile+"."+suffix+".heap"); err != nil {
			step("heap profile: %v", err)
		}
	}
	pid := m.cmd.Process.Pid
	if os.Getenv("BENCH_DRIFT_AFTER_ROWS") == "1" {
		// The full bench runs the series on the server that has just run
		// every closed-loop row, with what those left in its caches.
		for _, name := range rowsOrder {
			if name == epBaseline {
				continue
			}
			step("first, as in the full bench: %s for %s", name, cfg.duration)
			s := closedLoop(eps[name], cfg.concurrency, 0, cfg.duration)
			step("  %8.0f req/s  errors %d", s.rps, s.errors)
		}
		if profile != "" {
			heapProfile("rows")
		}
	}
	step("new-text GraphQL: %d consecutive runs of %s on one server", driftRuns, cfg.duration)
	var runs []driftRun
	for i := range driftRuns {
		name := map[int]string{0: "first", driftRuns - 1: "last"}[i]
		if profile == "" || name == "" {
			runs = append(runs, newTextDriftRun(cfg, pid, m.logPath, driftDB, eps[epGraphQLN], i))
			continue
		}
		cpu := make(chan error, 1)
		go func() { cpu <- fetchProfile(adminURL, profile+"."+name, 0, cfg.duration-time.Second) }()
		runs = append(runs, newTextDriftRun(cfg, pid, m.logPath, driftDB, eps[epGraphQLN], i))
		if err := <-cpu; err != nil {
			step("profile: %v", err)
		}
		heapProfile(name)
	}
	step("largest run's CPU per request %.2f× the first's; peak RSS %s; errors %d", driftGrowthOf(runs), mb(driftPeak(runs)), driftErrors(runs))
	return nil
}
