package main

// setup.go: the bench database, the real binary, the catalog file and the
// server processes.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/jackc/pgx/v5"
)

// The databases the benchmarks create and drop: make bench's, and make
// bench-peers' (its own, so that the two can run at the same time).
const (
	benchDB = "boxoffice_bench"
	peersDB = "boxoffice_bench_peers"
)

// adminExec runs statements on the admin database of adminURL.
func adminExec(ctx context.Context, adminURL string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect %s: %w (is PostgreSQL running? set BENCH_DATABASE_URL)", redact(adminURL), err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// pgVersion reads the server's version string.
func pgVersion(ctx context.Context, dbURL string) string {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "unknown"
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "unknown"
	}
	return v
}

// createBenchDB drops and recreates the database db and returns its URL.
func createBenchDB(ctx context.Context, adminURL, db string) (string, error) {
	return copyDB(ctx, adminURL, db, "")
}

// copyDB drops the database db and creates it again as a copy of template
// (empty: a new, empty database), and returns its URL. A template must
// have no connections; the backends of a command that just exited may
// still be leaving, so a busy template is retried for a few seconds.
func copyDB(ctx context.Context, adminURL, db, template string) (string, error) {
	create := "CREATE DATABASE " + db
	if template != "" {
		create += " TEMPLATE " + template
	}
	for attempt := 0; ; attempt++ {
		err := adminExec(ctx, adminURL, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)", create)
		if err == nil {
			break
		}
		if template == "" || attempt == 50 || !strings.Contains(err.Error(), "is being accessed by other users") {
			return "", err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return dbURLFor(adminURL, db)
}

// dbURLFor is adminURL naming the database db instead.
func dbURLFor(adminURL, db string) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + db
	return u.String(), nil
}

// prepareRun builds the server binary into dir/.bin and creates the
// database name, as every benchmark run begins. drop drops the database
// again and says so, or is nil when keep is set (BENCH_KEEP_DB).
func prepareRun(ctx context.Context, dir, root, adminURL, name string, keep bool) (bin, dbURL string, drop func() error, err error) {
	if bin, err = buildCurrent(ctx, dir, root); err != nil {
		return "", "", nil, err
	}
	step("creating database %s", name)
	if dbURL, err = createBenchDB(ctx, adminURL, name); err != nil {
		return "", "", nil, err
	}
	if !keep {
		drop = func() error {
			if err := dropBenchDB(context.Background(), adminURL, name); err != nil {
				return err
			}
			step("dropped database %s", name)
			return nil
		}
	}
	return bin, dbURL, drop, nil
}

// joinErr runs f, unless it is nil, and adds its error to *err: for a
// deferred cleanup whose failure must not be lost.
func joinErr(err *error, f func() error) {
	if f == nil {
		return
	}
	if ferr := f(); ferr != nil {
		*err = errors.Join(*err, ferr)
	}
}

func dropBenchDB(ctx context.Context, adminURL, db string) error {
	return adminExec(ctx, adminURL, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
}

func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return raw
}

// withHost returns dbURL pointing at host:port instead.
func withHost(dbURL, hostport string) string {
	u, _ := url.Parse(dbURL)
	u.Host = hostport
	return u.String()
}

// pgHostPort is the host:port of a PostgreSQL URL (5432 by default).
func pgHostPort(dbURL string) (string, error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	host, port := u.Hostname(), u.Port()
	if host == "" || strings.HasPrefix(host, "/") {
		return "", fmt.Errorf("BENCH_DATABASE_URL must name a TCP host, got %q", redact(dbURL))
	}
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(host, port), nil
}

// buildCurrent builds the current tree's server into dir/.bin/boxoffice
// and returns its path.
func buildCurrent(ctx context.Context, dir, root string) (string, error) {
	binDir := filepath.Join(dir, ".bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "boxoffice")
	step("building %s (the current tree)", bin)
	return bin, buildBinary(ctx, root, bin)
}

// buildBinary builds cmd/boxoffice as a production build would.
func buildBinary(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, goTool(), "build", "-buildvcs=false", "-o", out, "./cmd/boxoffice")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/boxoffice: %w", err)
	}
	return nil
}

func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// cli runs the binary with args and the database URL; it returns stdout.
func cli(ctx context.Context, bin, dbURL string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = serverEnv(dbURL, "")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("boxoffice %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// serverEnv is the environment of every boxoffice process: the bench
// database, limits far above any load, no Redis (in-memory counters), and
// the development payment provider (PAYMENT_PROVIDER=dev: live paid
// checkouts need a provider, and a real one is an outside network call).
func serverEnv(dbURL, addr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "REDIS_URL" || k == "DATABASE_URL" || k == "ADDR" || k == "ADMIN_ADDR" || k == "PAYMENT_PROVIDER" ||
			strings.HasPrefix(k, "RATE_LIMIT_") || strings.HasPrefix(k, "FREE_DAILY_") {
			continue
		}
		env = append(env, kv)
	}
	const high = "100000000"
	env = append(env, "DATABASE_URL="+dbURL,
		"RATE_LIMIT_LIVE="+high, "RATE_LIMIT_TEST="+high, "RATE_LIMIT_CHECKOUT="+high, "RATE_LIMIT_FAILED_AUTH="+high,
		"FREE_DAILY_APP_CAP="+high, "FREE_DAILY_BUYER_EVENT_CAP="+high, "PAYMENT_PROVIDER=dev",
		"ADMIN_ADDR=") // no admin listener: runs side by side must not fight over its port
	if addr != "" {
		env = append(env, "ADDR="+addr, "PUBLIC_BASE_URL=http://"+addr)
	}
	return env
}

// Catalog shape: 1,000 events × 3 dates × 4 tickets.
const (
	nEvents        = 1000
	datesPerEvent  = 3
	ticketsPerDate = 4
	nVenues        = 25
	oversellStock  = 50
)

// Catalog references the benchmark needs ids for.
const (
	refCheckoutEvent  = "BEV-0002"
	refCheckoutDate   = "BEV-0002-D1"
	refCheckoutTicket = "BEV-0002-D1-REG" // paid, unlimited stock
	refOversellEvent  = "BEV-0001"
	refOversellDate   = "BEV-0001-D1"
	refOversellTicket = "BEV-0001-D1-LAST" // paid, exactly oversellStock
)

// catalogFile generates the bench catalog: every event published with three
// upcoming dates; per date a paid ticket with unlimited stock (REG), a paid
// one with a lower promotional price (VIP), a free one (FREE) and a paid one
// whose promotional price is higher than the price, so the price applies
// (EARLY). The first date of BEV-0001 has a LAST ticket with exactly
// oversellStock left instead of EARLY, for the oversell check.
func catalogFile(now time.Time) *catalog.File {
	str := func(s string) *string { return &s }
	qty := func(n int64) *int64 { return &n }
	f := &catalog.File{}
	for v := range nVenues {
		lat, lng := 5.55+float64(v)/100, -0.2+float64(v)/100
		f.Venues = append(f.Venues, catalog.VenueSpec{
			Reference: fmt.Sprintf("BV-%02d", v+1), Name: fmt.Sprintf("Bench Hall %d", v+1),
			Slug: fmt.Sprintf("bench-hall-%d", v+1), Street: str(fmt.Sprintf("%d Independence Ave", v+1)),
			City: str("Accra"), State: str("Greater Accra"), Lat: &lat, Lng: &lng,
		})
	}
	base := now.UTC().Truncate(24 * time.Hour).Add(19 * time.Hour)
	for e := range nEvents {
		ref := fmt.Sprintf("BEV-%04d", e+1)
		ev := catalog.EventSpec{
			Reference: ref, Name: fmt.Sprintf("Bench Event %04d", e+1), Slug: fmt.Sprintf("bench-event-%04d", e+1),
			Description: str("A generated event of the Boxoffice benchmark catalog, with three dates and four ticket types each."),
			ImageURL:    str(fmt.Sprintf("https://images.bench.example/events/%04d.jpg", e+1)),
			Timezone:    "Africa/Accra", Published: true,
		}
		if e%10 == 0 {
			ev.USSDCode, ev.USSDFullCode = str("*713*33#"), str(fmt.Sprintf("*713*33*%d#", e+1))
		}
		for d := range datesPerEvent {
			start := base.Add(time.Duration(1+e%300+d*7) * 24 * time.Hour)
			dref := fmt.Sprintf("%s-D%d", ref, d+1)
			venue := str(fmt.Sprintf("BV-%02d", (e+d)%nVenues+1))
			date := catalog.DateSpec{Reference: dref, Start: start.Format(time.RFC3339),
				End: start.Add(4 * time.Hour).Format(time.RFC3339), Venue: venue}
			date.Tickets = []catalog.TicketSpec{
				{Reference: dref + "-REG", Name: "Regular", Price: str("150.00"), Currency: "GHS"},
				{Reference: dref + "-VIP", Name: "VIP", Price: str("400.00"), PromotionalPrice: str("320.00"),
					Quantity: qty(200), Sold: 12, TicketsPerAttendee: qty(4), Currency: "GHS"},
				{Reference: dref + "-FREE", Name: "Free entry", Free: true, Quantity: qty(1000), Currency: "GHS"},
			}
			if dref == refOversellDate {
				date.Tickets = append(date.Tickets, catalog.TicketSpec{Reference: refOversellTicket, Name: "Last call",
					Price: str("90.00"), Quantity: qty(oversellStock), Currency: "GHS"})
			} else {
				date.Tickets = append(date.Tickets, catalog.TicketSpec{Reference: dref + "-EARLY", Name: "Early bird",
					Price: str("100.00"), PromotionalPrice: str("120.00"), Quantity: qty(100), Sold: 20, Currency: "GHS"})
			}
			ev.Dates = append(ev.Dates, date)
		}
		f.Events = append(f.Events, ev)
	}
	return f
}

// seeded is what the benchmark learns from seeding.
type seeded struct {
	ids     catalog.ImportResult
	appID   int64
	testKey string
	liveKey string
}

// seed migrates, imports the catalog and creates the bench account and app.
func seed(ctx context.Context, bin, dir, dbURL string) (*seeded, error) {
	file, err := writeCatalog(dir, time.Now())
	if err != nil {
		return nil, err
	}
	return seedWith(ctx, bin, dbURL, file)
}

// seedAnalyzed seeds the database at dbURL as seed does, saying so, and
// ANALYZEs the tables that hold rows (analyzeSeeded): how the soak, the door and the peers runs begin.
func seedAnalyzed(ctx context.Context, bin, dir, dbURL string) (*seeded, error) {
	step("migrating and importing %d events × %d dates × %d tickets", nEvents, datesPerEvent, ticketsPerDate)
	sd, err := seed(ctx, bin, dir, dbURL)
	if err != nil {
		return nil, err
	}
	return sd, analyzeSeeded(ctx, dbURL)
}

// analyzeSeeded ANALYZEs the tables of the database at dbURL that hold
// rows, and leaves the empty ones (orders, order_items, idempotency_keys…)
// never analyzed, as autovacuum leaves a new deployment's tables until
// rows arrive. An ANALYZE of an empty table records it as empty: the
// planner then believes its one page, and a backend's cached plan for the
// foreign-key checks on orders (order_items, order_changes) became a
// sequential scan that no invalidation replaced while orders grew (this
// machine's PostgreSQL runs with autovacuum off), so each create scanned
// every earlier order. A table never analyzed counts as at least ten pages,
// where the primary key's index wins.
func analyzeSeeded(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, t := range tables {
		var any bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+")").Scan(&any); err != nil {
			return err
		}
		if !any {
			continue
		}
		if _, err := conn.Exec(ctx, "ANALYZE "+t); err != nil {
			return err
		}
	}
	return nil
}

// writeCatalog writes catalogFile(now) into dir and returns its path.
func writeCatalog(dir string, now time.Time) (string, error) {
	data, err := json.MarshalIndent(catalogFile(now), "", " ")
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "catalog.json")
	return file, os.WriteFile(file, data, 0o644)
}

// seedWith is seed with the catalog file written already, so that two
// binaries can import the same one.
func seedWith(ctx context.Context, bin, dbURL, file string) (*seeded, error) {
	if _, err := cli(ctx, bin, dbURL, "migrate"); err != nil {
		return nil, err
	}
	out, err := cli(ctx, bin, dbURL, "catalog", "import", file, "--json")
	if err != nil {
		return nil, err
	}
	s := &seeded{}
	if err := json.Unmarshal(out, &s.ids); err != nil {
		return nil, fmt.Errorf("catalog import --json: %w: %s", err, out)
	}
	if len(s.ids.Events) != nEvents || len(s.ids.EventDates) != nEvents*datesPerEvent ||
		len(s.ids.Tickets) != nEvents*datesPerEvent*ticketsPerDate {
		return nil, fmt.Errorf("catalog import made %d events, %d dates, %d tickets", len(s.ids.Events),
			len(s.ids.EventDates), len(s.ids.Tickets))
	}
	out, err = cli(ctx, bin, dbURL, "accounts", "create", "--name", "Bench", "--email", "bench@bench.example", "--json")
	if err != nil {
		return nil, err
	}
	var acc struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(out, &acc); err != nil {
		return nil, fmt.Errorf("accounts create --json: %w: %s", err, out)
	}
	out, err = cli(ctx, bin, dbURL, "apps", "create", "--account", strconv.FormatInt(acc.ID, 10),
		"--name", "Bench shop", "--redirect-domain", "bench.example", "--json")
	if err != nil {
		return nil, err
	}
	var app struct {
		ID      int64  `json:"id"`
		TestKey string `json:"test_key"`
		LiveKey string `json:"live_key"`
	}
	if err := json.Unmarshal(out, &app); err != nil || app.TestKey == "" || app.LiveKey == "" {
		return nil, fmt.Errorf("apps create --json printed no keys: %s", out)
	}
	s.appID, s.testKey, s.liveKey = app.ID, app.TestKey, app.LiveKey
	return s, nil
}

// server is a running server process: `boxoffice serve`, or PostGraphile
// (peers.go).
type server struct {
	name    string // for messages: "boxoffice serve", "PostGraphile"
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:port
	logPath string
	done    chan error
	log     *os.File
	exitErr error // once it has exited
	exited  bool
}

// gone reports, without waiting, whether the server has exited, and how.
func (s *server) gone() (bool, error) {
	if !s.exited {
		select {
		case err := <-s.done:
			s.exited, s.exitErr = true, err
		default:
		}
	}
	return s.exited, s.exitErr
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startServer runs `boxoffice serve` and waits until it answers.
func startServer(ctx context.Context, bin, dbURL, logPath, key string, extraEnv ...string) (*server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(serverEnv(dbURL, addr), extraEnv...)
	base := "http://" + addr
	return startProcess(ctx, "boxoffice serve", cmd, base, logPath, 60*time.Second, func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/events?per_page=1", nil)
		req.Header.Set("X-API-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// startProcess starts cmd with its output in logPath and polls ready until
// it reports true, the process exits, or wait has passed.
func startProcess(ctx context.Context, name string, cmd *exec.Cmd, base, logPath string, wait time.Duration, ready func() bool) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	s := &server{name: name, cmd: cmd, base: base, logPath: logPath, done: make(chan error, 1), log: logf}
	go func() { s.done <- cmd.Wait() }()
	deadline := time.Now().Add(wait)
	for !ready() {
		select {
		case err := <-s.done:
			logf.Close()
			return nil, fmt.Errorf("%s exited before answering (%v); see %s", name, err, logPath)
		case <-ctx.Done():
			_ = s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.stop()
			return nil, fmt.Errorf("%s did not answer within %s; see %s", name, wait, logPath)
		}
	}
	return s, nil
}

// peakRSS reads VmHWM (the resident set's high-water mark) in bytes.
func (s *server) peakRSS() (int64, error) {
	return peakRSS(s.cmd.Process.Pid)
}

func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// stop sends SIGTERM and waits for a graceful exit (SIGKILL after 30s).
func (s *server) stop() error {
	defer s.log.Close()
	if gone, err := s.gone(); gone {
		return fmt.Errorf("%s had already exited (%v) before SIGTERM", s.name, err)
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			return fmt.Errorf("%s exited after SIGTERM: %w", s.name, err)
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("%s did not stop within 30s of SIGTERM; killed", s.name)
	}
}

// modeServer is the server of a `go run . MODE` run (door, drift): the
// binary, a seeded and analyzed database of the mode's own, and `boxoffice
// serve` on it with an admin listener, for profiles.
type modeServer struct {
	*server
	bin, dbURL string
	admin      string // host:port of the admin listener
	sd         *seeded
}

// startModeServer builds the binary, creates and seeds db and starts the
// server on it, logging to .bin/server-NAME.log. The caller stops the
// server, then calls drop (which removes db unless BENCH_KEEP_DB is set).
func startModeServer(ctx context.Context, cfg config, db, name string) (m *modeServer, drop func() error, err error) {
	bin, dbURL, drop, err := prepareRun(ctx, cfg.dir, cfg.root, cfg.adminURL, db, cfg.keepDB)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, drop())
		}
	}()
	binDir := filepath.Dir(bin)
	sd, err := seedAnalyzed(ctx, bin, binDir, dbURL)
	if err != nil {
		return nil, nil, err
	}
	addr, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	admin, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(serverEnv(dbURL, addr), "ADMIN_ADDR="+admin, gcTraceEnv)
	base := "http://" + addr
	srv, err := startProcess(ctx, "boxoffice serve", cmd, base, filepath.Join(binDir, "server-"+name+".log"), 60*time.Second, func() bool {
		_, err := checkOnce(endpoints(base, sd)[epEvents])
		return err == nil
	})
	if err != nil {
		return nil, nil, err
	}
	return &modeServer{server: srv, bin: bin, dbURL: dbURL, admin: admin, sd: sd}, drop, nil
}
