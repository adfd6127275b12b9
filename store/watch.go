package store

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
)

// CatalogChannel is the PostgreSQL channel the catalog triggers notify,
// with the schema of the changed table as payload.
const CatalogChannel = "boxoffice_catalog"

// TenantChannel is the PostgreSQL channel the triggers of accounts, apps,
// API keys and scanners notify, with the schema as payload.
const TenantChannel = "boxoffice_tenants"

// Watch tells readers of a group of tables whether they may have changed
// since they read them, so what they derived from them can be kept until
// then. It learns of changes from the database's own triggers, whoever
// writes: this server, another instance, or a command in another process.
// On PostgreSQL it hears them on the process's one Listener; on SQLite it
// reads the group's version row. Two groups are watched: the published
// catalog (NewCatalogWatch) and the tenants (NewTenantWatch).
type Watch struct {
	db       *DB
	listener *Listener
	channel  string
	// versionQuery reads SQLite's counter of the group.
	versionQuery string
	sub          sync.Once
	changes      atomic.Uint64
	// followers hear each notification before the version counts it.
	followers []func(Notification)
}

// NewCatalogWatch watches the catalog tables (venues, events, event dates
// and the catalog columns of tickets) of db through listener, subscribing
// at the first Version call, so commands that never read the catalog open
// nothing.
func NewCatalogWatch(db *DB, listener *Listener) *Watch {
	return &Watch{db: db, listener: listener, channel: CatalogChannel,
		versionQuery: "SELECT n FROM catalog_version WHERE id = 1"}
}

// NewTenantWatch watches accounts, apps, API keys and scanners: whatever
// decides whether a key opens the API and what its app allows.
func NewTenantWatch(db *DB, listener *Listener) *Watch {
	return &Watch{db: db, listener: listener, channel: TenantChannel,
		versionQuery: "SELECT n FROM tenant_version WHERE id = 1"}
}

// Version returns a number that changes whenever the watched tables may
// have changed. ok is false when nobody can tell (the PostgreSQL listener
// is between connections, or SQLite's counter cannot be read): the caller
// must then read the database and keep nothing.
func (w *Watch) Version(ctx context.Context) (version uint64, ok bool) {
	if w == nil {
		return 0, false
	}
	if w.db.Postgres() {
		w.sub.Do(func() { w.listener.Subscribe(w.channel, w.notified) })
		// Every notification, every Changed, and every time the listener
		// starts or stops listening (changes may have been missed
		// meanwhile), moves the version on. The epoch is read before the
		// flag: the listener moves it after setting the flag, so a version
		// from before a lost connection never pairs with true.
		v := w.changes.Load() + w.listener.Epoch()
		return v, w.listener.Listening()
	}
	var n uint64
	if err := w.db.NewRaw(w.versionQuery).Scan(ctx, &n); err != nil {
		return 0, false
	}
	return n + w.changes.Load(), true
}

// Changed moves the version on at once: a process calls it after it
// committed a change of the watched tables, so its own readers see the
// change on their next read instead of a NOTIFY's delivery time later.
func (w *Watch) Changed() {
	if w != nil {
		w.changes.Add(1)
	}
}

// Follow makes fn hear every notification of the watched channel (and
// every reconnection, Notification.Missed) before the version moves on for
// it, so a reader that sees a version has already been told what changed
// up to it. It must be called before the first Version; fn runs on the
// listener's goroutine and must not block. On SQLite it is never called.
func (w *Watch) Follow(fn func(Notification)) {
	w.followers = append(w.followers, fn)
}

// Session returns a number that moves on whenever changes may have gone
// unheard (the PostgreSQL listener lost or regained its connection): what
// a follower derived from notifications before it moved cannot be trusted
// after. It is always 0 on SQLite.
func (w *Watch) Session() uint64 {
	if w == nil || !w.db.Postgres() {
		return 0
	}
	return w.listener.Epoch()
}

// ChangePayload splits a catalog notification's payload: the schema it
// names and what changed in it ("e:ID", "v:ID", or "" when anything may
// have changed).
func ChangePayload(payload string) (schema, what string) {
	schema, what, _ = strings.Cut(payload, " ")
	return schema, what
}

// notified counts the changes of this process's schema; a missed stretch
// is counted by the listener's epoch.
func (w *Watch) notified(n Notification) {
	if schema, _ := ChangePayload(n.Payload); n.Missed || schema == n.Schema {
		for _, fn := range w.followers {
			fn(n)
		}
	}
	if schema, _ := ChangePayload(n.Payload); !n.Missed && schema == n.Schema {
		w.changes.Add(1)
	}
}
