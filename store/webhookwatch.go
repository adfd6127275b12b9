package store

import (
	"strconv"
	"strings"
	"sync"
)

// WebhookEventsChannel is the PostgreSQL channel the webhook_events
// trigger notifies, with "SCHEMA APP_ID ENVIRONMENT" as payload.
const WebhookEventsChannel = "boxoffice_webhook_events"

// WebhookWatch wakes readers of the webhook event stream when an event of
// their app and environment may have been written, by any instance. On
// PostgreSQL it hears of them on the process's one Listener, subscribing at
// the first Subscribe; SQLite has no notifications, and its readers poll.
// A wake is only a hint to read: readers also read on a timer, so a lost
// notification delays an event and never loses it.
type WebhookWatch struct {
	db       *DB
	listener *Listener
	sub      sync.Once

	mu          sync.Mutex
	closed      bool
	unsubscribe func()
	subs        map[watchKey]map[chan struct{}]struct{}
}

type watchKey struct {
	appID int64
	env   string
}

// NewWebhookWatch returns a watch of db through listener that subscribes
// to nothing until the first Subscribe.
func NewWebhookWatch(db *DB, listener *Listener) *WebhookWatch {
	return &WebhookWatch{db: db, listener: listener, subs: map[watchKey]map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a value whenever an event of
// the app in env may have been written (never, on SQLite), and a func that
// ends the subscription.
func (w *WebhookWatch) Subscribe(appID int64, env string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	if !w.db.Postgres() {
		return ch, func() {}
	}
	w.sub.Do(func() {
		unsubscribe := w.listener.Subscribe(WebhookEventsChannel, w.notified)
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.closed {
			unsubscribe()
			return
		}
		w.unsubscribe = unsubscribe
	})
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

// Close stops hearing the listener; the listener itself is its owner's to
// close.
func (w *WebhookWatch) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.unsubscribe != nil {
		w.unsubscribe()
		w.unsubscribe = nil
	}
}

// notified wakes the subscribers of the event's app and environment, or
// every subscriber when notifications may have been missed.
func (w *WebhookWatch) notified(n Notification) {
	if n.Missed {
		w.wake(watchKey{}, true)
		return
	}
	// SCHEMA APP_ID ENV, read from the right: a schema may hold spaces.
	fields := strings.Fields(n.Payload)
	if len(fields) < 3 {
		return
	}
	env := fields[len(fields)-1]
	app, err := strconv.ParseInt(fields[len(fields)-2], 10, 64)
	if err != nil || strings.Join(fields[:len(fields)-2], " ") != n.Schema {
		return
	}
	w.wake(watchKey{app, env}, false)
}

// wake signals the subscribers of k, or every subscriber when all is set.
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
