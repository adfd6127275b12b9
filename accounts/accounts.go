// Package accounts holds the rules of the developer portal, where partners
// sign up, sign in and manage their own apps — keys, redirect allowlist,
// webhook URL and secret, test events and the delivery log, and recent
// orders — without an operator: sign-up, sign-in and sessions, password
// reset links, the notice of a sign-up with an address that has an
// account, and what a partner may do to their apps. Service holds the
// partner's side of every rule (signed in, the account active, the app
// theirs) and then calls the same services the CLI calls (provision,
// webhook, checkout), as the partner (audit.AsPartner), so each action is
// validated once and audited. It serves no page and speaks no HTTP, so the
// portal's pages and the job that sends its notices share it without
// depending on each other.
//
// Refusals are *apperr.Error: unauthorized (not signed in, wrong password),
// account_pending_approval, account_disabled, not_found (not your app, or
// not your app's order),
// rate_limit_exceeded (sign-in attempts, test events), and the validation_failed errors
// of provision with their field names.
package accounts

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// Config holds the settings of the portal's accounts.
type Config struct {
	// BaseURL is PUBLIC_BASE_URL: reset links start with it, and an
	// https:// base makes the session cookie Secure.
	BaseURL string
	// SessionTTL is how long a sign-in lasts.
	SessionTTL time.Duration
	// ResetTTL is how long a password reset link works.
	ResetTTL time.Duration
	// SignInPerIP and SignInPerAccount are the sign-in attempts allowed per
	// SignInWindow from one client address and for one email address.
	SignInPerIP      int
	SignInPerAccount int
	SignInWindow     time.Duration
	// TestEventsPerApp is how many test events one app may send a minute:
	// each is a delivery, and a burst of them at a receiver that never
	// answers is work the service does for nothing.
	TestEventsPerApp int
}

// DefaultConfig returns the portal's defaults.
func DefaultConfig() Config {
	return Config{
		BaseURL: "http://localhost:8080", SessionTTL: 12 * time.Hour, ResetTTL: 24 * time.Hour,
		SignInPerIP: 30, SignInPerAccount: 10, SignInWindow: 15 * time.Minute,
		TestEventsPerApp: 10,
	}
}

// Service is what a partner can do in the portal.
type Service struct {
	DB        *store.DB
	Provision *provision.Service
	Webhooks  *webhook.Service
	// Checkout reads orders whole for the order page; nil answers it not
	// found.
	Checkout *checkout.Service
	// Refunds makes the order page's refunds; nil answers them not found.
	Refunds *refunds.Service
	Now     func() time.Time
	Config  Config
	// PerIP and PerAccount limit sign-in attempts (sign-ups count per IP).
	PerIP      *ratelimit.Limiter
	PerAccount *ratelimit.Limiter
	// TestEvents limits the test events of each app.
	TestEvents *ratelimit.Limiter
	// Mail sends account notices from From; EnqueueNotice schedules the
	// notice of a sign-up with an account's email inside tx
	// (jobs.Runner.EnqueueSignUpNotice), nil for none.
	Mail          mail.Sender
	From          string
	EnqueueNotice func(ctx context.Context, tx bun.Tx, accountID int64) error

	dummyOnce sync.Once
	dummy     string // a hash to check unknown emails against, so they take as long
}

// NewService builds the service with its sign-in limiters, counted in
// limits under prefix. Zero settings take DefaultConfig's.
func NewService(db *store.DB, prov *provision.Service, hooks *webhook.Service, limits *ratelimit.Store, prefix string, now func() time.Time, cfg Config) *Service {
	d := DefaultConfig()
	for _, v := range []struct{ got, def *time.Duration }{{&cfg.SessionTTL, &d.SessionTTL}, {&cfg.ResetTTL, &d.ResetTTL}, {&cfg.SignInWindow, &d.SignInWindow}} {
		if *v.got <= 0 {
			*v.got = *v.def
		}
	}
	if cfg.SignInPerIP <= 0 {
		cfg.SignInPerIP = d.SignInPerIP
	}
	if cfg.SignInPerAccount <= 0 {
		cfg.SignInPerAccount = d.SignInPerAccount
	}
	if cfg.TestEventsPerApp <= 0 {
		cfg.TestEventsPerApp = d.TestEventsPerApp
	}
	return &Service{
		DB: db, Provision: prov, Webhooks: hooks, Now: now, Config: cfg,
		PerIP:      limits.New(prefix+":portal-ip", cfg.SignInPerIP, cfg.SignInWindow),
		PerAccount: limits.New(prefix+":portal-account", cfg.SignInPerAccount, cfg.SignInWindow),
		TestEvents: limits.New(prefix+":portal-test-events", cfg.TestEventsPerApp, time.Minute),
	}
}

// asPartner returns ctx whose changes are audited as the partner's, from
// the request's client address.
func asPartner(ctx context.Context) context.Context {
	return audit.AsPartner(ctx, ratelimit.ClientIPFrom(ctx))
}

// newToken returns 256 random bits for a session or reset link, and the
// hash that is stored instead of it.
func newToken() (token, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, auth.HashKey(token)
}

// ErrNotSignedIn is the answer for a missing, unknown, expired or ended
// session.
var ErrNotSignedIn = apperr.New(apperr.Unauthorized, "Sign in to continue.")

var errSessionExpired = apperr.New(apperr.Unauthorized, "Your session has expired; sign in again.")

// CheckActive refuses an account that may only read its status.
// Errors: account_pending_approval, account_disabled.
func CheckActive(acc *store.Account) error {
	switch acc.Status {
	case store.AccountActive:
		return nil
	case store.AccountPendingApproval:
		return apperr.New(apperr.AccountPendingApproval, "Your account is awaiting approval. You can use the portal once an operator activates it.")
	}
	return apperr.New(apperr.AccountDisabled, "Your account is disabled. Contact the Boxoffice team to have it reactivated.")
}

// ownApp returns an app of the session's active account.
// Errors: account_pending_approval, account_disabled, not_found.
func (s *Service) ownApp(ctx context.Context, sess *Session, appID int64) (*store.App, error) {
	if err := CheckActive(sess.Account); err != nil {
		return nil, err
	}
	app, err := store.AppByID(ctx, s.DB, appID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && app.AccountID != sess.Account.ID) {
		return nil, apperr.New(apperr.NotFound, "App %d was not found in your account.", appID)
	}
	return app, err
}

// lookupEmail is how sign-in, the per-account limit and a sign-up with a
// taken address read an email address: its stored form (Email), so an
// address is found however its case or width was typed; one the identity
// rule refuses has no account and is only lower-cased.
func lookupEmail(email string) string {
	if e, err := Email(email); err == nil {
		return e
	}
	return strings.ToLower(strings.TrimSpace(email))
}
