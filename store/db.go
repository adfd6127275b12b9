// Package store keeps Boxoffice's data: Bun models, versioned migrations and
// the queries the services make, on PostgreSQL (production) or an embedded
// SQLite file (zero set-up). Functions take bun.IDB so a service can compose
// them inside one transaction; driver errors are translated into ErrNotFound
// and ErrConflict before they leave this package.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
)

// DefaultURL is the embedded database used when DATABASE_URL is unset.
const DefaultURL = "sqlite://" + defaultSQLitePath

const defaultSQLitePath = "./data/boxoffice.db"

// DB is an open database: Bun on top, plus the PostgreSQL pool when there is one.
type DB struct {
	*bun.DB
	// Pool is the pgx pool behind a PostgreSQL database; nil on SQLite.
	Pool *pgxpool.Pool

	hooks []bun.QueryHook // AddQueryHook's, for queryBound
}

// Postgres reports whether the database is PostgreSQL.
func (db *DB) Postgres() bool { return db.Dialect().Name() == dialect.PG }

// Open connects to the database DATABASE_URL names: sqlite://PATH or
// postgres://…; it does not migrate.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	if rawURL == "" {
		rawURL = DefaultURL
	}
	switch {
	case strings.HasPrefix(rawURL, "sqlite://"):
		return openSQLite(strings.TrimPrefix(rawURL, "sqlite://"))
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		return openPostgres(ctx, rawURL)
	default:
		return nil, fmt.Errorf("unsupported DATABASE_URL %q: want sqlite://PATH or postgres://…", redactURL(rawURL))
	}
}

var sqlitePathEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

func openSQLite(path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("DATABASE_URL sqlite:// needs a file path")
	}
	if path != ":memory:" {
		if err := prepareSQLiteFiles(path); err != nil {
			return nil, err
		}
	}
	// The path goes into a file: URI, where '#' would end it and '?' start
	// its query; SQLite decodes %XX, so escaped, a path such as Go's test
	// directory of a subtest named "sqlite#01" is the file opened, not a
	// shorter one that other runs share.
	dsn := "file:" + sqlitePathEscaper.Replace(path) + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)" +
		"&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	// SQLite has one writer. One connection serialises every statement in the
	// process, which keeps transactions free of SQLITE_BUSY and is the driver's
	// advice for job queues sharing the handle.
	sqldb.SetMaxOpenConns(1)
	sqldb.SetConnMaxIdleTime(0)
	db := &DB{DB: bun.NewDB(sqldb, sqlitedialect.New())}
	if err := db.Ping(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if path != ":memory:" {
		// The first connection switched to WAL and made -wal and -shm.
		if err := tightenSQLiteFiles(path); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	return db, nil
}

func openPostgres(ctx context.Context, rawURL string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL %q: %w", redactURL(rawURL), err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	// Only statements with bound parameters are prepared and cached: River's
	// and this package's queryBound ones, a few dozen fixed texts. Bun's,
	// whose arguments are inlined and so make most texts new, run unnamed
	// (inlinedConnector). 512 per connection once held about 35 MB.
	cfg.ConnConfig.StatementCacheCapacity = 64
	cfg.ConnConfig.DescriptionCacheCapacity = 64
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect postgres %s: %w", redactURL(rawURL), err)
	}
	// As stdlib.OpenDBFromPool: the pool, not database/sql, keeps idle
	// connections.
	sqldb := sql.OpenDB(newInlinedConnector(pool))
	sqldb.SetMaxIdleConns(0)
	return &DB{DB: bun.NewDB(sqldb, pgdialect.New()), Pool: pool}, nil
}

// Close closes Bun's handle and the pool behind it.
func (db *DB) Close() error {
	err := db.DB.Close()
	if db.Pool != nil {
		db.Pool.Close()
	}
	return err
}

// redactURL drops the password from a connection URL so it can be logged.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

// AutovacuumWarning is what serve logs when PostgreSQL runs without
// autovacuum.
const AutovacuumWarning = "PostgreSQL runs with autovacuum off: nothing removes dead rows or refreshes the planner's " +
	"statistics, so plans made while orders was small (a sequential scan for each order's foreign-key checks) stay " +
	"as it grows and checkout slows with every order; turn autovacuum on (docs/operator.md, Production)"

// AutovacuumOff reports whether the PostgreSQL server has autovacuum
// turned off; on SQLite it is false.
func AutovacuumOff(ctx context.Context, db *DB) (bool, error) {
	if !db.Postgres() {
		return false, nil
	}
	var on string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('autovacuum')").Scan(&on); err != nil {
		return false, fmt.Errorf("read autovacuum: %w", err)
	}
	return on == "off", nil
}
