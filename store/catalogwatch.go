package store

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// CatalogChannel is the PostgreSQL channel the catalog triggers notify.
const CatalogChannel = "boxoffice_catalog"

// CatalogWatch tells readers of the catalog whether it may have changed
// since they read it, so what they derived from it can be kept until then.
// It learns of changes from the database's own triggers, whoever writes:
// this server, another instance, or `boxoffice catalog import` in another
// process. On PostgreSQL its connection is the process's one LISTEN
// connection: it also hands live changes (LiveChannel) to OnLive's function.
type CatalogWatch struct {
	db        *DB
	log       *slog.Logger
	version   atomic.Uint64
	listening atomic.Bool
	start     sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	onLive    atomic.Pointer[func(kind, key string)]
}

// NewCatalogWatch watches db from the first Version call until Close, so
// commands that never read the catalog open nothing. On PostgreSQL a
// connection of its own LISTENs to CatalogChannel, reconnecting with
// back-off when it is lost; SQLite needs no connection of its own.
func NewCatalogWatch(db *DB, log *slog.Logger) *CatalogWatch {
	ctx, cancel := context.WithCancel(context.Background())
	return &CatalogWatch{db: db, log: log, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Version returns a number that changes whenever the catalog may have
// changed. ok is false when nobody can tell (the PostgreSQL listener is
// between connections, or SQLite's counter cannot be read): the caller must
// then read the database and keep nothing.
func (w *CatalogWatch) Version(ctx context.Context) (version uint64, ok bool) {
	if w == nil {
		return 0, false
	}
	if w.db.Postgres() {
		w.Listen()
		// Read the version before the flag: a reconnect bumps the version
		// after setting the flag, so a stale version never pairs with true.
		v := w.version.Load()
		return v, w.listening.Load()
	}
	var n uint64
	if err := w.db.NewRaw("SELECT n FROM catalog_version WHERE id = 1").Scan(ctx, &n); err != nil {
		return 0, false
	}
	return n, true
}

// Listen starts the listening connection (PostgreSQL only) unless it has
// started; Version starts it too.
func (w *CatalogWatch) Listen() {
	if w.db.Postgres() {
		w.start.Do(func() { go w.listen(w.ctx, w.log) })
	}
}

// OnLive makes fn hear of every live change of this database's schema
// (kind LiveOrder or LiveStock, and its key) the listener receives, and of
// every (re)connection of the listener, with kind "": changes may have
// been missed while it was not listening. fn must not block.
func (w *CatalogWatch) OnLive(fn func(kind, key string)) { w.onLive.Store(&fn) }

func (w *CatalogWatch) live(kind, key string) {
	if fn := w.onLive.Load(); fn != nil {
		(*fn)(kind, key)
	}
}

// Close stops the listener, if it started, and waits for it.
func (w *CatalogWatch) Close() {
	w.cancel()
	w.start.Do(func() { close(w.done) })
	<-w.done
}

// listen holds a LISTEN connection open. Every notification, and every
// (re)connection, since changes may have been missed meanwhile, moves the
// version on.
func (w *CatalogWatch) listen(ctx context.Context, log *slog.Logger) {
	defer close(w.done)
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := w.session(ctx, func() { backoff = 50 * time.Millisecond })
		w.listening.Store(false)
		w.version.Add(1)
		if ctx.Err() != nil {
			return
		}
		log.Warn("catalog watch: listener lost; catalog reads go to the database until it is back", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// session runs one listening connection until it fails or ctx ends.
func (w *CatalogWatch) session(ctx context.Context, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, w.db.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// The payload is the schema of the changed table: deployments sharing a
	// database in schemas of their own do not wake each other.
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	// The catalog channel last: it is the statement pg_stat_activity shows
	// for this connection, by which tests find the listener.
	for _, ch := range []string{LiveChannel, CatalogChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			return err
		}
	}
	w.listening.Store(true)
	w.version.Add(1)
	w.live("", "")
	connected()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case CatalogChannel:
			if n.Payload == schema {
				w.version.Add(1)
			}
		case LiveChannel:
			// "KIND KEY SCHEMA": neither kind nor key holds a space.
			if parts := strings.SplitN(n.Payload, " ", 3); len(parts) == 3 && parts[2] == schema {
				w.live(parts[0], parts[1])
			}
		}
	}
}
