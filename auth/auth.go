package auth

import (
	"context"
	"errors"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// Header is the request header that carries the API key.
const Header = "X-API-Key"

// Kind is the kind of key a caller authenticated with.
type Kind string

// Kinds of key: an app's (svc_test_…, svc_live_…), or a door device's
// (svc_scan_test_…, svc_scan_live_…), which opens only the check-in
// routes and the fields GraphQL gives scanners.
const (
	KindApp     Kind = "app"
	KindScanner Kind = "scanner"
)

// Principal is the authenticated caller: one key of one app, or one
// scanner of one event.
type Principal struct {
	// Kind is KindScanner for a scanner; anything else is an app.
	Kind Kind
	// KeyID is the app key's id, or the scanner's.
	KeyID int64
	// AppID and AccountID are the app's and its account's; zero for a
	// scanner, which belongs to no app.
	AppID       int64
	AccountID   int64
	Environment string // "test" or "live"
	// EventID is the event a scanner admits to; zero for an app.
	EventID int64
}

// Scanner reports whether the caller is a door device (a scanner key).
func (p *Principal) Scanner() bool { return p.Kind == KindScanner }

// RequireApp refuses a scanner key where only an app's key goes:
// everything but check-in, on either API.
// Errors: scanner_key_not_allowed.
func (p *Principal) RequireApp() error {
	if p.Scanner() {
		return apperr.New(apperr.ScannerKeyNotAllowed, "A scanner key opens only check-in; use the app's API key here.")
	}
	return nil
}

// RequireScanner refuses an app's key where only a scanner key goes:
// check-in, on either API.
// Errors: scanner_key_required.
func (p *Principal) RequireScanner() error {
	if !p.Scanner() {
		return apperr.New(apperr.ScannerKeyRequired, "Check-in takes a scanner key (svc_scan_…), not an app's API key.")
	}
	return nil
}

// Live reports whether the caller uses a live key.
func (p *Principal) Live() bool { return p.Environment == store.EnvLive }

type ctxKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the caller of an authenticated request.
// Errors: unauthorized when the context carries no caller (a route wired
// without the authentication middleware).
func FromContext(ctx context.Context) (*Principal, error) {
	if p, ok := ctx.Value(ctxKey{}).(*Principal); ok {
		return p, nil
	}
	return nil, apperr.New(apperr.Unauthorized, "Authenticated app context is missing.")
}

// Authenticator checks API keys against the database, so a revoked key, a
// suspended app or a disabled account stops working at once on the server
// that made the change and within a NOTIFY's delivery (milliseconds) on
// every other.
type Authenticator struct {
	DB *store.DB
	// Cache, when set, keeps the keys found until the tenant tables change
	// (readcache.Tenants), so an admitted request usually makes no
	// statement at all.
	Cache Cache
}

// Cache keeps values read from the tenant tables until those change.
type Cache interface {
	Get(ctx context.Context, key any, load func() (any, error)) (any, error)
}

// Keys of the values Authenticator keeps in its Cache.
type (
	ownerHash   string
	scannerHash string
)

// owner returns the key with this hash, with its app and account.
// Errors: store.ErrNotFound.
func (a *Authenticator) owner(ctx context.Context, hash string) (*store.KeyOwner, error) {
	if a.Cache == nil {
		return store.KeyOwnerByHash(ctx, a.DB, hash)
	}
	v, err := a.Cache.Get(ctx, ownerHash(hash), func() (any, error) { return store.KeyOwnerByHash(ctx, a.DB, hash) })
	if err != nil {
		return nil, err
	}
	return v.(*store.KeyOwner), nil
}

// scannerByHash returns the scanner key with this hash. Errors: store.ErrNotFound.
func (a *Authenticator) scannerByHash(ctx context.Context, hash string) (*store.ScannerKey, error) {
	if a.Cache == nil {
		return store.ScannerKeyByHash(ctx, a.DB, hash)
	}
	v, err := a.Cache.Get(ctx, scannerHash(hash), func() (any, error) { return store.ScannerKeyByHash(ctx, a.DB, hash) })
	if err != nil {
		return nil, err
	}
	return v.(*store.ScannerKey), nil
}

// Authenticate resolves a raw X-API-Key value, an app's key or a
// scanner's, with one indexed lookup.
// Errors: missing_api_key, invalid_api_key (malformed, unknown or revoked),
// app_suspended, account_disabled, account_pending_approval.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (*Principal, error) {
	if key == "" {
		return nil, apperr.New(apperr.MissingAPIKey, "The X-API-Key header is required.")
	}
	kind, env := parseKey(key)
	switch kind {
	case "":
		return nil, errInvalidKey
	case KindScanner:
		return a.scanner(ctx, key, env)
	}
	o, err := a.owner(ctx, HashKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errInvalidKey
	}
	if err != nil {
		return nil, err
	}
	switch {
	case o.Revoked || o.Environment != env:
		return nil, errInvalidKey
	case o.AppStatus != store.AppActive:
		return nil, apperr.New(apperr.AppSuspended, "This app is suspended.")
	case o.AccountStatus == store.AccountDisabled:
		return nil, apperr.New(apperr.AccountDisabled, "This developer account is disabled.")
	case o.AccountStatus == store.AccountPendingApproval:
		return nil, apperr.New(apperr.AccountPendingApproval, "This developer account is awaiting approval.")
	case o.AccountStatus != store.AccountActive:
		return nil, errInvalidKey
	}
	return &Principal{Kind: KindApp, KeyID: o.KeyID, AppID: o.AppID, AccountID: o.AccountID, Environment: o.Environment}, nil
}

// scanner resolves a well-formed scanner key of env.
// Errors: invalid_api_key (unknown or revoked).
func (a *Authenticator) scanner(ctx context.Context, key, env string) (*Principal, error) {
	k, err := a.scannerByHash(ctx, HashKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errInvalidKey
	}
	if err != nil {
		return nil, err
	}
	if k.Revoked || k.Environment != env {
		return nil, errInvalidKey
	}
	return &Principal{Kind: KindScanner, KeyID: k.ID, Environment: k.Environment, EventID: k.EventID}, nil
}

var errInvalidKey = apperr.New(apperr.InvalidAPIKey, "The API key is invalid or has been revoked.")
