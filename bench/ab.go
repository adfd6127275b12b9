package main

// ab.go: the interleaved A/B of the hot-ticket live checkout create
// between the current tree and a baseline commit, each run on a fresh copy
// of its side's seeded database, with the physical limit (pgbench) in the
// same rounds.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// defaultBaseline is the commit the hot-ticket create is compared with
// (issue 27: ≥ 3× its creates/s in the same run).
const defaultBaseline = "2ec159f"

// targetABRatio is the creates/s of the current tree over the baseline's.
const targetABRatio = 3.0

// side is one binary of the A/B with its seeded template database.
type side struct {
	name     string // "current" or "baseline"
	label    string // for the report: "current tree", "2ec159f"
	bin      string
	template string // database name the runs copy
	sd       *seeded
	stock0   stockRow // the hot ticket as seeded
}

// abRun is one measured run of one side.
type abRun struct {
	s     stats
	stock stockCheck
}

// baselineBinary returns the boxoffice binary of commit rev, built once from
// `git archive` of it into dir/.baseline/HASH/boxoffice and reused by
// later runs.
func baselineBinary(ctx context.Context, root, dir, rev string) (bin, hash string, err error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--verify", rev+"^{commit}").Output()
	if err != nil {
		return "", "", fmt.Errorf("BENCH_BASELINE %q is not a commit of %s: %w", rev, root, err)
	}
	hash = strings.TrimSpace(string(out))
	cache := filepath.Join(dir, ".baseline", hash)
	bin = filepath.Join(cache, "boxoffice")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		step("baseline %s: using %s", rev, bin)
		return bin, hash, nil
	}
	src := filepath.Join(cache, "src")
	if err := os.RemoveAll(src); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", err
	}
	step("baseline %s: git archive into %s and build (once; cached by commit)", rev, src)
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", hash)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		return "", "", err
	}
	archive.Stderr, untar.Stderr = os.Stderr, os.Stderr
	if err := untar.Start(); err != nil {
		return "", "", err
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return "", "", fmt.Errorf("git archive %s: %w", hash, err)
	}
	if err := untar.Wait(); err != nil {
		return "", "", fmt.Errorf("tar -x of git archive %s: %w", hash, err)
	}
	if err := buildBinary(ctx, src, bin+".tmp"); err != nil {
		return "", "", fmt.Errorf("baseline %s: %w", rev, err)
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		return "", "", err
	}
	return bin, hash, os.RemoveAll(src)
}

// stockRow is a ticket's stock columns.
type stockRow struct{ sold, held int64 }

// stockCheck compares the hot ticket's row with what the orders say: held
// must be the quantity of its live pending orders that hold stock, sold
// (above what was seeded) that of its live paid and completed ones.
type stockCheck struct {
	before, after      stockRow
	pendingQty, paidQt int64
	orders             int64 // live orders of the ticket
	err                error
}

func (c stockCheck) ok() bool {
	return c.err == nil && c.after.held-c.before.held == c.pendingQty && c.after.sold-c.before.sold == c.paidQt
}

func (c stockCheck) String() string {
	if c.err != nil {
		return "check failed: " + c.err.Error()
	}
	s := fmt.Sprintf("sold+held %d (sold %d, held %d; seeded %d) = orders %d (%d live orders)",
		c.after.sold+c.after.held, c.after.sold, c.after.held, c.before.sold+c.before.held,
		c.before.sold+c.before.held+c.pendingQty+c.paidQt, c.orders)
	if !c.ok() {
		s += fmt.Sprintf(" — MISMATCH: held %d against %d pending, sold %d against %d paid above the seeded %d",
			c.after.held-c.before.held, c.pendingQty, c.after.sold-c.before.sold, c.paidQt, c.before.sold)
	}
	return s
}

// readStock reads a ticket's sold and held.
func readStock(ctx context.Context, dbURL string, ticketID int64) (stockRow, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return stockRow{}, err
	}
	defer conn.Close(ctx)
	var r stockRow
	err = conn.QueryRow(ctx, "SELECT sold, held FROM tickets WHERE id = $1", ticketID).Scan(&r.sold, &r.held)
	return r, err
}

// checkStock reads the ticket and its orders in one statement (one
// snapshot) and compares them.
func checkStock(ctx context.Context, dbURL string, ticketID int64, before stockRow) stockCheck {
	c := stockCheck{before: before}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		c.err = err
		return c
	}
	defer conn.Close(ctx)
	c.err = conn.QueryRow(ctx, `SELECT t.sold, t.held,
			COALESCE(SUM(i.quantity) FILTER (WHERE o.status = 'pending' AND o.holds_stock), 0),
			COALESCE(SUM(i.quantity) FILTER (WHERE o.status IN ('paid', 'completed')), 0),
			COUNT(o.id)
		FROM tickets AS t
		LEFT JOIN order_items AS i ON i.ticket_id = t.id
		LEFT JOIN orders AS o ON o.id = i.order_id AND o.environment = 'live'
		WHERE t.id = $1 GROUP BY t.id`, ticketID).
		Scan(&c.after.sold, &c.after.held, &c.pendingQty, &c.paidQt, &c.orders)
	return c
}

// prepareSide seeds side's template database with its own binary (migrate,
// import the same catalog file, account and app) and ANALYZEs the tables
// that hold rows (analyzeSeeded).
func prepareSide(ctx context.Context, cfg config, sd *side, catalogPath string) error {
	step("seeding %s (%s) into template database %s", sd.name, sd.label, sd.template)
	dbURL, err := copyDB(ctx, cfg.adminURL, sd.template, "")
	if err != nil {
		return err
	}
	t0 := time.Now()
	if sd.sd, err = seedWith(ctx, sd.bin, dbURL, catalogPath); err != nil {
		return fmt.Errorf("%s: %w", sd.name, err)
	}
	if err := analyzeSeeded(ctx, dbURL); err != nil {
		return err
	}
	if sd.stock0, err = readStock(ctx, dbURL, sd.sd.ids.Tickets[refCheckoutTicket]); err != nil {
		return err
	}
	step("  seeded in %s", time.Since(t0).Round(time.Millisecond))
	return nil
}

// abRound runs the hot-ticket create once on side: a fresh copy of its
// template, a fresh server, warm-up, the measured run, the stock check.
func abRound(ctx context.Context, cfg config, sd *side, db string) (abRun, error) {
	dbURL, err := copyDB(ctx, cfg.adminURL, db, sd.template)
	if err != nil {
		return abRun{}, err
	}
	logPath := filepath.Join(cfg.dir, ".bin", "server-ab-"+sd.name+".log")
	srv, err := startServer(ctx, sd.bin, dbURL, logPath, sd.sd.testKey)
	if err != nil {
		return abRun{}, fmt.Errorf("%s: %w", sd.name, err)
	}
	e := endpoints(srv.base, sd.sd)[epCheckout]
	s := measureRun(srv.cmd.Process.Pid, db, func() stats { return closedLoop(e, cfg.concurrency, 0, cfg.warmup) },
		func() stats { return closedLoop(e, cfg.concurrency, 0, cfg.duration) })
	gone, exitErr := srv.gone()
	stopErr := srv.stop()
	if gone {
		return abRun{}, fmt.Errorf("%s server exited during its run: %v (see %s)", sd.name, exitErr, logPath)
	}
	if stopErr != nil {
		step("warning: %v", stopErr)
	}
	r := abRun{s: s, stock: checkStock(ctx, dbURL, sd.sd.ids.Tickets[refCheckoutTicket], sd.stock0)}
	return r, dropBenchDB(ctx, cfg.adminURL, db)
}

// countSide counts the statements of one hot-ticket create on side's
// binary, through the counting proxy, on a copy of its template.
func countSide(ctx context.Context, cfg config, sd *side, db string) (countResult, error) {
	dbURL, err := copyDB(ctx, cfg.adminURL, db, sd.template)
	if err != nil {
		return countResult{}, err
	}
	hostport, err := pgHostPort(dbURL)
	if err != nil {
		return countResult{}, err
	}
	proxy, err := startPGCounter(hostport)
	if err != nil {
		return countResult{}, err
	}
	defer proxy.Close()
	srv, err := startServer(ctx, sd.bin, withHost(dbURL, proxy.Addr()),
		filepath.Join(cfg.dir, ".bin", "server-count-"+sd.name+".log"), sd.sd.testKey)
	if err != nil {
		return countResult{}, err
	}
	cr, err := countStatements(ctx, proxy, endpoints(srv.base, sd.sd)[epCheckout], 50)
	if serr := srv.stop(); serr != nil {
		step("warning: %v", serr)
	}
	if err != nil {
		return cr, fmt.Errorf("counting %s: %w", sd.name, err)
	}
	return cr, dropBenchDB(ctx, cfg.adminURL, db)
}

// abRatio is the current side's median creates/s over the baseline's.
func abRatio(cur, base []abRun) float64 {
	c, b := runsSeries(cur).rps().med, runsSeries(base).rps().med
	if b == 0 {
		return 0
	}
	return c / b
}

func runsSeries(runs []abRun) series {
	s := make(series, len(runs))
	for i, r := range runs {
		s[i] = r.s
	}
	return s
}

func allStockOK(runs []abRun) (bool, string) {
	for i, r := range runs {
		if !r.stock.ok() {
			return false, fmt.Sprintf("run %d: %s", i+1, r.stock)
		}
	}
	if len(runs) == 0 {
		return false, "no runs"
	}
	return true, runs[len(runs)-1].stock.String()
}

var errNoPgbench = errors.New("pgbench is not installed; make bench runs it for the physical-limit row. " +
	"On Debian: apt-get install postgresql-contrib (pgbench comes with the PostgreSQL server package, " +
	"/usr/lib/postgresql/VERSION/bin/pgbench, reached through /usr/bin/pgbench)")
