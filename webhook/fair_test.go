package webhook

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// takeAll takes n slots of app, the only app of an account of the same
// id, and returns their done funcs; it fails the test when one is refused.
func takeAll(t *testing.T, s *Slots, app int64, n int) []func(verdict) {
	t.Helper()
	return takeOf(t, s, app, app, n)
}

// takeOf takes n slots of app of account.
func takeOf(t *testing.T, s *Slots, account, app int64, n int) []func(verdict) {
	t.Helper()
	var dones []func(verdict)
	for range n {
		done, ok := s.take(k(account), k(app))
		require.True(t, ok, "slot of app %d", app)
		dones = append(dones, done)
	}
	return dones
}

// k names a numbered tenant or member.
func k(n int64) string { return strconv.FormatInt(n, 10) }

func refused(t *testing.T, s *Slots, app int64) {
	t.Helper()
	_, ok := s.take(k(app), k(app))
	require.False(t, ok, "app %d is over its share", app)
}

func TestSlots(t *testing.T) {
	t.Parallel()
	t.Run("OKPerApp", func(t *testing.T) {
		t.Parallel()
		s := NewSlots(2, 8)
		a := takeAll(t, s, 1, 2)
		refused(t, s, 1)
		takeAll(t, s, 2, 2) // another app is not held back by the first
		a[0](healthy)
		takeAll(t, s, 1, 1) // a slot freed is the app's again
		refused(t, s, 1)
	})
	t.Run("OKPerAccount", func(t *testing.T) {
		t.Parallel()
		s := NewSlots(2, 8)
		takeOf(t, s, 1, 10, 1)
		takeOf(t, s, 1, 11, 1)
		_, ok := s.take(k(1), k(12))
		require.False(t, ok, "a third app of the account buys no third slot")
		require.True(t, s.Backlogged(k(10)) && s.Backlogged(k(11)) && s.Backlogged(k(12)), "the account is backlogged, whichever app")
		takeOf(t, s, 2, 20, 2) // another account is not held back
		require.False(t, s.Backlogged(k(99)), "an app never seen")
	})
	t.Run("OKStrugglingAccountHasOne", func(t *testing.T) {
		t.Parallel()
		s := NewSlots(4, 8)
		for app := int64(10); app < 20; app++ {
			takeOf(t, s, 1, app, 1)[0](struggling) // ten apps, ten receivers that never answer
		}
		takeOf(t, s, 1, 10, 1)
		_, ok := s.take(k(1), k(11))
		require.False(t, ok, "one worker for all of a struggling account's apps")
		takeOf(t, s, 2, 20, 4) // the other accounts keep theirs
	})
	t.Run("OKPerAppIsAtMostHalfTheWorkers", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, 4, NewSlots(100, 8).PerApp())
		require.Equal(t, 1, NewSlots(100, 2).PerApp())
		require.Equal(t, 1, NewSlots(0, 0).PerApp(), "at least one")
		require.Equal(t, 3, NewSlots(3, 16).PerApp())
	})
	t.Run("OKStrugglingAppHasOne", func(t *testing.T) {
		t.Parallel()
		s := NewSlots(4, 8)
		for _, d := range takeAll(t, s, 1, 4) {
			d(struggling) // a receiver that never answers: four timeouts
		}
		done := takeAll(t, s, 1, 1)[0]
		refused(t, s, 1)
		done(untried) // no request made (e.g. stopping): still struggling
		takeAll(t, s, 1, 1)[0](healthy)
		takeAll(t, s, 1, 4) // answered again: its share is back
		refused(t, s, 1)
	})
	t.Run("OKStrugglingAppsShareHalfTheWorkers", func(t *testing.T) {
		t.Parallel()
		s := NewSlots(2, 6) // half: 3
		for app := int64(1); app <= 5; app++ {
			takeAll(t, s, app, 1)[0](struggling)
		}
		takeAll(t, s, 1, 1)
		takeAll(t, s, 2, 1)
		takeAll(t, s, 3, 1)
		refused(t, s, 4)    // three struggling deliveries in flight: the rest wait
		takeAll(t, s, 9, 2) // a healthy app still finds workers
	})
	t.Run("OKIdleHealthyAppsForgotten", func(t *testing.T) {
		t.Parallel()
		s := NewSlots(2, 8)
		for app := int64(1); app <= 100; app++ {
			for _, d := range takeAll(t, s, app, 2) {
				d(healthy)
			}
		}
		takeAll(t, s, 101, 1)[0](struggling)
		require.Len(t, s.apps, 1, "only what matters is kept")
		done := takeAll(t, s, 101, 1)[0]
		done(healthy)
		done(struggling) // a second call changes nothing
		require.Empty(t, s.apps)
	})
	t.Run("OKBacklogged", func(t *testing.T) {
		t.Parallel()
		now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
		s := NewSlots(2, 8)
		s.now = func() time.Time { return now }
		require.False(t, s.Backlogged(k(1)), "an app never seen")
		a := takeAll(t, s, 1, 1)
		require.False(t, s.Backlogged(k(1)), "a slot to spare")
		a = append(a, takeAll(t, s, 1, 1)...)
		require.True(t, s.Backlogged(k(1)), "every slot taken")
		refused(t, s, 1)
		a[0](healthy)
		a[1](healthy)
		require.True(t, s.Backlogged(k(1)), "refused a moment ago: its waiting deliveries come back soon")
		require.False(t, s.Backlogged(k(2)), "not another app")
		now = now.Add(BacklogMemory)
		require.False(t, s.Backlogged(k(1)))
		takeAll(t, s, 1, 1)[0](struggling)
		require.True(t, s.Backlogged(k(1)), "a struggling receiver")
	})
	t.Run("OKConcurrent", func(t *testing.T) {
		t.Parallel()
		s := NewSlots(3, 8)
		var inFlight, most atomic.Int32
		var wg sync.WaitGroup
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					done, ok := s.take(k(7), k(7))
					if !ok {
						continue
					}
					n := inFlight.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					inFlight.Add(-1)
					done(healthy)
				}
			}()
		}
		wg.Wait()
		require.LessOrEqual(t, most.Load(), int32(3))
		a := s.apps["7"] // kept only if a take was refused (a recent refusal)
		require.True(t, a == nil || a.inFlight == 0, "every slot given back")
	})
}
