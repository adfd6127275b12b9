package main

// saleio.go: what the flash sale makes PostgreSQL read and write — the
// counters that explain a window whose CPU per create moves (a working set
// that outgrows shared_buffers makes backends evict and write pages
// themselves) — and how many bytes each relation holds per order at the end.

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ioCounters are cluster and database counters read at a window's edges.
type ioCounters struct {
	backendWrites int64 // pg_stat_bgwriter.buffers_backend: pages a backend had to write out to find room
	cleanWrites   int64 // buffers_clean: pages the background writer wrote
	blksRead      int64 // pg_stat_database.blks_read of the sale's database: pages not found in shared_buffers
	blksHit       int64
}

func readIOCounters(ctx context.Context, adminURL, db string) (ioCounters, error) {
	var c ioCounters
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return c, err
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT b.buffers_backend, b.buffers_clean, d.blks_read, d.blks_hit
		FROM pg_stat_bgwriter AS b, pg_stat_database AS d WHERE d.datname = $1`, db).
		Scan(&c.backendWrites, &c.cleanWrites, &c.blksRead, &c.blksHit)
	return c, err
}

func (c ioCounters) sub(o ioCounters) ioCounters {
	return ioCounters{c.backendWrites - o.backendWrites, c.cleanWrites - o.cleanWrites, c.blksRead - o.blksRead, c.blksHit - o.blksHit}
}

// String gives a window's counters in MB (8 KB pages).
func (c ioCounters) String() string {
	mb := func(pages int64) string { return fmt.Sprintf("%.0f MB", float64(pages)*8/1024) }
	return fmt.Sprintf("backends wrote %s, bgwriter %s, read %s", mb(c.backendWrites), mb(c.cleanWrites), mb(c.blksRead))
}

// relSize is one relation of the sale's database at the end.
type relSize struct {
	name, kind string
	bytes      int64
}

// readRelSizes lists the largest tables and indexes of the database.
func readRelSizes(ctx context.Context, dbURL string, n int) ([]relSize, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT c.relname, CASE c.relkind WHEN 'i' THEN 'index' WHEN 't' THEN 'toast' ELSE 'table' END,
			pg_relation_size(c.oid)
		FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'i', 't')
		ORDER BY 3 DESC LIMIT $1`, n)
	if err != nil {
		return nil, err
	}
	var out []relSize
	for rows.Next() {
		var r relSize
		if err := rows.Scan(&r.name, &r.kind, &r.bytes); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
