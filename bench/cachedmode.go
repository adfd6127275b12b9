package main

// cachedmode.go: `go run . cached`, the cached catalog read against the
// bare handler writing the same bytes, alone (issue 27, item 4), for
// working on the read path without the whole bench.

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

const cachedDB = "cached"

// cachedMain runs GET /api/v1/events?per_page=100 on a fresh server and
// the bare handler's process, interleaved BENCH_ROUNDS times, and prints
// each side's server CPU per request and their ratio. BENCH_PROFILE=FILE
// also writes a CPU profile of the server during its first run.
func cachedMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	m, drop, err := startModeServer(ctx, cfg, cachedDB, cachedDB)
	if err != nil {
		return err
	}
	defer joinErr(&err, drop)
	defer func() { _ = m.stop() }()
	eps := endpoints(m.base, m.sd)
	bare, bareSrv, err := startBaseline(ctx, eps[epEvents], filepath.Dir(m.bin))
	if err != nil {
		return err
	}
	defer func() { _ = bareSrv.stop() }()
	step("server at %s, admin listener (pprof) at %s", m.base, m.admin)
	var cached, base series
	for r := range cfg.rounds {
		for _, side := range []struct {
			e   endpoint
			pid int
			out *series
		}{{eps[epEvents], m.cmd.Process.Pid, &cached}, {bare, bareSrv.cmd.Process.Pid, &base}} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			settle(side.pid, settleLimit)
			var ch chan error
			if path := os.Getenv("BENCH_PROFILE"); path != "" && r == 0 && side.out == &cached {
				ch = make(chan error, 1)
				go func() { ch <- fetchProfile("http://"+m.admin, path, cfg.warmup, cfg.duration-time.Second) }()
			}
			s := measureRun(side.pid, cachedDB, func() stats { return closedLoop(side.e, cfg.concurrency, 0, cfg.warmup) },
				func() stats { return closedLoop(side.e, cfg.concurrency, 0, cfg.duration) })
			if ch != nil {
				if err := <-ch; err != nil {
					step("profile: %v", err)
				}
			}
			*side.out = append(*side.out, s)
			step("round %d/%d %-8s %8.0f req/s  server CPU %.4f ms/req  errors %d  other CPU %.0f%%", r+1, cfg.rounds,
				map[bool]string{true: "cached", false: "bare"}[side.out == &cached], s.rps, msf(s.serverCPU), s.errors, 100*s.otherCPU)
		}
	}
	c, b := cached.srvCPU(), base.srvCPU()
	step("cached %.4f ms (%.4f–%.4f), bare %.4f ms (%.4f–%.4f): %.2f× (target ≤ %.1f×)", c.med, c.lo, c.hi, b.med, b.lo, b.hi,
		c.med/b.med, targetCachedVsBare)
	return nil
}
