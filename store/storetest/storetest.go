// Package storetest opens fresh, migrated databases for tests: an SQLite
// file always, and a PostgreSQL database of its own whenever
// TEST_DATABASE_URL is set, each a copy of a template migrated once
// (template.go). It also counts the SQL statements a test makes.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Kinds returns the databases tests run on: "sqlite", plus "postgres" when
// TEST_DATABASE_URL is set.
func Kinds() []string {
	if os.Getenv("TEST_DATABASE_URL") != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// Each runs fn as a subtest on every database kind, each on a fresh database.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			fn(t, MustOpen(t, kind))
		})
	}
}

// MustOpen returns a fresh, migrated database of kind (a copy of the
// migrated template, template.go), removed when the test ends. PostgreSQL
// that cannot be reached fails the test: CI must not pass by skipping.
func MustOpen(tb testing.TB, kind string) *store.DB {
	tb.Helper()
	return OpenURL(tb, MigratedURL(tb, kind))
}

// FreshURL returns the DATABASE_URL of a fresh, empty (unmigrated)
// database of kind, removed when the test ends: for tests of migrating.
// Tests that open one database more than once, as a second process
// would, take MigratedURL.
func FreshURL(tb testing.TB, kind string) string {
	tb.Helper()
	switch kind {
	case "sqlite":
		return "sqlite://" + filepath.Join(tb.TempDir(), "test.db")
	case "postgres":
		return freshSchema(tb)
	}
	tb.Fatalf("storetest: unknown database kind %q", kind)
	return ""
}

// OpenURL opens and migrates the database at rawURL, closed when the test
// ends.
func OpenURL(tb testing.TB, rawURL string) *store.DB {
	tb.Helper()
	ctx := context.Background()
	kind := "sqlite"
	if !strings.HasPrefix(rawURL, "sqlite://") {
		kind = "postgres"
	}
	db, err := store.Open(ctx, rawURL)
	if err != nil {
		tb.Fatalf("storetest: open %s: %v", kind, err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := store.Migrate(ctx, db); err != nil {
		tb.Fatalf("storetest: migrate %s: %v", kind, err)
	}
	return db
}

// freshSchema creates a schema of the test's own in TEST_DATABASE_URL and
// returns a URL whose connections use it; the schema is dropped afterwards.
func freshSchema(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		tb.Fatal("storetest: TEST_DATABASE_URL is not set")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := store.Open(context.Background(), base)
	if err != nil {
		tb.Fatalf("storetest: PostgreSQL at TEST_DATABASE_URL is unreachable: %v", err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		tb.Fatalf("storetest: create schema: %v", err)
	}
	tb.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("storetest: TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	// Names the test's connections, so a test can find its own among those
	// of tests running beside it.
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Counter is a Bun query hook counting the statements that reach the database.
type Counter struct{ n atomic.Int64 }

// Count attaches a new Counter to db.
func Count(db *store.DB) *Counter {
	c := &Counter{}
	db.AddQueryHook(c)
	return c
}

// BeforeQuery implements bun.QueryHook.
func (c *Counter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery implements bun.QueryHook.
func (c *Counter) AfterQuery(context.Context, *bun.QueryEvent) { c.n.Add(1) }

// Reset zeroes the count.
func (c *Counter) Reset() { c.n.Store(0) }

// N returns the statements counted since the last Reset.
func (c *Counter) N() int { return int(c.n.Load()) }

// ChangesSettled waits until every order change committed before the call
// can be read from the changes feed (store.OrderChangesAfter). On
// PostgreSQL the feed holds back changes while an older transaction is
// open anywhere on the server, and tests running beside this one keep
// transactions open for moments: it takes a fresh transaction id, which is
// above those of every change committed so far, and waits until no
// transaction up to it is still running. SQLite never holds changes back.
func ChangesSettled(tb testing.TB, db *store.DB) {
	tb.Helper()
	if !db.Postgres() {
		return
	}
	ctx := context.Background()
	var xid string
	if err := db.NewRaw("SELECT pg_current_xact_id()::text").Scan(ctx, &xid); err != nil {
		tb.Fatalf("storetest: take a transaction id: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var past bool
		if err := db.NewRaw("SELECT pg_snapshot_xmin(pg_current_snapshot()) > ?::xid8", xid).Scan(ctx, &past); err != nil {
			tb.Fatalf("storetest: read the horizon: %v", err)
		}
		if past {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("storetest: a transaction older than %s is still open after 30s", xid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
