// Package admission decides whether an API request may run at all, before
// any API-specific work, in this order: a client IP over its
// failed-authentication limit is refused before any key lookup; then the
// key is authenticated (a refusal counts against the IP, an IPv6 client's
// /64, and one that puts it over the limit is answered
// rate_limit_exceeded); then the app's request limit applies, and its
// account's (all the account's apps together, per environment, so more
// apps do not buy more requests). Checkout creates have one more step, the
// checkout limits of the app and of its account, which checkout.Service
// takes through Gate.Checkout before it looks at the Idempotency-Key or the
// body, whichever API the request came from.
//
// A route takes app keys, scanner keys (the door's check-in routes) or
// either (GraphQL, which gives each kind its own fields); a key of the
// other kind is refused (scanner_key_not_allowed, scanner_key_required)
// and counts against the IP as every refused key does. Scanner keys are
// the operator's, one event each, and a door scans in bursts (a crowd at
// opening time): the apps' request limits do not apply to them.
package admission

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/observe"
	"github.com/boxoffice/boxoffice/ratelimit"
)

// Gate admits API requests.
type Gate struct {
	Auth   *auth.Authenticator
	Limits *ratelimit.Limits
	// Tarpit holds refusals for a rate limit before they are answered;
	// nil answers them at once.
	Tarpit *Tarpit
}

// Keys says which kind of key a route takes.
type Keys int

// Kinds of route.
const (
	// AppKeys: an app's key; a scanner key is scanner_key_not_allowed.
	AppKeys Keys = iota
	// ScannerKeys: a scanner key; an app's key is scanner_key_required.
	ScannerKeys
	// AnyKeys: either kind.
	AnyKeys
)

// Middleware admits each request, of a route that takes keys (keys
// tells), or answers it with fail: rate_limit_exceeded (failed-auth
// bucket or the app's limit), an authentication error of
// auth.Authenticator, scanner_key_not_allowed or scanner_key_required.
// An admitted request carries its auth.Principal.
func (g *Gate) Middleware(keys func(*http.Request) Keys, fail func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := ratelimit.WithHeaders(r.Context(), w.Header())
			p, err := g.admit(ctx, r.Header.Get(auth.Header), keys(r))
			if err != nil {
				if e := apperr.From(err); e.Code == apperr.RateLimitExceeded {
					g.Tarpit.Hold(ctx, ratelimit.ClientKey(ratelimit.ClientIPFrom(ctx)), time.Duration(e.RetryAfter)*time.Second)
				}
				fail(w, r.WithContext(ctx), err)
				return
			}
			// One copy of the request, not one per context value.
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(ctx, p)))
		})
	}
}

// Admit authenticates key, of either kind, for a request from ctx's
// client IP and counts it against the limits: for transports that carry
// the key elsewhere than a header (a WebSocket's connection_init).
// Errors: rate_limit_exceeded, missing_api_key, invalid_api_key,
// app_suspended, account_disabled, account_pending_approval.
func (g *Gate) Admit(ctx context.Context, key string) (*auth.Principal, error) {
	return g.admit(ctx, key, AnyKeys)
}

// AdmitScanner is Admit for a page that takes only scanner keys in its
// own way (the door page's dates).
// Errors: those of Admit, scanner_key_required.
func (g *Gate) AdmitScanner(ctx context.Context, key string) (*auth.Principal, error) {
	return g.admit(ctx, key, ScannerKeys)
}

// admit is Admit for a route that takes keys.
// Errors: those of Admit, scanner_key_not_allowed, scanner_key_required.
func (g *Gate) admit(ctx context.Context, key string, keys Keys) (*auth.Principal, error) {
	client := ratelimit.ClientKey(ratelimit.ClientIPFrom(ctx))
	const what = "failed authentication attempts from this address"
	if err := g.Limits.FailedAuth.Blocked(ctx, client, what); err != nil {
		return nil, err
	}
	p, err := g.Auth.Authenticate(ctx, key)
	if err == nil {
		err = kindAllowed(p, keys)
	}
	if err != nil {
		if s := apperr.From(err).Status(); s == http.StatusUnauthorized || s == http.StatusForbidden {
			// Requests that passed Blocked together may have been looked
			// up together; counting each failure decides which of them
			// still fit, so the bucket holds exactly its limit.
			if lerr := g.Limits.FailedAuth.Fail(ctx, client, what); lerr != nil {
				return nil, lerr
			}
		}
		return nil, err
	}
	if p.Scanner() {
		return p, nil
	}
	observe.SetCaller(ctx, p.AppID, p.Environment)
	if err := allow(ctx, g.Limits.App(p.Live()), g.Limits.Account(p.Live()), p.AccountID, p.AppID, p.Environment, "requests"); err != nil {
		return nil, err
	}
	return p, nil
}

// kindAllowed refuses a key of the kind the route does not take.
// Errors: scanner_key_not_allowed, scanner_key_required.
func kindAllowed(p *auth.Principal, keys Keys) error {
	switch keys {
	case AppKeys:
		return p.RequireApp()
	case ScannerKeys:
		return p.RequireScanner()
	}
	return nil
}

// Checkout counts a checkout create of an app of an account in an
// environment against the checkout limits of the app and of the account.
// Errors: rate_limit_exceeded.
func (g *Gate) Checkout(ctx context.Context, accountID, appID int64, env string) error {
	return allow(ctx, g.Limits.Checkout, g.Limits.CheckoutAccount, accountID, appID, env, "checkout sessions")
}

// allow counts one request of an app against app, then against its
// account's counterpart account, both keyed per environment. The app's
// own limit comes first: a request it refuses spends none of the budget
// the account's other apps share.
// Errors: rate_limit_exceeded.
func allow(ctx context.Context, app, account *ratelimit.Limiter, accountID, appID int64, env, what string) error {
	if err := app.Allow(ctx, env+":"+strconv.FormatInt(appID, 10), what+" for this app"); err != nil {
		return err
	}
	return account.Allow(ctx, env+":"+strconv.FormatInt(accountID, 10), what+" for this account's apps together")
}
