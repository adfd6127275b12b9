package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's current time.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const lockTimeout = 10 * time.Second

// fixture is a service over a fresh database with one account and two apps.
type fixture struct {
	db    *store.DB
	clock *fakeClock
	svc   *idempotency.Service
	app   int64 // first app
	other int64 // second app of the same account
}

func newFixture(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	ctx := context.Background()
	clock := newFakeClock()
	now := clock.Now()
	acc := &store.Account{Name: "Idem Partner", Email: "idem@example.com", Status: store.AccountActive, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, store.InsertAccount(ctx, db, acc))
	apps := make([]int64, 2)
	for i := range apps {
		app := &store.App{
			AccountID: acc.ID, Name: fmt.Sprintf("App %d", i), Status: store.AppActive,
			WebhookSecret: "whsec_test", CreatedAt: now, UpdatedAt: now,
		}
		require.NoError(t, store.InsertApp(ctx, db, app))
		apps[i] = app.ID
	}
	return &fixture{
		db: db, clock: clock, app: apps[0], other: apps[1],
		svc: &idempotency.Service{DB: db, Now: clock.Now, LockTimeout: lockTimeout},
	}
}

func (f *fixture) scope() idempotency.Scope {
	return idempotency.Scope{AppID: f.app, Environment: store.EnvTest}
}

// claim begins key and requires a fresh claim.
func (f *fixture) claim(t *testing.T, scope idempotency.Scope, key, fp string) *idempotency.Claim {
	t.Helper()
	c, saved, err := f.svc.Begin(context.Background(), scope, key, fp)
	require.NoError(t, err)
	require.Nil(t, saved)
	require.NotNil(t, c, "want a fresh claim")
	return c
}

// replayed begins key and requires the saved response.
func (f *fixture) replayed(t *testing.T, scope idempotency.Scope, key, fp string) []byte {
	t.Helper()
	c, saved, err := f.svc.Begin(context.Background(), scope, key, fp)
	require.NoError(t, err)
	require.Nil(t, c, "want no claim for a completed key")
	require.NotNil(t, saved)
	return saved
}

func (f *fixture) complete(t *testing.T, c *idempotency.Claim, response string) {
	t.Helper()
	require.NoError(t, f.svc.Complete(context.Background(), f.db, c, []byte(response)))
}

func (f *fixture) rows(t *testing.T) int64 {
	t.Helper()
	n, err := f.db.NewSelect().Model((*store.IdempotencyRecord)(nil)).Count(context.Background())
	require.NoError(t, err)
	return n
}

// requireAppErr requires err to be an *apperr.Error of code and returns it.
func requireAppErr(t *testing.T, err error, code apperr.Code) *apperr.Error {
	t.Helper()
	require.Error(t, err)
	var ae *apperr.Error
	require.True(t, errors.As(err, &ae), "want *apperr.Error, got %T: %v", err, err)
	require.Equal(t, code, ae.Code, "%v", err)
	return ae
}

const inProgressMessage = "A request with this Idempotency-Key is still being processed; retry shortly."

func TestService(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		fpA := idempotency.Fingerprint([]byte(`{"a":1}`))
		fpB := idempotency.Fingerprint([]byte(`{"b":2}`))

		t.Run("OK", func(t *testing.T) {
			c := f.claim(t, f.scope(), "ok", fpA)
			f.complete(t, c, `{"status":201}`)
			require.Equal(t, []byte(`{"status":201}`), f.replayed(t, f.scope(), "ok", fpA))
			require.Equal(t, []byte(`{"status":201}`), f.replayed(t, f.scope(), "ok", fpA), "replays again")
		})

		t.Run("ErrConflict", func(t *testing.T) {
			for _, done := range []bool{false, true} {
				key := fmt.Sprintf("conflict-%t", done)
				c := f.claim(t, f.scope(), key, fpA)
				if done {
					f.complete(t, c, `{}`)
				}
				claim, saved, err := f.svc.Begin(ctx, f.scope(), key, fpB)
				ae := requireAppErr(t, err, apperr.IdempotencyConflict)
				require.Equal(t, "This Idempotency-Key was already used with a different request body.", ae.Message)
				require.Equal(t, 409, ae.Status())
				require.Nil(t, claim)
				require.Nil(t, saved)
			}
		})

		t.Run("ErrInProgress", func(t *testing.T) {
			c := f.claim(t, f.scope(), "in-progress", fpA)
			for _, wait := range []time.Duration{0, 3 * time.Second, lockTimeout - time.Second} {
				// A second instance whose clock is wait past the claim.
				clock := newFakeClock()
				clock.Advance(wait)
				svc := &idempotency.Service{DB: db, Now: clock.Now, LockTimeout: lockTimeout}
				claim, saved, err := svc.Begin(ctx, f.scope(), "in-progress", fpA)
				ae := requireAppErr(t, err, apperr.IdempotencyInProgress)
				require.Equal(t, inProgressMessage, ae.Message)
				require.Equal(t, 409, ae.Status())
				require.Greater(t, ae.RetryAfter, 0)
				require.LessOrEqual(t, ae.RetryAfter, int(lockTimeout/time.Second))
				require.Equal(t, int((lockTimeout-wait)/time.Second), ae.RetryAfter, "seconds left on the lock")
				require.Nil(t, claim)
				require.Nil(t, saved)
			}
			require.NoError(t, f.svc.Release(ctx, c))
		})

		t.Run("ErrInProgressDefaultLockTimeout", func(t *testing.T) {
			svc := &idempotency.Service{DB: db, Now: f.clock.Now}
			c, _, err := svc.Begin(ctx, f.scope(), "default-lock", fpA)
			require.NoError(t, err)
			_, _, err = svc.Begin(ctx, f.scope(), "default-lock", fpA)
			ae := requireAppErr(t, err, apperr.IdempotencyInProgress)
			require.Equal(t, int(idempotency.DefaultLockTimeout/time.Second), ae.RetryAfter)
			require.NoError(t, svc.Release(ctx, c))
		})

		t.Run("Release", func(t *testing.T) {
			c := f.claim(t, f.scope(), "release", fpA)
			require.NoError(t, f.svc.Release(ctx, c))
			c2 := f.claim(t, f.scope(), "release", fpB) // a different body is fine now
			f.complete(t, c2, `{"second":true}`)
			require.Equal(t, []byte(`{"second":true}`), f.replayed(t, f.scope(), "release", fpB))
			require.NoError(t, f.svc.Release(ctx, c), "releasing a key twice is harmless")
			require.NoError(t, f.svc.Release(ctx, c2), "release never drops a completed key")
			require.Equal(t, []byte(`{"second":true}`), f.replayed(t, f.scope(), "release", fpB))
		})

		t.Run("ErrCompleteAfterRelease", func(t *testing.T) {
			c := f.claim(t, f.scope(), "complete-released", fpA)
			require.NoError(t, f.svc.Release(ctx, c))
			err := f.svc.Complete(ctx, db, c, []byte(`{}`))
			requireAppErr(t, err, apperr.IdempotencyInProgress)
		})

		t.Run("CompleteInTransaction", func(t *testing.T) {
			c := f.claim(t, f.scope(), "tx", fpA)
			rollback := errors.New("rollback")
			err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				require.NoError(t, f.svc.Complete(ctx, tx, c, []byte(`{"rolled":"back"}`)))
				return rollback
			})
			require.ErrorIs(t, err, rollback)
			_, _, err = f.svc.Begin(ctx, f.scope(), "tx", fpA)
			requireAppErr(t, err, apperr.IdempotencyInProgress) // nothing was saved
			require.NoError(t, db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				return f.svc.Complete(ctx, tx, c, []byte(`{"committed":true}`))
			}))
			require.Equal(t, []byte(`{"committed":true}`), f.replayed(t, f.scope(), "tx", fpA))
		})

		t.Run("Scope", func(t *testing.T) {
			scopes := []idempotency.Scope{
				{AppID: f.app, Environment: store.EnvTest},
				{AppID: f.app, Environment: store.EnvLive},
				{AppID: f.other, Environment: store.EnvTest},
				{AppID: f.other, Environment: store.EnvLive},
			}
			for i, s := range scopes {
				// Every scope claims the same key with a body of its own:
				// no conflict and no in-progress with the others.
				c := f.claim(t, s, "scoped", idempotency.Fingerprint([]byte{byte(i)}))
				f.complete(t, c, fmt.Sprintf(`{"scope":%d}`, i))
			}
			for i, s := range scopes {
				require.Equal(t, []byte(fmt.Sprintf(`{"scope":%d}`, i)),
					f.replayed(t, s, "scoped", idempotency.Fingerprint([]byte{byte(i)})))
			}
		})
	})
}

func TestService_Takeover(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		fp := idempotency.Fingerprint([]byte(`{"a":1}`))

		old := f.claim(t, f.scope(), "takeover", fp)
		f.clock.Advance(lockTimeout - time.Second)
		_, _, err := f.svc.Begin(ctx, f.scope(), "takeover", fp)
		ae := requireAppErr(t, err, apperr.IdempotencyInProgress)
		require.Equal(t, 1, ae.RetryAfter)

		f.clock.Advance(2 * time.Second) // the first request's lock has run out
		taken := f.claim(t, f.scope(), "takeover", fp)
		_, _, err = f.svc.Begin(ctx, f.scope(), "takeover", fp)
		ae = requireAppErr(t, err, apperr.IdempotencyInProgress)
		require.Equal(t, int(lockTimeout/time.Second), ae.RetryAfter, "the new claim holds a full lock")

		err = f.svc.Complete(ctx, db, old, []byte(`{"who":"old"}`))
		ae = requireAppErr(t, err, apperr.IdempotencyInProgress)
		require.Equal(t, inProgressMessage, ae.Message)
		require.NoError(t, f.svc.Release(ctx, old), "the old claim cannot release the key either")
		_, _, err = f.svc.Begin(ctx, f.scope(), "takeover", fp)
		requireAppErr(t, err, apperr.IdempotencyInProgress)

		f.complete(t, taken, `{"who":"new"}`)
		require.Equal(t, []byte(`{"who":"new"}`), f.replayed(t, f.scope(), "takeover", fp))

		// A completed key is never taken over, however long its lock ran out.
		f.clock.Advance(10 * lockTimeout)
		require.Equal(t, []byte(`{"who":"new"}`), f.replayed(t, f.scope(), "takeover", fp))
		requireAppErr(t, f.svc.Complete(ctx, db, taken, []byte(`{"who":"again"}`)), apperr.IdempotencyInProgress)
	})
}

func TestService_Retention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		fpA := idempotency.Fingerprint([]byte(`{"a":1}`))
		fpB := idempotency.Fingerprint([]byte(`{"b":2}`))

		t.Run("OK", func(t *testing.T) {
			c := f.claim(t, f.scope(), "kept", fpA)
			f.complete(t, c, `{"n":1}`)
			f.clock.Advance(59 * time.Minute)
			require.Equal(t, []byte(`{"n":1}`), f.replayed(t, f.scope(), "kept", fpA))
			_, _, err := f.svc.Begin(ctx, f.scope(), "kept", fpB)
			requireAppErr(t, err, apperr.IdempotencyConflict)

			f.clock.Advance(2 * time.Minute) // 61 minutes after the first request
			c = f.claim(t, f.scope(), "kept", fpB)
			f.complete(t, c, `{"n":2}`)
			require.Equal(t, []byte(`{"n":2}`), f.replayed(t, f.scope(), "kept", fpB))
			require.EqualValues(t, 1, f.rows(t), "the expired record was replaced")
		})

		t.Run("ExactlyAtExpiry", func(t *testing.T) {
			c := f.claim(t, f.scope(), "boundary", fpA)
			f.complete(t, c, `{}`)
			f.clock.Advance(idempotency.DefaultRetention)
			f.claim(t, f.scope(), "boundary", fpA)
		})
	})
}

func TestService_Purge(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		fp := idempotency.Fingerprint([]byte(`{}`))

		n, err := f.svc.Purge(ctx)
		require.NoError(t, err)
		require.Zero(t, n)

		for _, key := range []string{"old-done", "old-running"} {
			c := f.claim(t, f.scope(), key, fp)
			if key == "old-done" {
				f.complete(t, c, `{}`)
			}
		}
		f.clock.Advance(30 * time.Minute)
		young := f.claim(t, f.scope(), "young", fp)
		f.complete(t, young, `{"young":true}`)
		f.clock.Advance(30 * time.Minute) // the first two are 60 minutes old
		require.EqualValues(t, 3, f.rows(t))

		n, err = f.svc.Purge(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		require.EqualValues(t, 1, f.rows(t))
		require.Equal(t, []byte(`{"young":true}`), f.replayed(t, f.scope(), "young", fp))

		n, err = f.svc.Purge(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "nothing left to purge")
	})
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		key  string
		code apperr.Code
		msg  string
	}{
		{name: "OK", key: "k"},
		{name: "OKMaxLength", key: strings.Repeat("k", idempotency.MaxKeyLength)},
		{name: "ErrMissingIdempotencyKey", key: "", code: apperr.MissingIdempotencyKey,
			msg: "The Idempotency-Key header is required."},
		{name: "ErrInvalidIdempotencyKey", key: strings.Repeat("k", idempotency.MaxKeyLength+1), code: apperr.InvalidIdempotencyKey,
			msg: "The Idempotency-Key header must be at most 128 characters."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := idempotency.CheckKey(tc.key)
			if tc.code == "" {
				require.NoError(t, err)
				return
			}
			ae := requireAppErr(t, err, tc.code)
			require.Equal(t, tc.msg, ae.Message)
			require.Equal(t, 400, ae.Status())
		})
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	a := idempotency.Fingerprint([]byte(`{"a":1}`))
	require.Regexp(t, `^[0-9a-f]{64}$`, a)
	require.Equal(t, a, idempotency.Fingerprint([]byte(`{"a":1}`)))
	require.NotEqual(t, a, idempotency.Fingerprint([]byte(`{"a":2}`)))
}

func TestService_Concurrency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		fp := idempotency.Fingerprint([]byte(`{"race":true}`))
		const racers = 20
		const response = `{"winner":true}`

		for round := range 5 {
			key := fmt.Sprintf("race-%d", round)
			type result struct {
				claim *idempotency.Claim
				saved []byte
				err   error
			}
			results := make([]result, racers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range racers {
				wg.Go(func() {
					<-start
					c, saved, err := f.svc.Begin(context.Background(), f.scope(), key, fp)
					if err == nil && c != nil && round%2 == 1 {
						// On odd rounds the winner finishes at once, so the
						// losers may see its saved response.
						err = f.svc.Complete(context.Background(), db, c, []byte(response))
					}
					results[i] = result{c, saved, err}
				})
			}
			close(start)
			wg.Wait()

			claims, inProgress, replays := 0, 0, 0
			for _, r := range results {
				switch {
				case r.claim != nil:
					require.NoError(t, r.err)
					require.Nil(t, r.saved)
					claims++
				case r.saved != nil:
					require.NoError(t, r.err)
					require.Equal(t, []byte(response), r.saved)
					require.Equal(t, 1, round%2, "only a completed key replays")
					replays++
				default:
					ae := requireAppErr(t, r.err, apperr.IdempotencyInProgress)
					require.Greater(t, ae.RetryAfter, 0)
					require.LessOrEqual(t, ae.RetryAfter, int(lockTimeout/time.Second))
					inProgress++
				}
			}
			require.Equal(t, 1, claims, "exactly one request claims the key (round %d)", round)
			require.Equal(t, racers, claims+inProgress+replays)
			t.Logf("round %d: %d claim, %d in progress, %d replays", round, claims, inProgress, replays)
		}
		require.EqualValues(t, 5, f.rows(t))
	})
}

// TestService_SaveAll: several answers saved together, as Save would save
// each — a key with a record, a key an earlier answer of the same call
// has, and (PostgreSQL) a key whose first request is still in its
// transaction are each refused with ErrTaken; the others are saved, and
// on PostgreSQL in one statement.
func TestService_SaveAll(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		require.NoError(t, f.svc.Save(ctx, db, f.scope(), "k-old", "fp", []byte(`"old"`)))
		other := idempotency.Scope{AppID: f.other, Environment: store.EnvTest}
		saves := []idempotency.Saving{
			{Scope: f.scope(), Key: "k-1", Fingerprint: "fp", Response: []byte(`"one"`)},
			{Scope: f.scope(), Key: "k-old", Fingerprint: "fp", Response: []byte(`"again"`)},
			{Scope: f.scope(), Key: "k-1", Fingerprint: "fp", Response: []byte(`"twice"`)},
			{Scope: other, Key: "k-1", Fingerprint: "fp", Response: []byte(`"other app"`)},
		}
		want := []error{nil, idempotency.ErrTaken, idempotency.ErrTaken, nil}
		if db.Postgres() {
			// Another request under k-busy, still in its transaction.
			busy, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer func() { _ = busy.Rollback() }()
			require.NoError(t, f.svc.Save(ctx, busy, f.scope(), "k-busy", "fp", []byte(`"busy"`)))
			saves = append(saves, idempotency.Saving{Scope: f.scope(), Key: "k-busy", Fingerprint: "fp", Response: []byte(`"late"`)})
			want = append(want, idempotency.ErrTaken)
		}
		q := storetest.Count(db)
		var taken []error
		require.NoError(t, db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			taken, err = f.svc.SaveAll(ctx, tx, saves)
			return err
		}))
		require.Equal(t, want, taken)
		if db.Postgres() {
			require.Equal(t, 3, q.N(), "BEGIN, one statement, COMMIT")
		}
		require.Equal(t, `"one"`, string(f.replayed(t, f.scope(), "k-1", "fp")))
		require.Equal(t, `"old"`, string(f.replayed(t, f.scope(), "k-old", "fp")))
		require.Equal(t, `"other app"`, string(f.replayed(t, other, "k-1", "fp")))
	})
}
