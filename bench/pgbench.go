package main

// pgbench.go: the physical limit of a hot-ticket create on this machine:
// pgbench running the least a create must write — one order row and one
// conditional UPDATE of the hot ticket's stock, in one transaction — with
// as many clients as the HTTP load, on a fresh copy of the same database.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/jackc/pgx/v5"
)

// serverPoolConns is the PostgreSQL connections `boxoffice serve` keeps on
// this 2-CPU machine (store/db.go: pgxpool's default, raised to 8), and so
// how many creates reach PostgreSQL at once whatever the HTTP concurrency.
// pgbench runs at the HTTP concurrency, as issue 27 asks, and at this: a
// hot row's UPDATE runs faster with fewer transactions queued on its lock,
// so the physical limit is the better of the two.
const serverPoolConns = 8

// pgbenchClients is the client counts pgbench runs with in each round.
func pgbenchClients(cfg config) []int {
	if cfg.concurrency == serverPoolConns {
		return []int{cfg.concurrency}
	}
	return []int{cfg.concurrency, serverPoolConns}
}

// pgbenchOf is the runs with the given clients.
func pgbenchOf(runs []pgbenchRun, clients int) []pgbenchRun {
	var out []pgbenchRun
	for _, r := range runs {
		if r.clients == clients {
			out = append(out, r)
		}
	}
	return out
}

// pgbenchLimit is the physical limit: the best median transactions/s over
// the client counts, and the count that reached it.
func pgbenchLimit(runs []pgbenchRun, counts []int) (int, float64) {
	best, at := 0.0, 0
	for _, c := range counts {
		if m := pgbenchSpread(pgbenchOf(runs, c), func(p pgbenchRun) float64 { return p.tps }).med; m > best {
			best, at = m, c
		}
	}
	return at, best
}

// pgbenchRun is one pgbench run.
type pgbenchRun struct {
	clients int
	tps     float64
	latency time.Duration // pgbench's average
	failed  int64
	pgCPU   time.Duration // per transaction, the backends of its database
	txns    int64
	stock   stockCheck
}

// pgbenchScript is the create's minimum, in the order the create writes:
// the order row, then the hot row's conditional UPDATE (the same stock
// rule as store.HoldStock) last, then the commit. The order row has the
// columns a live paid create fills; its reference is a random UUID.
var pgbenchScript = template.Must(template.New("").Parse(`BEGIN;
INSERT INTO orders (reference, app_id, environment, status, event_id, event_date_id, currency, total_amount,
  requires_payment, holds_stock, customer_name, customer_email, customer_phone, success_url, cancel_url,
  payment_provider, payment_reference, payment_url, expires_at, created_at, updated_at)
VALUES ('live_pgb_' || gen_random_uuid(), {{.App}}, 'live', 'pending', {{.Event}}, {{.Date}}, 'GHS', 15000,
  true, true, 'Bench Buyer', 'buyer@bench.example', '024 123 4567', 'https://bench.example/done',
  'https://bench.example/cancel', 'dev', 'dev_' || gen_random_uuid(),
  'http://127.0.0.1/dev/pay', now() + interval '15 minutes', now(), now());
UPDATE tickets SET held = held + 1, updated_at = now()
  WHERE id = {{.Ticket}} AND (quantity IS NULL OR quantity - sold - held >= 1);
COMMIT;
`))

var (
	pgbenchTPS     = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	pgbenchLatency = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
	pgbenchTxns    = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
	pgbenchFailed  = regexp.MustCompile(`(?m)^number of failed transactions: ([0-9]+)`)
)

// writePgbenchScript writes the script for side's hot ticket.
func writePgbenchScript(dir string, sd *side) (string, error) {
	var b bytes.Buffer
	err := pgbenchScript.Execute(&b, map[string]int64{"App": sd.sd.appID, "Event": sd.sd.ids.Events[refCheckoutEvent],
		"Date": sd.sd.ids.EventDates[refCheckoutDate], "Ticket": sd.sd.ids.Tickets[refCheckoutTicket]})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "pgbench-create.sql")
	return path, os.WriteFile(path, b.Bytes(), 0o644)
}

// pgbenchRound runs the script on a fresh copy of sd's template: a
// warm-up, then the measured run, with the CPU of the database's backends.
func pgbenchRound(ctx context.Context, cfg config, pgbench, script string, clients int, sd *side, db string) (pgbenchRun, error) {
	dbURL, err := copyDB(ctx, cfg.adminURL, db, sd.template)
	if err != nil {
		return pgbenchRun{}, err
	}
	run := func(d time.Duration) (string, error) {
		secs := max(int(d.Round(time.Second)/time.Second), 1)
		cmd := exec.CommandContext(ctx, pgbench, "-n", "-M", "prepared", "-c", strconv.Itoa(clients),
			"-j", strconv.Itoa(min(clients, 2)), "-T", strconv.Itoa(secs), "-f", script, dbURL)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("pgbench: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		return out.String(), nil
	}
	if cfg.warmup > 0 {
		if _, err := run(cfg.warmup); err != nil {
			return pgbenchRun{}, err
		}
	}
	tr := newPGTracker(db)
	tr.Start()
	out, err := run(cfg.duration)
	used := tr.Stop()
	if err != nil {
		return pgbenchRun{}, err
	}
	r, err := parsePgbench(out)
	if err != nil {
		return r, err
	}
	r.clients = clients
	if r.txns > 0 {
		r.pgCPU = used / time.Duration(r.txns)
	}
	r.stock = checkPgbenchStock(ctx, dbURL, sd.sd.ids.Tickets[refCheckoutTicket], sd.stock0)
	return r, dropBenchDB(ctx, cfg.adminURL, db)
}

// checkPgbenchStock is checkStock for pgbench's orders, which have no
// items: each holds one.
func checkPgbenchStock(ctx context.Context, dbURL string, ticketID int64, before stockRow) stockCheck {
	c := stockCheck{before: before}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		c.err = err
		return c
	}
	defer conn.Close(ctx)
	c.err = conn.QueryRow(ctx, `SELECT t.sold, t.held, (SELECT COUNT(*) FROM orders WHERE reference LIKE 'live\_pgb\_%')
		FROM tickets AS t WHERE t.id = $1`, ticketID).Scan(&c.after.sold, &c.after.held, &c.orders)
	c.pendingQty = c.orders
	return c
}

// parsePgbench reads tps, average latency, transactions and failures from
// pgbench's summary; a run in which no transaction finished is 0 tps.
func parsePgbench(out string) (pgbenchRun, error) {
	var r pgbenchRun
	m := pgbenchTPS.FindStringSubmatch(out)
	switch {
	case m != nil:
		r.tps, _ = strconv.ParseFloat(m[1], 64)
	case strings.Contains(out, "number of transactions actually processed: 0\n"):
		// No transaction finished in the time (pgbench then prints no tps).
		return r, nil
	default:
		return r, fmt.Errorf("no tps in pgbench's output:\n%s", out)
	}
	if m := pgbenchLatency.FindStringSubmatch(out); m != nil {
		ms, _ := strconv.ParseFloat(m[1], 64)
		r.latency = time.Duration(ms * float64(time.Millisecond))
	}
	if m := pgbenchTxns.FindStringSubmatch(out); m != nil {
		r.txns, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := pgbenchFailed.FindStringSubmatch(out); m != nil {
		r.failed, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return r, nil
}

func pgbenchSpread(runs []pgbenchRun, f func(pgbenchRun) float64) spread {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = f(r)
	}
	return spreadOf(xs)
}
