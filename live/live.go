// Package live pushes what changes to those who follow it: an order's
// status, the stock of a date's tickets, and the scans at a date's door.
// It learns of changes from the database (the triggers of store's live
// migrations: PostgreSQL NOTIFY on the process's one listening
// connection, store.Listener; on SQLite a change counter it polls), so a
// change any instance or process commits reaches every instance's
// subscribers. Each topic is read once per change
// however many follow it, every subscriber gets the latest value (a slow
// one skips values, never blocks anyone), and each app, each account's
// apps together, and each scanner key on its own, may hold only a bounded
// number of connections and subscriptions per instance. A topic may
// instead be watched (Watch): its followers are only woken, and each reads
// its own way forward, so none skips anything.
package live

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
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
	// AccountMultiple bounds an account's apps together (per environment)
	// to this many times MaxSubscriptions and MaxConnections, so more apps
	// do not buy more; zero means DefaultConfig's.
	AccountMultiple int
	// PollInterval is how often an SQLite database is asked whether
	// anything changed, while anyone subscribes.
	PollInterval time.Duration
}

// DefaultConfig returns the limits serve starts with.
func DefaultConfig() Config {
	return Config{MaxSubscriptions: 100, MaxConnections: 20, AccountMultiple: 3, PollInterval: 250 * time.Millisecond}
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

// CheckInTopic is the scans of this event date in env: it changes with
// every scan recorded, on any instance. It is watched (Watch), not
// subscribed: each watcher reads the scans after the last one it sent
// (checkin.Feed), so none is skipped however fast they come.
func CheckInTopic(env string, dateID int64) Topic {
	return Topic{store.LiveCheckIn, store.LiveCheckInKey(env, dateID)}
}

// Tenant is whom connections and subscriptions are counted for: an app in
// one environment, and the account that owns it in that environment; or
// a door's scanner key, which is its own account.
type Tenant struct {
	App, Account string
	// scanner marks a scanner key's tenant, for the refusals' wording.
	scanner bool
}

// TenantOf names the tenant of an app of an account in env.
func TenantOf(accountID, appID int64, env string) Tenant {
	return Tenant{App: env + ":" + strconv.FormatInt(appID, 10), Account: env + ":" + strconv.FormatInt(accountID, 10)}
}

// ScannerTenant names the tenant of a scanner key: each door device is
// bounded on its own, so one scanner's sockets never count against
// another's, nor any app's (its names cannot be an app's).
func ScannerTenant(scannerID int64) Tenant {
	key := "scanner:" + strconv.FormatInt(scannerID, 10)
	return Tenant{App: key, Account: key, scanner: true}
}

// Hub fans changes out to subscribers.
type Hub struct {
	db       *store.DB
	listener *store.Listener
	cfg      Config
	log      *slog.Logger

	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // refreshes and the poller

	ticks atomic.Uint64 // the values of watched topics

	mu       sync.Mutex
	closed   bool
	topics   map[Topic]*topic
	tenants  map[string]*usage // by Tenant.App
	accounts map[string]*usage // by Tenant.Account
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
	tenant  Tenant
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
	if cfg.AccountMultiple <= 0 {
		cfg.AccountMultiple = DefaultConfig().AccountMultiple
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{
		db: db, listener: listener, cfg: cfg, log: log, ctx: ctx, cancel: cancel,
		topics: map[Topic]*topic{}, tenants: map[string]*usage{}, accounts: map[string]*usage{},
		conns: map[*connection]struct{}{},
	}
	return h
}

// Connect counts a WebSocket connection of tenant and returns its
// context, which Shutdown and Close end, and the release the connection
// must call when it closes (once or more).
// Errors: subscription_limit_reached when tenant's app holds
// MaxConnections, or its account AccountMultiple times as many.
func (h *Hub) Connect(ctx context.Context, tenant Tenant) (context.Context, func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, errClosed
	}
	app, acc := h.usage(tenant)
	if err := h.full(tenant, app.conns, acc.conns, h.cfg.MaxConnections, "connections", "close one"); err != nil {
		h.forget(tenant)
		return nil, nil, err
	}
	app.conns++
	acc.conns++
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
			h.tenants[tenant.App].conns--
			h.accounts[tenant.Account].conns--
			h.forget(tenant)
		})
	}, nil
}

var errClosed = errors.New("live: the hub is closed")

// usage returns the counters of tenant's app and of its account.
func (h *Hub) usage(tenant Tenant) (app, account *usage) {
	get := func(m map[string]*usage, key string) *usage {
		u := m[key]
		if u == nil {
			u = &usage{}
			m[key] = u
		}
		return u
	}
	return get(h.tenants, tenant.App), get(h.accounts, tenant.Account)
}

// forget drops the counters of tenant's app and account when idle.
func (h *Hub) forget(tenant Tenant) {
	drop := func(m map[string]*usage, key string) {
		if u := m[key]; u != nil && u.conns == 0 && u.subs == 0 {
			delete(m, key)
		}
	}
	drop(h.tenants, tenant.App)
	drop(h.accounts, tenant.Account)
}

// full refuses one more connection or subscription (what) of tenant when
// its app (or scanner key) already holds most of them, or its account
// AccountMultiple times most.
// Errors: subscription_limit_reached.
func (h *Hub) full(tenant Tenant, app, account, most int, what, then string) error {
	if app >= most {
		who := "This app"
		if tenant.scanner {
			who = "This scanner key"
		}
		return apperr.New(apperr.SubscriptionLimitReached,
			"%s already has %d live %s open on this server; %s first.", who, most, what, then)
	}
	if most *= h.cfg.AccountMultiple; account >= most {
		return apperr.New(apperr.SubscriptionLimitReached,
			"This account's apps already have %d live %s open on this server; %s first.", most, what, then)
	}
	return nil
}

// Subscribe follows t for tenant until ctx ends, then closes the channel
// and frees everything the subscription held. The channel first receives
// t's current value, then each value that differs from the last one it
// received; a subscriber that has not taken a value when the next is
// ready finds only the newer one. read returns t's current value; it is
// called once per change for all of t's subscribers (the first
// subscriber's read serves them all), so it must not depend on who asks.
// Errors: subscription_limit_reached when tenant's app holds
// MaxSubscriptions, or its account AccountMultiple times as many.
func Subscribe[T any](ctx context.Context, h *Hub, tenant Tenant, t Topic, read func(context.Context) (T, error)) (<-chan T, error) {
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

// Watch follows t for tenant until ctx ends, then closes the channel and
// frees everything the watch held, as Subscribe does, but carries no
// value: the channel receives once at the start and once after each
// change of t heard since (changes that come while the receiver is busy
// make one). For topics whose followers each read their own way forward
// (CheckInTopic); a topic is either watched or subscribed, never both.
// Errors: subscription_limit_reached, as for Subscribe.
func Watch(ctx context.Context, h *Hub, tenant Tenant, t Topic) (<-chan struct{}, error) {
	ch := make(chan struct{}, 1)
	s := &subscriber{tenant: tenant}
	s.deliver = func(any) {
		select {
		case ch <- struct{}{}:
		default: // one not taken yet stands for this one too
		}
	}
	s.close = func() { close(ch) }
	if err := h.add(t, s, h.tick); err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { h.remove(t, s) })
	return ch, nil
}

// tick is the value of a watched topic: a number no read returned before,
// so every read after a change reaches every watcher.
func (h *Hub) tick(context.Context) (any, error) { return h.ticks.Add(1), nil }

func (h *Hub) add(t Topic, s *subscriber, read func(context.Context) (any, error)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errClosed
	}
	app, acc := h.usage(s.tenant)
	if err := h.full(s.tenant, app.subs, acc.subs, h.cfg.MaxSubscriptions, "subscriptions", "complete one"); err != nil {
		h.forget(s.tenant)
		return err
	}
	app.subs++
	acc.subs++
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
	h.tenants[s.tenant.App].subs--
	h.accounts[s.tenant.Account].subs--
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
