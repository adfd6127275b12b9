package store

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// WebhookEventsChannel is the PostgreSQL channel the webhook_events
// trigger notifies, with "SCHEMA APP_ID ENVIRONMENT" as payload.
const WebhookEventsChannel = "boxoffice_webhook_events"

// WebhookWatch wakes readers of the webhook event stream when an event of
// their app and environment may have been written, by any instance. On
// PostgreSQL one connection of its own LISTENs to WebhookEventsChannel from
// the first Subscribe until Close, reconnecting with back-off; SQLite has
// no notifications, and its readers poll. A wake is only a hint to read:
// readers also read on a timer, so a lost notification delays an event and
// never loses it.
type WebhookWatch struct {
	db     *DB
	log    *slog.Logger
	start  sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	subs map[watchKey]map[chan struct{}]struct{}
}

type watchKey struct {
	appID int64
	env   string
}

// NewWebhookWatch returns a watch of db that opens nothing until the first
// Subscribe.
func NewWebhookWatch(db *DB, log *slog.Logger) *WebhookWatch {
	ctx, cancel := context.WithCancel(context.Background())
	return &WebhookWatch{db: db, log: log, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		subs: map[watchKey]map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a value whenever an event of
// the app in env may have been written (never, on SQLite), and a func that
// ends the subscription.
func (w *WebhookWatch) Subscribe(appID int64, env string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	if !w.db.Postgres() {
		return ch, func() {}
	}
	w.start.Do(func() { go w.listen() })
	k := watchKey{appID, env}
	w.mu.Lock()
	if w.subs[k] == nil {
		w.subs[k] = map[chan struct{}]struct{}{}
	}
	w.subs[k][ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.subs[k], ch)
		if len(w.subs[k]) == 0 {
			delete(w.subs, k)
		}
		w.mu.Unlock()
	}
}

// Close stops the listener, if it started, and waits for it.
func (w *WebhookWatch) Close() {
	w.cancel()
	w.start.Do(func() { close(w.done) })
	<-w.done
}

// wake signals the subscribers of k, or every subscriber when all is set
// (after a reconnection, notifications may have been missed).
func (w *WebhookWatch) wake(k watchKey, all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, chans := range w.subs {
		if !all && key != k {
			continue
		}
		for ch := range chans {
			select {
			case ch <- struct{}{}:
			default: // a wake is already pending
			}
		}
	}
}

func (w *WebhookWatch) listen() {
	defer close(w.done)
	backoff := 50 * time.Millisecond
	for w.ctx.Err() == nil {
		err := w.session(func() { backoff = 50 * time.Millisecond })
		if w.ctx.Err() != nil {
			return
		}
		w.log.Warn("webhook watch: listener lost; event streams poll until it is back", "error", err, "retry_in", backoff)
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// session runs one listening connection until it fails or the watch closes.
func (w *WebhookWatch) session(connected func()) error {
	ctx := w.ctx
	conn, err := pgx.ConnectConfig(ctx, w.db.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+WebhookEventsChannel); err != nil {
		return err
	}
	connected()
	w.wake(watchKey{}, true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		// SCHEMA APP_ID ENV, read from the right: a schema may hold spaces.
		fields := strings.Fields(n.Payload)
		if len(fields) < 3 {
			continue
		}
		env := fields[len(fields)-1]
		app, err := strconv.ParseInt(fields[len(fields)-2], 10, 64)
		if err != nil || strings.Join(fields[:len(fields)-2], " ") != schema {
			continue
		}
		w.wake(watchKey{app, env}, false)
	}
}
