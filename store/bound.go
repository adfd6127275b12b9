package store

import (
	"context"
	"database/sql"
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

// queryBound runs query with its arguments bound as parameters ($1…), not
// written into its text as Bun does. It is for the hottest reads, whose
// arguments (a key's hash, date ids) would make every text new: a fixed
// text is parsed and planned once per PostgreSQL connection and then only
// executed, kept in pgx's statement cache. Query hooks see it as they see
// Bun's statements.
func (db *DB) queryBound(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	event := &bun.QueryEvent{DB: db.DB, Query: query, QueryTemplate: query, QueryArgs: args, StartTime: time.Now()}
	for _, h := range db.hooks {
		ctx = h.BeforeQuery(ctx, event)
	}
	rows, err := db.DB.DB.QueryContext(ctx, query, args...)
	event.Err = err
	for i := len(db.hooks) - 1; i >= 0; i-- {
		db.hooks[i].AfterQuery(ctx, event)
	}
	return rows, err
}
