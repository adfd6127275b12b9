package main

// catalogmode.go: `go run . catalog`, a catalog of a million events
// (issue 41): how long building it takes, then cold and warm latencies and
// PostgreSQL CPU of REST pages, GraphQL filters and a partner walking the
// whole catalog, and the server's memory.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/jackc/pgx/v5"
)

const catalogDB = "catalog_scale"

// catalogMain builds BENCH_CATALOG_EVENTS events (default 1,000,000; two
// dates and two to four ticket types each, storetest.LargeCatalogSQL) in
// the database itself, starts a server, and measures one request at a
// time, so each latency is the request's own: the first request after
// start (the listing index's full read), cold pages (each right after a
// one-ticket change the server has heard), warm pages, GraphQL filters,
// and a walk of every page by a partner. BENCH_CATALOG_WALK=0 skips the
// walk.
func catalogMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	n := 1_000_000
	if v := os.Getenv("BENCH_CATALOG_EVENTS"); v != "" {
		if n, err = strconv.Atoi(strings.ReplaceAll(v, "_", "")); err != nil || n < 100 {
			return fmt.Errorf("BENCH_CATALOG_EVENTS %q is not a number of at least 100", v)
		}
	}
	bin, dbURL, drop, err := prepareRun(ctx, cfg.dir, cfg.root, cfg.adminURL, catalogDB, cfg.keepDB)
	if err != nil {
		return err
	}
	if drop != nil {
		defer joinErr(&err, drop)
	}
	if _, err := cli(ctx, bin, dbURL, "migrate"); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	start := time.Now()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	for _, s := range storetest.LargeCatalogSQL(n, time.Now().UTC(), "bench") {
		if _, err := tx.Exec(ctx, s); err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "ANALYZE venues, events, event_dates, tickets"); err != nil {
		return err
	}
	var dates, tickets int
	if err := conn.QueryRow(ctx, "SELECT (SELECT count(*) FROM event_dates), (SELECT count(*) FROM tickets)").Scan(&dates, &tickets); err != nil {
		return err
	}
	step("built %d events, %d dates, %d tickets in %s (INSERT … SELECT in one transaction, then ANALYZE)",
		n, dates, tickets, time.Since(start).Round(time.Millisecond))
	key, err := benchApp(ctx, bin, dbURL)
	if err != nil {
		return err
	}

	logPath := filepath.Join(cfg.dir, ".bin", "catalog-serve.log")
	startAt := time.Now()
	// serve's default soft memory limit (100 MiB) leaves no room for the
	// listing index of a large catalog: an operator raises it with the
	// index's budget, as here.
	srv, err := startServer(ctx, bin, dbURL, logPath, key, "GOMEMLIMIT=450MiB")
	if err != nil {
		return err
	}
	defer func() { _ = srv.stop() }()
	step("first request answered %s after start (from the database: the index is read on its own)", time.Since(startAt).Round(time.Millisecond))
	for {
		b, _ := os.ReadFile(logPath)
		if bytes.Contains(b, []byte("catalog listing index read")) {
			break
		}
		if time.Since(startAt) > 20*time.Minute {
			return fmt.Errorf("the listing index was not read within 20 minutes; see %s", logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	step("listing index read %s after start", time.Since(startAt).Round(time.Millisecond))
	rss, _ := peakRSS(srv.cmd.Process.Pid)
	step("server peak RSS after the full read: %d MB", rss>>20)

	c := &catalogClient{base: srv.base, key: key, conn: conn, db: catalogDB}
	pages := n * 49 / 50 * 3 / 4 / 100 // about the upcoming visible events, per 100
	rest := []struct{ name, path string }{
		{"REST page 1", "/api/v1/events?per_page=100"},
		{"REST page 5,000", "/api/v1/events?per_page=100&page=5000"},
		{"REST page 10,000", fmt.Sprintf("/api/v1/events?per_page=100&page=%d", min(10_000, pages))},
		{"REST q=jazz page 100", "/api/v1/events?per_page=100&q=jazz&page=100"},
		{"REST city=Accra soonest page 50", "/api/v1/events?per_page=100&city=Accra&order_by=soonest&page=50"},
	}
	const nested = `nodes { id name pricing { isEntirelyFree } dates { id startdateIso venue { name city } tickets { id name effectivePrice quantityAvailable } } }`
	gql := []struct{ name, query string }{
		{"GraphQL city, free: false, SOONEST, nested (50)", `{ events(perPage: 50, city: "Accra", free: false, orderBy: SOONEST) { pageInfo { total } ` + nested + ` } }`},
		{"GraphQL online, page 200 (50)", `{ events(perPage: 50, online: true, page: 200) { pageInfo { total } ` + nested + ` } }`},
		{"GraphQL free: true, includePast (50)", `{ events(perPage: 50, free: true, includePast: true) { pageInfo { total } ` + nested + ` } }`},
	}
	rounds := cmp.Or(cfg.rounds*10, 30)
	var report []string
	row := func(name string, cold, warm latencies) {
		line := fmt.Sprintf("| %s | %s | %s | %s | %s | %.2f | %.2f |", name, ms(cold.p(50)), ms(cold.p(99)),
			ms(warm.p(50)), ms(warm.p(99)), msf(cold.pgCPU), msf(warm.pgCPU))
		step("%s", line)
		report = append(report, line)
	}
	for _, r := range rest {
		cold, err := c.run(ctx, rounds, true, func() error { return c.get(ctx, r.path) })
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		warm, err := c.run(ctx, rounds*5, false, func() error { return c.get(ctx, r.path) })
		if err != nil {
			return err
		}
		row(r.name, cold, warm)
	}
	for _, g := range gql {
		cold, err := c.run(ctx, rounds, true, func() error { return c.graphql(ctx, g.query) })
		if err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		warm, err := c.run(ctx, rounds*5, false, func() error { return c.graphql(ctx, g.query) })
		if err != nil {
			return err
		}
		row(g.name, cold, warm)
	}
	if os.Getenv("BENCH_CATALOG_WALK") != "0" {
		// A partner copies the catalog: every page of 100, one after another,
		// right after a change.
		if err := c.change(ctx); err != nil {
			return err
		}
		page := 0
		walkStart := time.Now()
		walk, err := c.run(ctx, pages, false, func() error {
			page++
			return c.get(ctx, fmt.Sprintf("/api/v1/events?per_page=100&page=%d", page))
		})
		if err != nil {
			return fmt.Errorf("walk page %d: %w", page, err)
		}
		line := fmt.Sprintf("| walk: %d pages of 100, first after a change | %s | %s | — | — | %.2f | — |", pages,
			ms(walk.p(50)), ms(walk.p(99)), msf(walk.pgCPU))
		step("%s (%s in all)", line, time.Since(walkStart).Round(time.Millisecond))
		report = append(report, line)
	}
	rss, _ = peakRSS(srv.cmd.Process.Pid)
	step("server peak RSS: %d MB; load average %s", rss>>20, loadAvg())
	fmt.Println("| request | cold p50 | cold p99 | warm p50 | warm p99 | PG CPU ms/req cold | warm |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, l := range report {
		fmt.Println(l)
	}
	return nil
}

// benchApp creates the bench account and app and returns the app's test key.
func benchApp(ctx context.Context, bin, dbURL string) (string, error) {
	out, err := cli(ctx, bin, dbURL, "accounts", "create", "--name", "Bench", "--email", "bench@bench.example", "--json")
	if err != nil {
		return "", err
	}
	var acc struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(out, &acc); err != nil {
		return "", fmt.Errorf("accounts create --json: %w: %s", err, out)
	}
	out, err = cli(ctx, bin, dbURL, "apps", "create", "--account", strconv.FormatInt(acc.ID, 10), "--name", "Bench shop", "--json")
	if err != nil {
		return "", err
	}
	var app struct {
		TestKey string `json:"test_key"`
	}
	if err := json.Unmarshal(out, &app); err != nil || app.TestKey == "" {
		return "", fmt.Errorf("apps create --json printed no key: %s", out)
	}
	return app.TestKey, nil
}

// catalogClient sends the catalog requests, one at a time.
type catalogClient struct {
	base, key, db string
	conn          *pgx.Conn
	changes       int
}

// latencies are one series' request times and PostgreSQL CPU per request.
type latencies struct {
	d     []time.Duration
	pgCPU time.Duration
}

func (l latencies) p(q int) time.Duration {
	if len(l.d) == 0 {
		return 0
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*q/100)]
}

// change moves one ticket's price, a catalog change, and waits until the
// server has heard of it: a kept page's bytes differ once it has.
func (c *catalogClient) change(ctx context.Context) error {
	c.changes++
	_, err := c.conn.Exec(ctx, "UPDATE tickets SET price = price + 1 WHERE id = (SELECT min(id) FROM tickets WHERE price > 0)")
	if err != nil {
		return err
	}
	// NOTIFY reaches the server's listener within milliseconds; a fixed
	// wait keeps the probe out of the measured request.
	time.Sleep(100 * time.Millisecond)
	return nil
}

// run makes n requests with do, each after a change when cold, and times
// each; PostgreSQL CPU is that of the database's backends over the
// requests alone.
func (c *catalogClient) run(ctx context.Context, n int, cold bool, do func() error) (latencies, error) {
	var l latencies
	// Backend CPU is read from /proc in clock ticks (10 ms), too coarse
	// for one request: it is taken over the series and divided. A cold
	// series' includes its one-row UPDATEs.
	pg := newPGTracker(c.db)
	pg.Start()
	for range n {
		if ctx.Err() != nil {
			return l, ctx.Err()
		}
		if cold {
			if err := c.change(ctx); err != nil {
				return l, err
			}
		}
		t := time.Now()
		err := do()
		l.d = append(l.d, time.Since(t))
		if err != nil {
			pg.Stop()
			return l, err
		}
	}
	l.pgCPU = pg.Stop() / time.Duration(max(n, 1))
	return l, nil
}

func (c *catalogClient) get(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	return c.do(req)
}

func (c *catalogClient) graphql(ctx context.Context, query string) error {
	body, _ := json.Marshal(map[string]string{"query": query})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req)
}

func (c *catalogClient) do(req *http.Request) error {
	req.Header.Set("X-API-Key", c.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`"errors"`)) {
		return fmt.Errorf("%s %s: %d %.300s", req.Method, req.URL.Path, res.StatusCode, b)
	}
	return nil
}
