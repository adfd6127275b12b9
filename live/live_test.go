package live

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// newHub is a hub over a fresh SQLite database whose poller runs but
// never sees a change (nothing writes): the test says what changed.
func newHub(t *testing.T, cfg Config) *Hub {
	t.Helper()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Hour
	}
	h := New(storetest.MustOpen(t, "sqlite"), nil, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(h.Close)
	return h
}

// source is a topic's value that the test moves, counting reads.
type source struct {
	mu    sync.Mutex
	v     int
	err   error
	reads atomic.Int64
}

func (s *source) read(context.Context) (int, error) {
	s.reads.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v, s.err
}

func (s *source) set(v int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.v, s.err = v, err
}

func recv(t *testing.T, ch <-chan int) int {
	t.Helper()
	select {
	case v, ok := <-ch:
		require.True(t, ok, "channel closed")
		return v
	case <-testwait.After(t, 10*time.Second):
		t.Fatal("no value")
		return 0
	}
}

// settle waits until the poller's first poll (which reads every topic
// again) is done and no read is under way.
func settle(t *testing.T, h *Hub) {
	t.Helper()
	testwait.For(t, 10*time.Second, "the hub to settle", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.polls == 0 {
			return false
		}
		for _, tp := range h.topics {
			if tp.running {
				return false
			}
		}
		return true
	})
}

// Tenants of the tests: app 1 of account 1, in each environment.
var (
	testApp = TenantOf(1, 1, "test")
	liveApp = TenantOf(1, 1, "live")
)

func TestHub(t *testing.T) {
	t.Parallel()
	t.Run("OneReadPerChangeForAll", func(t *testing.T) {
		t.Parallel()
		h := newHub(t, DefaultConfig())
		src := &source{v: 1}
		var chans []<-chan int
		for range 5 {
			ch, err := Subscribe(context.Background(), h, testApp, OrderTopic("sbx_a"), src.read)
			require.NoError(t, err)
			chans = append(chans, ch)
		}
		for _, ch := range chans {
			require.Equal(t, 1, recv(t, ch), "the current value first")
		}
		settle(t, h)
		before := src.reads.Load()
		src.set(2, nil)
		h.changed(OrderTopic("sbx_a").Kind, "sbx_a")
		for _, ch := range chans {
			require.Equal(t, 2, recv(t, ch))
		}
		settle(t, h)
		require.Equal(t, before+1, src.reads.Load(), "five subscribers, one read")

		// A change of another topic reads nothing of this one; a value
		// that did not change is not sent again.
		h.changed(OrderTopic("sbx_b").Kind, "sbx_b")
		h.changed(StockTopic(7).Kind, "7")
		h.changed(OrderTopic("sbx_a").Kind, "sbx_a")
		settle(t, h)
		require.Equal(t, before+2, src.reads.Load())
		for _, ch := range chans {
			require.Empty(t, ch)
		}
	})
	t.Run("LatestWins", func(t *testing.T) {
		t.Parallel()
		h := newHub(t, DefaultConfig())
		src := &source{}
		ch, err := Subscribe(context.Background(), h, testApp, StockTopic(1), src.read)
		require.NoError(t, err)
		settle(t, h)
		for v := 1; v <= 10; v++ {
			src.set(v, nil)
			h.changed(StockTopic(1).Kind, "1")
			settle(t, h)
		}
		require.Equal(t, 10, recv(t, ch), "a slow subscriber finds the newest value only")
		require.Empty(t, ch)
	})
	t.Run("ReadErrorsRetry", func(t *testing.T) {
		t.Parallel()
		h := newHub(t, DefaultConfig())
		src := &source{err: errors.New("database down")}
		ch, err := Subscribe(context.Background(), h, testApp, StockTopic(1), src.read)
		require.NoError(t, err)
		testwait.For(t, 10*time.Second, "retried", func() bool { return src.reads.Load() >= 2 })
		src.set(5, nil)
		require.Equal(t, 5, recv(t, ch))
	})
	t.Run("Limits", func(t *testing.T) {
		t.Parallel()
		h := newHub(t, Config{MaxSubscriptions: 2, MaxConnections: 1})
		src := &source{}
		ctx, cancel := context.WithCancel(context.Background())
		a, err := Subscribe(ctx, h, liveApp, StockTopic(1), src.read)
		require.NoError(t, err)
		_, err = Subscribe(context.Background(), h, liveApp, StockTopic(2), src.read)
		require.NoError(t, err)
		_, err = Subscribe(context.Background(), h, liveApp, StockTopic(3), src.read)
		ae := apperr.From(err)
		require.Equal(t, apperr.SubscriptionLimitReached, ae.Code)
		require.Equal(t, 429, ae.Status())
		require.Equal(t, "This app already has 2 live subscriptions open on this server; complete one first.", ae.Message)
		_, err = Subscribe(context.Background(), h, testApp, StockTopic(3), src.read)
		require.NoError(t, err, "another tenant")

		cancel()
		for range a { // drained and closed
		}
		_, err = Subscribe(context.Background(), h, liveApp, StockTopic(3), src.read)
		require.NoError(t, err, "an ended subscription frees its place")

		connCtx, release, err := h.Connect(context.Background(), liveApp)
		require.NoError(t, err)
		_, _, err = h.Connect(context.Background(), liveApp)
		require.Equal(t, "This app already has 1 live connections open on this server; close one first.", apperr.From(err).Message)
		h.Shutdown()
		<-connCtx.Done()
		release()
		release()
		_, release, err = h.Connect(context.Background(), liveApp)
		require.NoError(t, err)
		release()
	})
	t.Run("AccountLimits", func(t *testing.T) {
		t.Parallel()
		h := newHub(t, Config{MaxSubscriptions: 2, MaxConnections: 2, AccountMultiple: 2})
		src := &source{}
		for _, tt := range []struct {
			name string
			// take holds one connection or subscription of tenant.
			take func(Tenant) (release func(), err error)
			msg  string
		}{
			{"Subscriptions", func(tn Tenant) (func(), error) {
				ctx, cancel := context.WithCancel(context.Background())
				ch, err := Subscribe(ctx, h, tn, StockTopic(1), src.read)
				return func() {
					cancel()
					for range ch { // drained and closed: the place is free
					}
				}, err
			}, "This account's apps already have 4 live subscriptions open on this server; complete one first."},
			{"Connections", func(tn Tenant) (func(), error) {
				_, release, err := h.Connect(context.Background(), tn)
				return release, err
			}, "This account's apps already have 4 live connections open on this server; close one first."},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var held []func()
				for app := range int64(2) { // two apps of account 7, each at its own limit
					for range 2 {
						release, err := tt.take(TenantOf(7, 10+app, "live"))
						require.NoError(t, err)
						held = append(held, release)
					}
				}
				_, err := tt.take(TenantOf(7, 12, "live"))
				ae := apperr.From(err)
				require.Equal(t, apperr.SubscriptionLimitReached, ae.Code, "a third app adds nothing to the account's budget")
				require.Equal(t, tt.msg, ae.Message)
				for _, other := range []Tenant{TenantOf(8, 20, "live"), TenantOf(7, 12, "test")} {
					release, err := tt.take(other)
					require.NoError(t, err, "another account, or the account's other environment: %+v", other)
					release()
				}
				held[0]()
				release, err := tt.take(TenantOf(7, 12, "live"))
				require.NoError(t, err, "a freed place of the account is the third app's")
				release()
				for _, release := range held[1:] {
					release()
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				require.Empty(t, h.tenants)
				require.Empty(t, h.accounts, "idle accounts are forgotten")
			})
		}
	})
	t.Run("ScannerTenants", func(t *testing.T) {
		t.Parallel()
		h := newHub(t, Config{MaxSubscriptions: 2, MaxConnections: 1})
		_, release, err := h.Connect(context.Background(), ScannerTenant(3))
		require.NoError(t, err)
		defer release()
		_, _, err = h.Connect(context.Background(), ScannerTenant(3))
		ae := apperr.From(err)
		require.Equal(t, apperr.SubscriptionLimitReached, ae.Code)
		require.Equal(t, "This scanner key already has 1 live connections open on this server; close one first.", ae.Message)
		for i := range 2 {
			_, err := Watch(t.Context(), h, ScannerTenant(3), CheckInTopic("test", int64(i)))
			require.NoError(t, err)
		}
		_, err = Watch(t.Context(), h, ScannerTenant(3), CheckInTopic("test", 9))
		require.Equal(t, "This scanner key already has 2 live subscriptions open on this server; complete one first.", apperr.From(err).Message)

		// Another scanner key, and the app that has no id of its own
		// (account 0, app 0), are tenants of their own.
		for _, other := range []Tenant{ScannerTenant(4), TenantOf(0, 0, "test"), TenantOf(0, 3, "test")} {
			_, release, err := h.Connect(context.Background(), other)
			require.NoError(t, err, "%+v", other)
			release()
			_, err = Watch(t.Context(), h, other, CheckInTopic("test", 9))
			require.NoError(t, err, "%+v", other)
		}
	})
	t.Run("Watch", func(t *testing.T) {
		t.Parallel()
		h := newHub(t, DefaultConfig())
		topic := CheckInTopic("test", 5)
		ctx, cancel := context.WithCancel(context.Background())
		a, err := Watch(ctx, h, ScannerTenant(1), topic)
		require.NoError(t, err)
		b, err := Watch(context.Background(), h, ScannerTenant(2), topic)
		require.NoError(t, err)
		woken := func(ch <-chan struct{}) bool {
			select {
			case _, ok := <-ch:
				require.True(t, ok, "channel closed")
				return true
			case <-testwait.After(t, 10*time.Second):
				return false
			}
		}
		require.True(t, woken(a), "a watch starts with a wake")
		require.True(t, woken(b))
		settle(t, h)
		for range 3 { // each change wakes every watcher, however alike
			h.changed(topic.Kind, topic.Key)
			require.True(t, woken(a))
			require.True(t, woken(b))
			settle(t, h)
		}
		// Changes the watcher has not taken yet wake it once.
		h.changed(topic.Kind, topic.Key)
		settle(t, h)
		h.changed(topic.Kind, topic.Key)
		settle(t, h)
		require.True(t, woken(a))
		select {
		case <-a:
			t.Fatal("two changes not taken make one wake")
		default:
		}
		cancel()
		testwait.For(t, 10*time.Second, "the watch channel to close", func() bool { _, open := <-a; return !open })
		require.Equal(t, 1, h.Stats().Subscriptions)
	})
	t.Run("CloseFreesEverything", func(t *testing.T) {
		t.Parallel()
		h := newHub(t, DefaultConfig())
		src := &source{}
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := Subscribe(ctx, h, testApp, StockTopic(1), src.read)
		require.NoError(t, err)
		recv(t, ch)
		require.True(t, h.Stats().Polling)
		cancel()
		testwait.For(t, 10*time.Second, "the poller stops with the last topic", func() bool { return h.Stats() == Stats{} })
		h.Close()
		_, err = Subscribe(context.Background(), h, testApp, StockTopic(1), src.read)
		require.ErrorIs(t, err, errClosed)
	})
}
