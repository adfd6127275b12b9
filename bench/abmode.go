package main

// abmode.go: `go run . ab`, the hot-ticket create A/B alone (issue 27,
// item 1), for working on checkout without the whole bench.

import (
	"context"
	"path/filepath"
	"time"
)

// abMain builds the current tree and the baseline, seeds a template with
// each, and runs the hot-ticket live create on each in turn, BENCH_ROUNDS
// times, every run on a fresh copy and a fresh server, as make bench's
// A/B does; then the medians, their ratio and the stock checks.
func abMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	bin, err := buildCurrent(ctx, cfg.dir, cfg.root)
	if err != nil {
		return err
	}
	binDir := filepath.Dir(bin)
	baseBin, _, err := baselineBinary(ctx, cfg.root, cfg.dir, cfg.baseline)
	if err != nil {
		return err
	}
	prefix := cfg.db + "_abmode"
	cur := &side{name: "current", label: "current tree", bin: bin, template: prefix + "_tpl_cur"}
	base := &side{name: "baseline", label: cfg.baseline, bin: baseBin, template: prefix + "_tpl_base"}
	abDB := prefix + "_run"
	if !cfg.keepDB {
		defer joinErr(&err, func() error {
			for _, db := range []string{abDB, cur.template, base.template} {
				if err := dropBenchDB(context.Background(), cfg.adminURL, db); err != nil {
					return err
				}
			}
			return nil
		})
	}
	catalogPath, err := writeCatalog(binDir, time.Now())
	if err != nil {
		return err
	}
	for _, sd := range []*side{cur, base} {
		if err := prepareSide(ctx, cfg, sd, catalogPath); err != nil {
			return err
		}
	}
	runs := map[string][]abRun{}
	for r := range cfg.rounds {
		for _, s := range []*side{cur, base} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			run, err := abRound(ctx, cfg, s, abDB)
			if err != nil {
				return err
			}
			runs[s.name] = append(runs[s.name], run)
			step("round %d/%d %-8s %6.0f creates/s  p50 %-9s server CPU %s/create  PostgreSQL CPU %s/create; %s", r+1, cfg.rounds,
				s.name, run.s.rps, ms(run.s.p50), ms(run.s.serverCPU), ms(run.s.pgCPU), run.stock)
		}
	}
	c, b := runsSeries(runs["current"]).rps(), runsSeries(runs["baseline"]).rps()
	ok, why := allStockOK(append(runs["current"], runs["baseline"]...))
	step("current %.0f (%.0f–%.0f), %s %.0f (%.0f–%.0f) creates/s: %.2f× (target ≥ 3×); stock exact: %v %s",
		c.med, c.lo, c.hi, cfg.baseline, b.med, b.lo, b.hi, abRatio(runs["current"], runs["baseline"]), ok, why)
	return nil
}
