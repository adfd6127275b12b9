package accounts_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// cheap are password costs that keep tests fast; the hash format and the
// checks are the same as production's.
var cheap = auth.PasswordParams{Memory: 256, Time: 1, Threads: 1}

const password = "correct horse battery"

// fixture is a portal service over a database shared by the test's
// subtests, with its own clock, limiters, client address and email
// addresses, so subtests never see each other.
type fixture struct {
	db       *store.DB
	clock    *fakeClock
	svc      *accounts.Service
	ctx      context.Context // carries the client address
	ip       string
	prefix   string // unique part of this fixture's email addresses
	mu       sync.Mutex
	enqueued []string // webhook events queued for delivery
}

func setup(t *testing.T, db *store.DB, opts ...func(*accounts.Config)) *fixture {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	f := &fixture{db: db, clock: &fakeClock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)},
		ip: "203.0.113." + hex.EncodeToString(b[:1]), prefix: hex.EncodeToString(b)}
	f.ctx = ratelimit.WithClientIP(context.Background(), f.ip)
	cfg := accounts.DefaultConfig()
	cfg.BaseURL = "https://boxoffice.example"
	cfg.SignInPerIP, cfg.SignInPerAccount = 1000, 1000
	for _, o := range opts {
		o(&cfg)
	}
	prov := &provision.Service{DB: db, Now: f.clock.Now, Password: cheap}
	hooks := &webhook.Service{DB: db, Now: f.clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Enqueue: func(_ context.Context, _ bun.Tx, ds []webhook.Delivery) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, d := range ds {
				f.enqueued = append(f.enqueued, d.EventID)
			}
			return nil
		}}
	limits, err := ratelimit.NewStore(context.Background(), "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	limits.Now = f.clock.Now
	f.svc = accounts.NewService(db, prov, hooks, limits, "test-"+f.prefix, f.clock.Now, cfg)
	return f
}

// email returns an address of this fixture's own.
func (f *fixture) email(name string) string { return name + "-" + f.prefix + "@partner.example" }

// signUp creates a pending account.
func (f *fixture) signUp(t *testing.T, name string) *store.Account {
	t.Helper()
	acc, err := f.svc.SignUp(f.ctx, accounts.SignUpInput{Name: "Partner " + name, Email: f.email(name), Password: password})
	require.NoError(t, err)
	return acc
}

// partner signs up, is approved by an operator and signs in.
func (f *fixture) partner(t *testing.T, name string) *accounts.Session {
	t.Helper()
	acc := f.signUp(t, name)
	require.NoError(t, f.svc.Provision.SetAccountStatus(context.Background(), acc.ID, store.AccountActive))
	sess, err := f.svc.SignIn(f.ctx, acc.Email, password)
	require.NoError(t, err)
	return f.reload(t, sess)
}

// reload reads a session again, as the next request would.
func (f *fixture) reload(t *testing.T, sess *accounts.Session) *accounts.Session {
	t.Helper()
	again, err := f.svc.Session(f.ctx, sess.Token)
	require.NoError(t, err)
	return again
}

// requireErr checks a refusal's code and message.
func requireErr(t *testing.T, err error, code apperr.Code, msg string) {
	t.Helper()
	require.Error(t, err)
	e := apperr.From(err)
	require.Equal(t, code, e.Code, "error: %v", err)
	require.Equal(t, msg, e.Message)
}

// requireField checks a validation refusal of one field.
func requireField(t *testing.T, err error, field, msg string) {
	t.Helper()
	require.Error(t, err)
	e := apperr.From(err)
	require.Equal(t, apperr.ValidationFailed, e.Code, "error: %v", err)
	require.Equal(t, apperr.Details{field: {msg}}, e.Details)
	require.Equal(t, "--"+field+" "+msg, e.Message, "the CLI's words for the same rule")
}

// auditOf returns the audit entries of an account, oldest first.
func (f *fixture) auditOf(t *testing.T, accountID int64) []store.AuditEntry {
	t.Helper()
	entries, err := audit.List(context.Background(), f.db, accountID, 1000)
	require.NoError(t, err)
	for i, j := 0, len(entries)-1; i < j; i, j = i+1, j-1 {
		entries[i], entries[j] = entries[j], entries[i]
	}
	return entries
}

func actions(entries []store.AuditEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Action)
	}
	return out
}

func TestSignUp(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("OK", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			acc, err := f.svc.SignUp(f.ctx, accounts.SignUpInput{Name: "  Kofi Tickets ", Email: f.email("Kofi"), Password: password})
			require.NoError(t, err)
			require.Equal(t, "Kofi Tickets", acc.Name)
			require.Equal(t, strings.ToLower(f.email("Kofi")), acc.Email)
			require.Equal(t, store.AccountPendingApproval, acc.Status)
			require.True(t, strings.HasPrefix(acc.PasswordHash, "$argon2id$v=19$m=256,t=1,p=1$"), acc.PasswordHash)
			require.NotContains(t, acc.PasswordHash, password)

			entries := f.auditOf(t, acc.ID)
			require.Len(t, entries, 1)
			require.Equal(t, audit.AccountCreate, entries[0].Action)
			require.Equal(t, store.ActorPartner, entries[0].Actor)
			require.Equal(t, f.ip, entries[0].IP)
			require.Equal(t, "status pending_approval", entries[0].Detail)
		})
		t.Run("ErrValidation", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			f.signUp(t, "taken")
			for _, tt := range []struct {
				name         string
				in           accounts.SignUpInput
				field, error string
			}{
				{"Name", accounts.SignUpInput{Name: " ", Email: f.email("a"), Password: password}, "name", "is required"},
				{"Email", accounts.SignUpInput{Name: "A", Email: "not-an-email", Password: password}, "email", `"not-an-email" is not a valid email address`},
				{"EmailWithName", accounts.SignUpInput{Name: "A", Email: "A <a@b.example>", Password: password}, "email", `"A <a@b.example>" is not a valid email address`},
				{"PasswordMissing", accounts.SignUpInput{Name: "A", Email: f.email("b")}, "password", "is required"},
				{"PasswordShort", accounts.SignUpInput{Name: "A", Email: f.email("c"), Password: "nine char"}, "password", "must be at least 10 characters long"},
				{"PasswordLong", accounts.SignUpInput{Name: "A", Email: f.email("d"), Password: strings.Repeat("x", 257)}, "password", "must be at most 256 characters long"},
				{"PasswordShortEmailTaken", accounts.SignUpInput{Name: "A", Email: f.email("taken"), Password: "nine char"}, "password", "must be at least 10 characters long"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					_, err := f.svc.SignUp(f.ctx, tt.in)
					requireField(t, err, tt.field, tt.error)
				})
			}
		})
		t.Run("EmailTaken", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			in := accounts.SignUpInput{Name: " Kofi ", Email: f.email("Kofi"), Password: password}
			fresh, err := f.svc.SignUp(f.ctx, in)
			require.NoError(t, err)
			// This fixture's accounts: subtests beside it add their own.
			mine := func() []store.Account {
				all, err := store.ListAccounts(context.Background(), db, "")
				require.NoError(t, err)
				var out []store.Account
				for _, a := range all {
					if strings.Contains(a.Email, f.prefix) {
						out = append(out, a)
					}
				}
				return out
			}
			stored := mine()
			require.Len(t, stored, 1)

			for _, tt := range []struct {
				name string
				in   accounts.SignUpInput
			}{
				{"SameInput", in},
				{"OtherPasswordAndCase", accounts.SignUpInput{Name: in.Name, Email: strings.ToUpper(in.Email), Password: "another password"}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					taken, err := f.svc.SignUp(f.ctx, tt.in)
					require.NoError(t, err, "the same answer as a new sign-up")
					require.Equal(t, store.Account{Name: fresh.Name, Email: fresh.Email, Status: fresh.Status,
						CreatedAt: taken.CreatedAt, UpdatedAt: taken.UpdatedAt}, *taken, "what a new account would show; nothing stored")
					require.Equal(t, stored, mine(), "nothing created or changed")
					_, err = f.svc.SignIn(f.ctx, fresh.Email, tt.in.Password)
					if tt.in.Password != password {
						requireErr(t, err, apperr.Unauthorized, "The email address or password is not right.")
					}
					_, err = f.svc.SignIn(f.ctx, fresh.Email, password)
					require.NoError(t, err, "the owner's password is untouched")
				})
			}
			var taken []store.AuditEntry
			for _, e := range f.auditOf(t, fresh.ID) {
				if e.Action == audit.AccountSignUpTaken {
					taken = append(taken, e)
				}
			}
			require.Len(t, taken, 2, "each attempt is recorded for the account")
			require.Equal(t, store.ActorPartner, taken[0].Actor)
			require.Equal(t, f.ip, taken[0].IP)
			require.Equal(t, "sign-up with this account's email; answered as a new sign-up, nothing created", taken[0].Detail)
		})
		t.Run("ErrRateLimited", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db, func(c *accounts.Config) { c.SignInPerIP = 2 })
			f.signUp(t, "one")
			f.signUp(t, "two")
			_, err := f.svc.SignUp(f.ctx, accounts.SignUpInput{Name: "Three", Email: f.email("three"), Password: password})
			requireErr(t, err, apperr.RateLimitExceeded, "Too many attempts from this address; retry after the time in the Retry-After header.")
			require.Positive(t, apperr.From(err).RetryAfter)
		})
	})
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("OK", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			acc := f.signUp(t, "ama")
			sess, err := f.svc.SignIn(f.ctx, "  "+strings.ToUpper(acc.Email)+" ", password)
			require.NoError(t, err)
			require.Len(t, sess.Token, 43, "256 bits, base64url")
			require.Equal(t, acc.ID, sess.Account.ID)
			require.Equal(t, f.clock.Now().Add(12*time.Hour), sess.ExpiresAt)
			again := f.reload(t, sess)
			require.Equal(t, acc.ID, again.Account.ID)
			require.Equal(t, sess.CSRF(), again.CSRF(), "the form token is the session's")

			var stored []string
			require.NoError(t, db.NewSelect().Model((*store.PortalSession)(nil)).Column("token_hash").
				Where("account_id = ?", acc.ID).Scan(context.Background(), &stored))
			require.Len(t, stored, 1)
			require.NotEqual(t, sess.Token, stored[0], "only a hash of the token is stored")
			require.Equal(t, []string{audit.AccountCreate, audit.SignIn}, actions(f.auditOf(t, acc.ID)))
		})
		t.Run("ErrWrongPassword", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			acc := f.signUp(t, "ama")
			_, err := f.svc.SignIn(f.ctx, acc.Email, "wrong horse battery")
			requireErr(t, err, apperr.Unauthorized, "The email address or password is not right.")
			_, err = f.svc.SignIn(f.ctx, f.email("nobody"), password)
			requireErr(t, err, apperr.Unauthorized, "The email address or password is not right.")
			entries := f.auditOf(t, acc.ID)
			require.Equal(t, []string{audit.AccountCreate, audit.SignInFailed}, actions(entries))
			require.Equal(t, "wrong password", entries[1].Detail)
		})
		t.Run("ErrNoPassword", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			// Operators create accounts without a password: they cannot
			// sign in until a reset link sets one.
			acc, err := f.svc.Provision.CreateAccount(context.Background(), provision.AccountInput{Name: "Ops made", Email: f.email("ops")})
			require.NoError(t, err)
			_, err = f.svc.SignIn(f.ctx, acc.Email, "")
			requireErr(t, err, apperr.Unauthorized, "The email address or password is not right.")
		})
		t.Run("PendingReadsOnlyItsStatus", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			acc := f.signUp(t, "pending")
			sess, err := f.svc.SignIn(f.ctx, acc.Email, password)
			require.NoError(t, err, "a pending account signs in, to read its status")
			require.Equal(t, store.AccountPendingApproval, sess.Account.Status)
			const msg = "Your account is awaiting approval. You can use the portal once an operator activates it."
			_, err = f.svc.Apps(f.ctx, sess)
			requireErr(t, err, apperr.AccountPendingApproval, msg)
			_, err = f.svc.CreateApp(f.ctx, sess, "Shop")
			requireErr(t, err, apperr.AccountPendingApproval, msg)

			require.NoError(t, f.svc.Provision.SetAccountStatus(context.Background(), acc.ID, store.AccountActive))
			sess = f.reload(t, sess)
			_, err = f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err, "approved: the same session may act")
		})
		t.Run("DisabledReadsOnlyItsStatus", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "gone")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			require.NoError(t, f.svc.Provision.SetAccountStatus(context.Background(), sess.Account.ID, store.AccountDisabled))
			sess = f.reload(t, sess)
			const msg = "Your account is disabled. Contact the Boxoffice team to have it reactivated."
			_, err = f.svc.AppPage(f.ctx, sess, app.App.ID, accounts.OrderQuery{})
			requireErr(t, err, apperr.AccountDisabled, msg)
			_, err = f.svc.RotateKey(f.ctx, sess, app.App.ID, store.EnvTest)
			requireErr(t, err, apperr.AccountDisabled, msg)
			_, err = f.svc.SignIn(f.ctx, sess.Account.Email, password)
			require.NoError(t, err, "a disabled account signs in, to read its status")
		})
		t.Run("ErrLimitPerAccount", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db, func(c *accounts.Config) { c.SignInPerAccount = 3 })
			acc := f.signUp(t, "target")
			for range 3 {
				_, err := f.svc.SignIn(f.ctx, acc.Email, "guess guess guess")
				requireErr(t, err, apperr.Unauthorized, "The email address or password is not right.")
			}
			other := ratelimit.WithClientIP(context.Background(), "198.51.100.9")
			_, err := f.svc.SignIn(other, strings.ToUpper(acc.Email), password)
			requireErr(t, err, apperr.RateLimitExceeded, "Too many sign-in attempts for this account; retry after the time in the Retry-After header.")
			// 3 attempts at the start of a 15-minute window: a 4th fits once
			// they weigh 2, 20 minutes on in the sliding window.
			require.Equal(t, 1200, apperr.From(err).RetryAfter)

			f.clock.Advance(30 * time.Minute)
			_, err = f.svc.SignIn(other, acc.Email, password)
			require.NoError(t, err, "the window has passed")
		})
		t.Run("ErrLimitPerIP", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db, func(c *accounts.Config) { c.SignInPerIP = 3 })
			acc := f.signUp(t, "victim") // counts as one attempt from the address
			for _, who := range []string{"a", "b"} {
				_, err := f.svc.SignIn(f.ctx, f.email(who), password)
				requireErr(t, err, apperr.Unauthorized, "The email address or password is not right.")
			}
			_, err := f.svc.SignIn(f.ctx, acc.Email, password)
			requireErr(t, err, apperr.RateLimitExceeded, "Too many attempts from this address; retry after the time in the Retry-After header.")
			_, err = f.svc.SignIn(ratelimit.WithClientIP(context.Background(), "198.51.100.10"), acc.Email, password)
			require.NoError(t, err, "another address is not limited")
		})
	})
}

func TestSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("ErrExpired", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db, func(c *accounts.Config) { c.SessionTTL = time.Hour })
			sess := f.partner(t, "ama")
			f.clock.Advance(59 * time.Minute)
			f.reload(t, sess)
			f.clock.Advance(time.Minute)
			_, err := f.svc.Session(f.ctx, sess.Token)
			requireErr(t, err, apperr.Unauthorized, "Your session has expired; sign in again.")
			_, err = f.svc.Session(f.ctx, sess.Token)
			requireErr(t, err, apperr.Unauthorized, "Sign in to continue.")
		})
		t.Run("SignOut", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			other, err := f.svc.SignIn(f.ctx, sess.Account.Email, password)
			require.NoError(t, err)
			require.NotEqual(t, sess.CSRF(), other.CSRF(), "each session has its own form token")
			require.NoError(t, f.svc.SignOut(f.ctx, sess))
			_, err = f.svc.Session(f.ctx, sess.Token)
			requireErr(t, err, apperr.Unauthorized, "Sign in to continue.")
			f.reload(t, other) // signing out ends this session only
			require.Contains(t, actions(f.auditOf(t, sess.Account.ID)), audit.SignOut)
		})
		t.Run("ErrUnknown", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			for _, token := range []string{"", "nope", strings.Repeat("x", 500)} {
				_, err := f.svc.Session(f.ctx, token)
				requireErr(t, err, apperr.Unauthorized, "Sign in to continue.")
			}
		})
		t.Run("CSRF", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			require.True(t, sess.CheckCSRF(sess.CSRF()))
			require.False(t, sess.CheckCSRF(""))
			require.False(t, sess.CheckCSRF(sess.Token))
		})
		t.Run("Purge", func(t *testing.T) {
			t.Parallel()
			// A database of its own: purging at this clock's time would
			// delete the sessions of the subtests beside it, whose clocks
			// are earlier (ErrExpired's failed about one run in ten).
			kind := "sqlite"
			if db.Postgres() {
				kind = "postgres"
			}
			f := setup(t, storetest.MustOpen(t, kind), func(c *accounts.Config) { c.SessionTTL = time.Minute })
			sess := f.partner(t, "ama")
			f.clock.Advance(time.Hour)
			n, err := f.svc.PurgeSessions(context.Background())
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
			_, err = f.svc.Session(f.ctx, sess.Token)
			requireErr(t, err, apperr.Unauthorized, "Sign in to continue.")
		})
	})
}

const resetRefused = "This reset link is not valid: it was used already, replaced by a newer one, has expired or was never issued. Ask the Boxoffice team for a new one."

// tokenOf is the token of a reset link.
func tokenOf(link *accounts.ResetLink) string {
	return link.URL[strings.LastIndexByte(link.URL, '/')+1:]
}

func TestResetLink(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("OK", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "forgetful")
			link, err := f.svc.NewResetLink(context.Background(), sess.Account.ID)
			require.NoError(t, err)
			require.Regexp(t, `^https://boxoffice\.example/portal/reset/[A-Za-z0-9_-]{43}$`, link.URL)
			require.Equal(t, f.clock.Now().Add(24*time.Hour), link.ExpiresAt)
			token := link.URL[strings.LastIndexByte(link.URL, '/')+1:]

			acc, err := f.svc.ResetAccount(f.ctx, token)
			require.NoError(t, err)
			require.Equal(t, sess.Account.ID, acc.ID)
			requireField(t, f.svc.ResetPassword(f.ctx, token, "short"), "password", "must be at least 10 characters long")
			require.NoError(t, f.svc.ResetPassword(f.ctx, token, "a brand new password"), "a refused password leaves the link usable")

			_, err = f.svc.Session(f.ctx, sess.Token)
			requireErr(t, err, apperr.Unauthorized, "Sign in to continue.")
			_, err = f.svc.SignIn(f.ctx, acc.Email, password)
			requireErr(t, err, apperr.Unauthorized, "The email address or password is not right.")
			_, err = f.svc.SignIn(f.ctx, acc.Email, "a brand new password")
			require.NoError(t, err)

			requireErr(t, f.svc.ResetPassword(f.ctx, token, "another new password"), apperr.NotFound, resetRefused)
			_, err = f.svc.ResetAccount(f.ctx, token)
			requireErr(t, err, apperr.NotFound, resetRefused)

			entries := f.auditOf(t, acc.ID)
			var reset []store.AuditEntry
			for _, e := range entries {
				if e.Action == audit.AccountResetLink || e.Action == audit.AccountPassword {
					reset = append(reset, e)
				}
			}
			require.Len(t, reset, 2)
			require.Equal(t, store.ActorOperator, reset[0].Actor, "an operator creates the link")
			require.Equal(t, store.ActorPartner, reset[1].Actor, "the partner uses it")
			for _, e := range entries {
				require.NotContains(t, e.Detail, token)
			}
		})
		t.Run("NewLinkVoidsOthers", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			acc := f.signUp(t, "twice")
			other := f.signUp(t, "bystander")
			var links []*accounts.ResetLink
			for _, id := range []int64{acc.ID, acc.ID, other.ID, acc.ID} {
				link, err := f.svc.NewResetLink(context.Background(), id)
				require.NoError(t, err)
				links = append(links, link)
			}
			for i, tt := range []struct {
				name   string
				usable bool
			}{
				{"First", false}, {"Second", false}, {"OtherAccount", true}, {"Newest", true},
			} {
				t.Run(tt.name, func(t *testing.T) {
					_, err := f.svc.ResetAccount(f.ctx, tokenOf(links[i]))
					if tt.usable {
						require.NoError(t, err)
						return
					}
					requireErr(t, err, apperr.NotFound, resetRefused)
					requireErr(t, f.svc.ResetPassword(f.ctx, tokenOf(links[i]), "a brand new password"), apperr.NotFound, resetRefused)
				})
			}
			var details []string
			for _, e := range f.auditOf(t, acc.ID) {
				if e.Action == audit.AccountResetLink {
					details = append(details, e.Detail[strings.IndexByte(e.Detail, ';')+1:])
				}
			}
			require.Equal(t, []string{"one-time password reset link created, valid until 2026-11-23T09:00:00Z",
				" 1 other unused link voided", " 1 other unused link voided"}, details)
		})
		t.Run("ResetVoidsOthers", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			acc := f.signUp(t, "raced")
			used, err := f.svc.NewResetLink(context.Background(), acc.ID)
			require.NoError(t, err)
			// Another link written after it, as one issued in a race or
			// before links voided each other would be.
			now := f.clock.Now()
			require.NoError(t, store.InsertPasswordReset(context.Background(), db, &store.PasswordReset{
				TokenHash: auth.HashKey("older-" + f.prefix), AccountID: acc.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
			_, err = f.svc.ResetAccount(f.ctx, "older-"+f.prefix)
			require.NoError(t, err, "usable until the reset completes")

			require.NoError(t, f.svc.ResetPassword(f.ctx, tokenOf(used), "a brand new password"))
			_, err = f.svc.ResetAccount(f.ctx, "older-"+f.prefix)
			requireErr(t, err, apperr.NotFound, resetRefused)
			requireErr(t, f.svc.ResetPassword(f.ctx, "older-"+f.prefix, "yet another password"), apperr.NotFound, resetRefused)
			_, err = f.svc.SignIn(f.ctx, acc.Email, "a brand new password")
			require.NoError(t, err)
			entries := f.auditOf(t, acc.ID)
			var last store.AuditEntry
			for _, e := range entries {
				if e.Action == audit.AccountPassword {
					last = e
				}
			}
			require.Equal(t, "password set with a reset link; every session ended; 1 other unused link voided", last.Detail)
		})
		t.Run("ErrExpired", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			acc := f.signUp(t, "slow")
			link, err := f.svc.NewResetLink(context.Background(), acc.ID)
			require.NoError(t, err)
			f.clock.Advance(24 * time.Hour)
			token := link.URL[strings.LastIndexByte(link.URL, '/')+1:]
			requireErr(t, f.svc.ResetPassword(f.ctx, token, "a brand new password"), apperr.NotFound, resetRefused)
		})
		t.Run("ErrUnknown", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			requireErr(t, f.svc.ResetPassword(f.ctx, "made-up", "a brand new password"), apperr.NotFound, resetRefused)
			_, err := f.svc.NewResetLink(context.Background(), 424242)
			requireErr(t, err, apperr.NotFound, "account 424242 does not exist")
		})
	})
}
