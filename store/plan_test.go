package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// planTickets is how many tickets TestLookupsByUniqueValue issues on one
// date: a date sold out in a flash sale, large enough that a lookup
// which filters the date's tickets instead of reaching one by its unique
// value costs milliseconds.
const planTickets = 21000

// TestLookupsByUniqueValue: the statements that find one row by a unique
// value at every scan (the ticket by its code, the door's move, the
// scanner's key) reach it through that value's index whatever the planner's statistics say:
// before the table was ever analysed (a date sold out before autoanalyze
// ran, or autovacuum off) and after ANALYZE.
func TestLookupsByUniqueValue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := storetest.MustCatalog(t, db, nil)
		app := storetest.MustApp(t, db)
		o := storetest.MustOrder(t, db, app, c, "ord_plan")
		if db.Postgres() {
			for _, table := range []string{"issued_tickets", "scanners"} {
				_, err := db.ExecContext(ctx, "ALTER TABLE "+table+" SET (autovacuum_enabled = false)")
				require.NoError(t, err)
			}
		}
		// SQLite's planner weighs no row counts before ANALYZE, and its
		// pure-Go driver writes slowly under the race detector: a tenth of
		// the rows shows its plans as well.
		n := planTickets
		if !db.Postgres() {
			n = planTickets / 10
		}
		now := time.Now().UTC()
		_, err := db.NewRaw(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
			INSERT INTO issued_tickets (public_id, code, order_id, app_id, environment, ticket_id, ticket_name, event_id,
				event_date_id, position, tickets_in_order, status, inside, created_at, updated_at)
			SELECT 'itk_plan' || n, 'PLAN' || n, ?, ?, 'live', ?, 'Regular', ?, ?, n, ?, 'valid', FALSE, ?, ?
			FROM g`, n, o.ID, app.ID, c.Ticket.ID, c.Event.ID, c.Date.ID, n, now, now).Exec(ctx)
		require.NoError(t, err)
		_, err = db.NewRaw(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
			INSERT INTO scanners (name, event_id, environment, key_hash, hint, created_at)
			SELECT 'Gate ' || n, ?, 'live', 'hash' || n, 'h', ? FROM g`, n, c.Event.ID, now).Exec(ctx)
		require.NoError(t, err)

		m := store.DoorMove{Code: "PLAN777", Environment: store.EnvLive, EventID: c.Event.ID, EventDateID: c.Date.ID,
			ScannedAt: now, Now: now}
		entry, exit := m, m
		entry.Entry = true
		type lookup struct {
			name, query string
			args        []any
			index       string // the index that must find the issued_tickets row, or the table's
			table       string
		}
		lookups := []lookup{
			{name: "TicketByCode", table: "issued_tickets", index: "issued_tickets_code_key",
				query: "SELECT * FROM issued_tickets WHERE code = ?", args: []any{"PLAN777"}},
			{name: "ScannerKey", table: "scanners", index: "scanners_key_hash_key",
				query: "SELECT id FROM scanners WHERE key_hash = ?", args: []any{"hash777"}},
		}
		for _, mv := range []struct {
			name string
			m    store.DoorMove
		}{{"DoorEntry", entry}, {"DoorExit", exit}} {
			q, args := store.DoorMoveQuery(mv.m, db.Postgres())
			lookups = append(lookups, lookup{name: mv.name, query: q, args: args, table: "issued_tickets", index: "issued_tickets_code_key"})
		}
		for _, stats := range []string{"NoStatistics", "Analyzed"} {
			if stats == "Analyzed" {
				_, err := db.ExecContext(ctx, "ANALYZE")
				require.NoError(t, err)
			} else if db.Postgres() {
				var n int
				require.NoError(t, db.NewRaw("SELECT COUNT(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'issued_tickets'").
					Scan(ctx, &n))
				require.Zero(t, n, "the test needs a table the planner has no statistics of")
			}
			for _, l := range lookups {
				t.Run(stats+"/"+l.name, func(t *testing.T) {
					require.Equal(t, []string{l.index}, indexesOf(t, db, l.table, l.query, l.args))
				})
			}
		}
	})
}

// indexesOf returns how a statement's plan reads table: the name of each
// index it scans it with, or "Seq Scan".
func indexesOf(t *testing.T, db *store.DB, table, q string, args []any) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	if db.Postgres() {
		var doc string
		require.NoError(t, db.NewRaw("EXPLAIN (FORMAT JSON) "+q, args...).Scan(ctx, &doc))
		var plans []struct{ Plan map[string]any }
		require.NoError(t, json.Unmarshal([]byte(doc), &plans))
		var walk func(n map[string]any)
		walk = func(n map[string]any) {
			if n["Relation Name"] == table && n["Node Type"] != "ModifyTable" {
				if name, ok := n["Index Name"].(string); ok {
					out = append(out, name)
				} else {
					out = append(out, fmt.Sprint(n["Node Type"]))
				}
			}
			children, _ := n["Plans"].([]any)
			for _, ch := range children {
				walk(ch.(map[string]any))
			}
		}
		walk(plans[0].Plan)
		return out
	}
	rows, err := db.QueryContext(ctx, db.NewRaw("EXPLAIN QUERY PLAN "+q, args...).String())
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		// "SEARCH issued_tickets USING INDEX name (…)", "SCAN issued_tickets"
		f := strings.Fields(detail)
		if len(f) < 2 || f[1] != table {
			continue
		}
		if i := strings.Index(detail, "INDEX "); i >= 0 {
			out = append(out, strings.Fields(detail[i+len("INDEX "):])[0])
		} else {
			out = append(out, "Seq Scan")
		}
	}
	require.NoError(t, rows.Err())
	return out
}
