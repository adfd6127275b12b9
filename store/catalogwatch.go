package store

import (
	"context"
	"sync"
	"sync/atomic"
)

// CatalogChannel is the PostgreSQL channel the catalog triggers notify,
// with the schema of the changed table as payload.
const CatalogChannel = "boxoffice_catalog"

// CatalogWatch tells readers of the catalog whether it may have changed
// since they read it, so what they derived from it can be kept until then.
// It learns of changes from the database's own triggers, whoever writes:
// this server, another instance, or `boxoffice catalog import` in another
// process. On PostgreSQL it hears them on the process's one Listener.
type CatalogWatch struct {
	db       *DB
	listener *Listener
	sub      sync.Once
	changes  atomic.Uint64
}

// NewCatalogWatch watches db through listener, subscribing at the first
// Version call, so commands that never read the catalog open nothing.
func NewCatalogWatch(db *DB, listener *Listener) *CatalogWatch {
	return &CatalogWatch{db: db, listener: listener}
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
		w.sub.Do(func() { w.listener.Subscribe(CatalogChannel, w.notified) })
		// Every notification, and every time the listener starts or stops
		// listening (changes may have been missed meanwhile), moves the
		// version on. The epoch is read before the flag: the listener moves
		// it after setting the flag, so a version from before a lost
		// connection never pairs with true.
		v := w.changes.Load() + w.listener.Epoch()
		return v, w.listener.Listening()
	}
	var n uint64
	if err := w.db.NewRaw("SELECT n FROM catalog_version WHERE id = 1").Scan(ctx, &n); err != nil {
		return 0, false
	}
	return n, true
}

// notified counts the catalog changes of this process's schema; a missed
// stretch is counted by the listener's epoch.
func (w *CatalogWatch) notified(n Notification) {
	if !n.Missed && n.Payload == n.Schema {
		w.changes.Add(1)
	}
}
