package store

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// listenChannels are the channels the service's triggers notify, in the
// order the listener LISTENs to them. The catalog channel comes last: its
// LISTEN is the statement pg_stat_activity shows for the connection, by
// which tests and operators find the listener.
var listenChannels = []string{LiveChannel, WebhookEventsChannel, TenantChannel, CatalogChannel}

// Listener is the process's one PostgreSQL LISTEN connection. It listens
// to every channel the service's triggers notify (CatalogChannel, TenantChannel,
// LiveChannel, WebhookEventsChannel) and hands each notification, from one
// goroutine, to the subscribers of its channel, so a process holds one
// connection however many caches, hubs and streams follow changes. It
// connects at the first Subscribe, so commands that follow nothing open
// nothing, and runs until Close, reconnecting with back-off when the
// connection is lost. Notifications sent while it is not listening are
// lost: after every (re)connection each subscriber is told so
// (Notification.Missed) and reads again. SQLite has no notifications: there
// Subscribe starts nothing and readers poll.
type Listener struct {
	db  *DB
	log *slog.Logger

	start  sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	listening atomic.Bool
	epoch     atomic.Uint64

	mu   sync.Mutex
	subs map[string]map[*func(Notification)]struct{}
}

// Notification is what a subscriber hears: one notification of its
// channel, or the news that some may have been missed.
type Notification struct {
	// Payload is what the trigger sent; empty when Missed.
	Payload string
	// Schema is the schema of this process's tables. Payloads name the
	// schema of the table that changed, and deployments sharing a database
	// in schemas of their own must not wake each other.
	Schema string
	// Missed says the listener has just (re)connected: whatever was
	// notified while it was not listening is lost, so the subscriber must
	// read again what it follows.
	Missed bool
}

// NewListener returns the listener of db; it opens nothing until the first
// Subscribe.
func NewListener(db *DB, log *slog.Logger) *Listener {
	ctx, cancel := context.WithCancel(context.Background())
	return &Listener{db: db, log: log, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		subs: map[string]map[*func(Notification)]struct{}{}}
}

// Subscribe makes fn hear every notification of channel (one of
// CatalogChannel, LiveChannel, WebhookEventsChannel), and every
// (re)connection of the listener, until the returned func is called;
// it starts the listener unless it has started. fn is called from the
// listener's goroutine and must not block, nor call the listener; it may
// be called once more while unsubscribing. On SQLite nothing is ever
// notified and fn is never called.
func (l *Listener) Subscribe(channel string, fn func(Notification)) (unsubscribe func()) {
	if !slices.Contains(listenChannels, channel) {
		panic(fmt.Sprintf("store: no trigger notifies channel %q", channel))
	}
	if !l.db.Postgres() {
		return func() {}
	}
	key := &fn
	l.mu.Lock()
	if l.subs[channel] == nil {
		l.subs[channel] = map[*func(Notification)]struct{}{}
	}
	l.subs[channel][key] = struct{}{}
	l.mu.Unlock()
	l.start.Do(func() { go l.run() })
	return func() {
		l.mu.Lock()
		delete(l.subs[channel], key)
		l.mu.Unlock()
	}
}

// Listening reports whether the listener is connected and listening: when
// it is not, changes may go unnoticed and nothing derived from the
// database may be kept.
func (l *Listener) Listening() bool { return l.listening.Load() }

// Epoch returns a number that moves on whenever the listener starts or
// stops listening, after Listening has changed: a reader that reads it
// before Listening never pairs a number from before a lost connection with
// true.
func (l *Listener) Epoch() uint64 { return l.epoch.Load() }

// Close stops the listener, if it started, and waits for it.
func (l *Listener) Close() {
	l.cancel()
	l.start.Do(func() { close(l.done) })
	<-l.done
}

// subscribers returns channel's subscribers, or every subscriber when
// channel is empty, so they are called without holding l.mu.
func (l *Listener) subscribers(channel string) []func(Notification) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []func(Notification)
	for ch, fns := range l.subs {
		if channel != "" && ch != channel {
			continue
		}
		for fn := range fns {
			out = append(out, *fn)
		}
	}
	return out
}

// run holds the listening connection open until Close, reconnecting with
// back-off from 50 ms up to 5 s.
func (l *Listener) run() {
	defer close(l.done)
	backoff := 50 * time.Millisecond
	for l.ctx.Err() == nil {
		err := l.session(func() { backoff = 50 * time.Millisecond })
		l.listening.Store(false)
		l.epoch.Add(1)
		if l.ctx.Err() != nil {
			return
		}
		l.log.Warn("listener lost; catalog reads go to the database and live changes and event streams wait for their polls until it is back",
			"error", err, "retry_in", backoff)
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// session runs one listening connection until it fails or the listener
// closes, handing out what it hears.
func (l *Listener) session(connected func()) error {
	ctx := l.ctx
	conn, err := pgx.ConnectConfig(ctx, l.db.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	for _, ch := range listenChannels {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			return err
		}
	}
	l.listening.Store(true)
	l.epoch.Add(1)
	connected()
	for _, fn := range l.subscribers("") {
		fn(Notification{Schema: schema, Missed: true})
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		for _, fn := range l.subscribers(n.Channel) {
			fn(Notification{Payload: n.Payload, Schema: schema})
		}
	}
}
