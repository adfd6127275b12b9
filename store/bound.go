package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// AddQueryHook adds hook to Bun's query hooks and to the statements this
// package sends with bound parameters (queryBound), so a hook, such as the
// tests' statement counter, sees every statement.
func (db *DB) AddQueryHook(hook bun.QueryHook) {
	db.DB.AddQueryHook(hook)
	db.hooks = append(db.hooks, hook)
}

// row is one row of a queryBound answer.
type row interface{ Scan(dest ...any) error }

// queryBound runs query with its arguments bound as parameters ($1…), not
// written into its text as Bun does, and calls each for every row. It is
// for the hottest reads, whose arguments (a key's hash, date ids) would make
// every text new: a fixed text is parsed and planned once per PostgreSQL
// connection and then only executed, kept in pgx's statement cache. On
// PostgreSQL it goes to the pgx pool directly, without database/sql's
// connection bookkeeping and its goroutine per result. Query hooks see it
// as they see Bun's statements.
func (db *DB) queryBound(ctx context.Context, query string, args []any, each func(row) error) error {
	event := &bun.QueryEvent{DB: db.DB, Query: query, QueryTemplate: query, QueryArgs: args, StartTime: time.Now()}
	for _, h := range db.hooks {
		ctx = h.BeforeQuery(ctx, event)
	}
	err := db.eachRow(ctx, query, args, each)
	event.Err = err
	for i := len(db.hooks) - 1; i >= 0; i-- {
		db.hooks[i].AfterQuery(ctx, event)
	}
	return translate(err)
}

func (db *DB) eachRow(ctx context.Context, query string, args []any, each func(row) error) error {
	if db.Pool != nil {
		rows, err := db.Pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return eachOf(rows, each)
	}
	rows, err := db.DB.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return eachOf(rows, each)
}

// rowSet is what pgx's and database/sql's results share.
type rowSet interface {
	row
	Next() bool
	Err() error
}

func eachOf(rows rowSet, each func(row) error) error {
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
