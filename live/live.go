// Package live pushes what changes to those who follow it: an order's
// status, and the stock of a date's tickets. It learns of changes from the
// database (the triggers of store's live migration: PostgreSQL NOTIFY on
// the process's one listening connection, store.Listener; on SQLite a
// change counter it polls), so a change any instance or process commits
// reaches every instance's subscribers. Each topic is read once per change
// however many follow it, every subscriber gets the latest value (a slow
// one skips values, never blocks anyone), and each app may hold only a
// bounded number of connections and subscriptions per instance.
package live

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// Config bounds and tunes a Hub.
type Config struct {
	// MaxSubscriptions is how many subscriptions one app (per environment)
	// may hold open on this instance.
	MaxSubscriptions int
	// MaxConnections is how many WebSocket connections one app (per
	// environment) may hold open on this instance.
	MaxConnections int
	// PollInterval is how often an SQLite database is asked whether
	// anything changed, while anyone subscribes.
	PollInterval time.Duration
}

// DefaultConfig returns the limits serve starts with.
func DefaultConfig() Config {
	return Config{MaxSubscriptions: 100, MaxConnections: 20, PollInterval: 250 * time.Millisecond}
}

// readTimeout bounds one read of a topic; retryAfter is the pause before
// a failed read is tried again.
const (
	readTimeout = 10 * time.Second
	retryAfter  = time.Second
)

// Topic is what a subscription follows.
type Topic struct{ Kind, Key string }

// OrderTopic is the status of the order with this reference.
func OrderTopic(reference string) Topic { return Topic{store.LiveOrder, reference} }

// StockTopic is the stock of the tickets of this event date.
func StockTopic(dateID int64) Topic { return Topic{store.LiveStock, strconv.FormatInt(dateID, 10)} }

// Tenant names the app (and environment) limits are counted for.
func Tenant(appID int64, env string) string { return env + ":" + strconv.FormatInt(appID, 10) }

// Hub fans changes out to subscribers.
type Hub struct {
	db       *store.DB
	listener *store.Listener
	cfg      Config
	log      *slog.Logger

	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // refreshes and the poller

	mu       sync.Mutex
	closed   bool
	topics   map[Topic]*topic
	tenants  map[string]*usage
	conns    map[*connection]struct{}
	stopPoll context.CancelFunc // nil when not polling
	polls    int                // polls done, for tests
	unlisten func()             // nil until the first subscription on PostgreSQL
}

// topic is one followed thing and its subscribers. All fields are
// guarded by Hub.mu; at most one refresh of a topic runs at a time.
type topic struct {
	key     Topic
	read    func(context.Context) (any, error)
	subs    map[*subscriber]struct{}
	running bool // a refresh is under way
	dirty   bool // it must read again when done
}

// subscriber is one subscription: what it was last sent and how to send.
type subscriber struct {
	tenant  string
	sent    bool
	last    any
	deliver func(any) // never blocks
	close   func()
}

type usage struct{ conns, subs int }

type connection struct{ cancel context.CancelFunc }

// New returns a hub over db. On PostgreSQL it hears changes through
// listener, to which it subscribes with the first subscription.
func New(db *store.DB, listener *store.Listener, cfg Config, log *slog.Logger) *Hub {
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{
		db: db, listener: listener, cfg: cfg, log: log, ctx: ctx, cancel: cancel,
		topics: map[Topic]*topic{}, tenants: map[string]*usage{}, conns: map[*connection]struct{}{},
	}
}

// Connect counts a WebSocket connection of tenant and returns its
// context, which Shutdown and Close end, and the release the connection
// must call when it closes (once or more).
// Errors: subscription_limit_reached when tenant holds MaxConnections.
func (h *Hub) Connect(ctx context.Context, tenant string) (context.Context, func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, errClosed
	}
	u := h.usage(tenant)
	if u.conns >= h.cfg.MaxConnections {
		h.forget(tenant)
		return nil, nil, apperr.New(apperr.SubscriptionLimitReached,
			"This app already has %d live connections open on this server; close one first.", h.cfg.MaxConnections)
	}
	u.conns++
	ctx, cancel := context.WithCancel(ctx)
	c := &connection{cancel: cancel}
	h.conns[c] = struct{}{}
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			cancel()
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.conns, c)
			h.tenants[tenant].conns--
			h.forget(tenant)
		})
	}, nil
}

var errClosed = errors.New("live: the hub is closed")

func (h *Hub) usage(tenant string) *usage {
	u := h.tenants[tenant]
	if u == nil {
		u = &usage{}
		h.tenants[tenant] = u
	}
	return u
}

// forget drops an idle tenant's counters.
func (h *Hub) forget(tenant string) {
	if u := h.tenants[tenant]; u != nil && u.conns == 0 && u.subs == 0 {
		delete(h.tenants, tenant)
	}
}

// Subscribe follows t for tenant until ctx ends, then closes the channel
// and frees everything the subscription held. The channel first receives
// t's current value, then each value that differs from the last one it
// received; a subscriber that has not taken a value when the next is
// ready finds only the newer one. read returns t's current value; it is
// called once per change for all of t's subscribers (the first
// subscriber's read serves them all), so it must not depend on who asks.
// Errors: subscription_limit_reached when tenant holds MaxSubscriptions.
func Subscribe[T any](ctx context.Context, h *Hub, tenant string, t Topic, read func(context.Context) (T, error)) (<-chan T, error) {
	ch := make(chan T, 1)
	s := &subscriber{tenant: tenant}
	s.deliver = func(v any) {
		select { // the older value no one took yet
		case <-ch:
		default:
		}
		ch <- v.(T) // room: the hub is the only sender
	}
	s.close = func() { close(ch) }
	readAny := func(ctx context.Context) (any, error) { return read(ctx) }
	if err := h.add(t, s, readAny); err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { h.remove(t, s) })
	return ch, nil
}

func (h *Hub) add(t Topic, s *subscriber, read func(context.Context) (any, error)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errClosed
	}
	u := h.usage(s.tenant)
	if u.subs >= h.cfg.MaxSubscriptions {
		h.forget(s.tenant)
		return apperr.New(apperr.SubscriptionLimitReached,
			"This app already has %d live subscriptions open on this server; complete one first.", h.cfg.MaxSubscriptions)
	}
	u.subs++
	tp := h.topics[t]
	if tp == nil {
		tp = &topic{key: t, read: read, subs: map[*subscriber]struct{}{}}
		h.topics[t] = tp
	}
	tp.subs[s] = struct{}{}
	h.startWatching()
	h.wakeLocked(tp) // its first value
	return nil
}

func (h *Hub) remove(t Topic, s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tp := h.topics[t]
	if tp == nil {
		return
	}
	if _, ok := tp.subs[s]; !ok {
		return
	}
	delete(tp.subs, s)
	s.close()
	h.tenants[s.tenant].subs--
	h.forget(s.tenant)
	if len(tp.subs) == 0 {
		delete(h.topics, t)
		if len(h.topics) == 0 && h.stopPoll != nil {
			h.stopPoll()
			h.stopPoll = nil
		}
	}
}

// notified hears the listener: a change of this schema, or that changes
// may have been missed, after which everything followed is read again.
func (h *Hub) notified(n store.Notification) {
	if n.Missed {
		h.changed("", "")
		return
	}
	if kind, key, ok := store.LiveChange(n); ok {
		h.changed(kind, key)
	}
}

// changed hears of a change of kind and key; kind "" says anything may
// have changed.
func (h *Hub) changed(kind, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if kind == "" {
		for _, tp := range h.topics {
			h.wakeLocked(tp)
		}
		return
	}
	if tp := h.topics[Topic{kind, key}]; tp != nil {
		h.wakeLocked(tp)
	}
}

// wakeKinds reads again every topic of these kinds.
func (h *Hub) wakeKinds(kinds map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, tp := range h.topics {
		if kinds[tp.key.Kind] {
			h.wakeLocked(tp)
		}
	}
}

// wakeLocked makes tp read again: now, or after the refresh under way.
func (h *Hub) wakeLocked(tp *topic) {
	if h.closed {
		return
	}
	if tp.running {
		tp.dirty = true
		return
	}
	tp.running = true
	h.wg.Add(1)
	go h.refresh(tp)
}

// refresh reads tp and hands each subscriber the value unless it already
// has it, until no change arrived meanwhile.
func (h *Hub) refresh(tp *topic) {
	defer h.wg.Done()
	for {
		ctx, cancel := context.WithTimeout(h.ctx, readTimeout)
		v, err := tp.read(ctx)
		cancel()
		h.mu.Lock()
		if err == nil {
			for s := range tp.subs {
				if !s.sent || !reflect.DeepEqual(s.last, v) {
					s.deliver(v)
					s.sent, s.last = true, v
				}
			}
		}
		if h.closed || len(tp.subs) == 0 || (err == nil && !tp.dirty) {
			tp.running = false
			h.mu.Unlock()
			return
		}
		tp.dirty = false
		h.mu.Unlock()
		if err != nil {
			h.log.Warn("live: reading a followed topic failed; retrying", "kind", tp.key.Kind, "error", err)
			select {
			case <-h.ctx.Done():
			case <-time.After(retryAfter):
			}
		}
	}
}

// startWatching makes sure changes are heard while anyone subscribes:
// PostgreSQL's listener (shared by the process; the hub subscribes once and
// stays until Close), or an SQLite poller that runs while there are topics.
// Called with h.mu held.
func (h *Hub) startWatching() {
	if h.db.Postgres() {
		if h.unlisten == nil {
			h.unlisten = h.listener.Subscribe(store.LiveChannel, h.notified)
		}
		return
	}
	if h.stopPoll != nil {
		return
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.stopPoll = cancel
	h.wg.Add(1)
	go h.poll(ctx)
}

// poll reads SQLite's change counters every PollInterval until ctx ends and
// wakes the topics of each kind whose counter moved. Every topic is read
// once the first counters are known, so nothing that committed before
// is missed.
func (h *Hub) poll(ctx context.Context) {
	defer h.wg.Done()
	t := time.NewTicker(h.cfg.PollInterval)
	defer t.Stop()
	var last map[string]uint64
	for {
		now, err := store.LiveVersions(ctx, h.db)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				h.log.Warn("live: reading the change counters failed", "error", err)
			}
		case last == nil:
			h.changed("", "")
			last = now
		default:
			moved := map[string]bool{}
			for kind, n := range now {
				if last[kind] != n {
					moved[kind] = true
				}
			}
			if len(moved) > 0 {
				h.wakeKinds(moved)
			}
			last = now
		}
		h.mu.Lock()
		h.polls++
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stats is what a hub holds, for tests and metrics.
type Stats struct {
	Topics, Subscriptions, Connections, Tenants int
	Polling                                     bool
}

// Stats returns what the hub holds now.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Stats{Topics: len(h.topics), Connections: len(h.conns), Tenants: len(h.tenants), Polling: h.stopPoll != nil}
	for _, tp := range h.topics {
		s.Subscriptions += len(tp.subs)
	}
	return s
}

// Shutdown ends every connection's context (their sockets close, and
// with them their subscriptions); the hub keeps serving new ones.
func (h *Hub) Shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.conns {
		c.cancel()
	}
}

// Close ends every connection, stops reading and polling, refuses new
// connections and subscriptions, and waits for its goroutines.
func (h *Hub) Close() {
	h.Shutdown()
	h.mu.Lock()
	h.closed = true
	unlisten := h.unlisten
	h.mu.Unlock()
	if unlisten != nil {
		unlisten()
	}
	h.cancel()
	h.wg.Wait()
}
