package store

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// inlinedConnector hands out the pool's connections to database/sql so
// that a query without arguments runs in one round trip, as an unnamed
// statement (pgx.QueryExecModeExec), instead of being prepared first.
//
// Bun writes every argument into the statement's text, so its texts carry
// ids and hashes and are mostly new: under pgx's default mode each new text
// costs a Parse round trip, a slot in the connection's statement cache and,
// once the cache is full, a Deallocate of an older one. Reading one date's
// tickets (ids inlined) made three such prepares per request. PostgreSQL
// plans an unnamed statement once either way.
//
// Queries that do carry arguments (River's, whose JSON arguments need the
// parameter types a prepared statement describes) keep pgx's default mode.
// Exec without arguments already runs as one simple-protocol round trip in
// pgx, so only QueryContext changes.
type inlinedConnector struct{ driver.Connector }

func newInlinedConnector(pool *pgxpool.Pool) inlinedConnector {
	return inlinedConnector{stdlib.GetPoolConnector(pool)}
}

// Connect implements driver.Connector.
func (c inlinedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := dc.(*stdlib.Conn)
	if !ok {
		_ = dc.Close()
		return nil, fmt.Errorf("store: pgx stdlib returned a %T, not a *stdlib.Conn", dc)
	}
	return inlinedConn{sc}, nil
}

// inlinedConn is a pgx stdlib connection whose argument-less queries run
// unprepared; every other method is stdlib's own.
type inlinedConn struct{ *stdlib.Conn }

// execUnnamed, as the first argument, is the option pgx reads for the
// query's execution mode; pgx removes it before binding.
var execUnnamed = []driver.NamedValue{{Ordinal: 1, Value: pgx.QueryExecModeExec}}

// QueryContext implements driver.QueryerContext.
func (c inlinedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) == 0 {
		args = execUnnamed
	}
	return c.Conn.QueryContext(ctx, query, args)
}
