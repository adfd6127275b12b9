package main

// doormode.go: `go run . door`. The door's rows alone —
// scans beside checkouts on one server — for working on the door without
// the whole bench. BENCH_PROFILE=FILE also writes a CPU profile of the
// server (pprof, from its admin listener) during the first closed-loop run.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

const doorDB = "boxoffice_door"

func doorMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	m, drop, err := startModeServer(ctx, cfg, doorDB, "door")
	if err != nil {
		return err
	}
	defer joinErr(&err, drop)
	defer func() { _ = m.stop() }()
	base, admin, sd := m.base, m.admin, m.sd
	step("door: a test scanner key for %s and %d test tickets from free test carts", refDoorEvent, doorTickets)
	door, err := makeDoorCodes(ctx, m.bin, m.dbURL, base, sd)
	if err != nil {
		return err
	}
	// No ANALYZE after the sale: the scans must not depend on statistics.
	scan := door.endpoint(base)
	if _, err := checkOnce(scan); err != nil {
		return fmt.Errorf("check-in: %w", err)
	}
	// BENCH_DOOR_CHECKOUT_RATE: checkouts a second beside the scans
	// (default the bench's; 0 for scans alone).
	checkouts := doorCheckoutRate
	if v := os.Getenv("BENCH_DOOR_CHECKOUT_RATE"); v != "" {
		if checkouts, err = strconv.Atoi(v); err != nil || checkouts < 0 {
			return fmt.Errorf("BENCH_DOOR_CHECKOUT_RATE %q is not a rate", v)
		}
	}
	pid := m.cmd.Process.Pid
	for r := range cfg.rounds {
		o, err := offlineRound(base, door, doorDate(sd))
		if err != nil {
			return err
		}
		step("round %d/%d offline door: manifest of %d tickets in %s (%d pages); a sync after %d scans p50 %s p99 %s (at most %d listed); a batch of %d scans %s",
			r+1, cfg.rounds, o.tickets, ms(o.download), o.pages, offlineSyncScans, ms(o.syncP50), ms(o.syncP99), o.relisted, batchSize, ms(o.batch))
	}
	for r := range cfg.rounds {
		for _, open := range []bool{false, true} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var prof chan error
			if path := os.Getenv("BENCH_PROFILE"); path != "" && r == 0 && !open {
				prof = make(chan error, 1)
				go func() { prof <- fetchProfile("http://"+admin, path, cfg.warmup, cfg.duration) }()
			}
			var d doorRun
			spread := endpoints(base, sd)[epSpread]
			s := measureRun(pid, doorDB, func() stats {
				return doorLoads(cfg, scan, spread, open, checkouts, cfg.warmup).scans
			}, func() stats {
				d = doorLoads(cfg, scan, spread, open, checkouts, cfg.duration)
				return d.scans
			})
			how := "closed loop"
			if open {
				how = fmt.Sprintf("open loop at %d/s", targetScanRate)
			}
			step("round %d/%d %-18s %6.0f scans/s p50 %-9s p99 %-9s errors %d; checkouts %.0f/s p50 %s; per scan (checkouts' share included): server CPU %s, PostgreSQL CPU %s; load %s",
				r+1, cfg.rounds, how, d.scans.rps, ms(d.scans.p50), ms(d.scans.p99), d.scans.errors, d.checkouts.rps, ms(d.checkouts.p50),
				ms(s.serverCPU), ms(s.pgCPU), loadAvg())
			if d.scans.errors > 0 {
				step("  first scan error: %.300s", d.scans.firstErr)
			}
			if prof != nil {
				if err := <-prof; err != nil {
					step("profile: %v", err)
				} else {
					step("wrote %s", os.Getenv("BENCH_PROFILE"))
				}
			}
		}
	}
	return nil
}

// fetchProfile writes a CPU profile of d from the server's admin listener
// to path, starting after wait.
func fetchProfile(admin, path string, wait, d time.Duration) error {
	time.Sleep(wait)
	return saveURL(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", admin, int(d.Seconds())), path)
}

// fetchHeapProfile writes to path the server's heap profile right after a
// collection (what is live, and what was allocated since the start).
func fetchHeapProfile(admin, path string) error {
	return saveURL(admin+"/debug/pprof/heap?gc=1", path)
}

// saveURL writes the body of a GET of rawURL to path.
func saveURL(rawURL, path string) error {
	res, err := http.Get(rawURL)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
