// Package provision holds the rules of developer accounts, apps and keys,
// for everyone who changes them: operators through the CLI and partners
// through the developer portal call the same methods. It creates accounts
// and apps, changes their status, keeps redirect allowlists and webhook
// URLs valid, checks and hashes passwords, and rotates and revokes keys and webhook
// secrets; it makes and revokes the operator's scanner keys for the door.
// Keys and secrets are shown once, when issued; only key and
// password hashes are stored. Every change of an account or an app is
// written to the audit log in its own transaction, as made by the context's actor (audit.AsPartner).
//
// Refusals are *apperr.Error: validation_failed with Details keyed by the
// input's name ("email", "redirect-domain", …; the message spells it as the
// CLI's flag, and "account" for an account that has all the apps it may
// have), or not_found.
package provision

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// Service provisions accounts, apps and keys.
type Service struct {
	DB  *store.DB
	Now func() time.Time
	// AllowPrivateWebhooks accepts plain http:// webhook URLs and URLs on
	// special-purpose addresses such as loopback (development).
	AllowPrivateWebhooks bool
	// Password are the costs of password hashes; zero means
	// auth.DefaultPasswordParams.
	Password auth.PasswordParams
	// MaxAppsPerAccount is how many apps one account may have (whatever
	// their status); zero means DefaultMaxAppsPerAccount. Every app has
	// budgets of its own, so without a cap an account could buy capacity
	// by creating apps.
	MaxAppsPerAccount int
	// Changed is called after every write of accounts, apps, keys or
	// scanners (store.Watch.Changed of the tenant watch), so this
	// process's cached key lookups see it on the next request rather than
	// when the NOTIFY arrives.
	Changed func()
}

// inTx runs fn in a transaction, then tells Changed, whether it
// committed or not: a needless move only costs one reread.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	defer s.changed()
	return s.DB.RunInTx(ctx, nil, fn)
}

func (s *Service) changed() {
	if s.Changed != nil {
		s.Changed()
	}
}

// DefaultMaxAppsPerAccount is MAX_APPS_PER_ACCOUNT's default.
const DefaultMaxAppsPerAccount = 10

// ErrEmailTaken is wrapped in CreateAccount's refusal of an email that
// already has an account (errors.Is), for callers that must not tell the
// two apart to whoever asked: the portal's sign-up.
var ErrEmailTaken = errors.New("provision: an account with this email already exists")

func notFound(format string, args ...any) *apperr.Error {
	return apperr.New(apperr.NotFound, format, args...)
}

// AccountInput creates an account.
type AccountInput struct {
	Name   string
	Email  string
	Status string // defaults to active
	// Password, when set, lets the account sign in to the portal.
	Password string
}

// CreateAccount validates and stores a new developer account.
// Errors: validation_failed (name, email, status, password; an email that
// already has an account).
func (s *Service) CreateAccount(ctx context.Context, in AccountInput) (*store.Account, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, apperr.Invalid("name", "is required")
	}
	if p := clientinput.NameProblem(name); p != "" {
		return nil, apperr.Invalid("name", "%s", p)
	}
	if p := clientinput.TooLong(strings.TrimSpace(in.Email), clientinput.MaxEmail); p != "" {
		return nil, apperr.Invalid("email", "%s", p)
	}
	addr, err := mail.ParseAddress(in.Email)
	if err != nil || addr.Address != strings.TrimSpace(in.Email) {
		return nil, apperr.Invalid("email", "%q is not a valid email address", in.Email)
	}
	if in.Status == "" {
		in.Status = store.AccountActive
	}
	if err := checkAccountStatus(in.Status); err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	a := &store.Account{Name: name, Email: strings.ToLower(addr.Address), Status: in.Status, CreatedAt: now, UpdatedAt: now}
	if in.Password != "" {
		if a.PasswordHash, err = s.HashPassword(ctx, in.Password); err != nil {
			return nil, err
		}
	}
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := store.InsertAccount(ctx, tx, a); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("%w: %w", apperr.Invalid("email", "%q: an account with this email already exists", a.Email), ErrEmailTaken)
			}
			return err
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: a.ID, Action: audit.AccountCreate, Detail: "status " + a.Status})
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// SetAccountStatus changes an account's status.
// Errors: validation_failed (status), not_found.
func (s *Service) SetAccountStatus(ctx context.Context, id int64, status string) error {
	if err := checkAccountStatus(status); err != nil {
		return err
	}
	now := s.Now().UTC()
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		err := store.SetAccountStatus(ctx, tx, id, status, now)
		if errors.Is(err, store.ErrNotFound) {
			return notFound("account %d does not exist", id)
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: id, Action: audit.AccountStatus, Detail: "status " + status})
	})
}

// ListAccounts returns the accounts, oldest first, only those of status
// unless it is "".
// Errors: validation_failed (status).
func (s *Service) ListAccounts(ctx context.Context, status string) ([]store.Account, error) {
	if status != "" {
		if err := checkAccountStatus(status); err != nil {
			return nil, err
		}
	}
	return store.ListAccounts(ctx, s.DB, status)
}

func checkAccountStatus(s string) error {
	switch s {
	case store.AccountActive, store.AccountPendingApproval, store.AccountDisabled:
		return nil
	}
	return &apperr.Error{Code: apperr.ValidationFailed,
		Message: fmt.Sprintf("status %q is not one of active, pending_approval, disabled", s),
		Details: apperr.Details{"status": {fmt.Sprintf("%q is not one of active, pending_approval, disabled", s)}}}
}

// Password length bounds, in characters. The upper bound keeps hashing
// cheap to bound; length, not composition rules, is what makes a password
// strong (NIST SP 800-63B).
const (
	MinPasswordLength = 10
	MaxPasswordLength = 256
)

// HashPassword checks a new portal password against the rules and returns
// its hash, for an account to be created with or to store.
// Errors: validation_failed (password).
func (s *Service) HashPassword(ctx context.Context, password string) (string, error) {
	n := utf8.RuneCountInString(password)
	switch {
	case !utf8.ValidString(password):
		return "", apperr.Invalid("password", "must be valid text")
	case n < MinPasswordLength:
		return "", apperr.Invalid("password", "must be at least %d characters long", MinPasswordLength)
	case n > MaxPasswordLength:
		return "", apperr.Invalid("password", "must be at most %d characters long", MaxPasswordLength)
	}
	return auth.HashPassword(ctx, password, s.Password)
}

// AppInput creates an app.
type AppInput struct {
	AccountID       int64
	Name            string
	RedirectDomains []string
	WebhookURL      string
}

// NewApp is a freshly created app with the secrets shown this once.
type NewApp struct {
	App           *store.App
	TestKey       string
	LiveKey       string
	WebhookSecret string
}

// CreateApp stores an app with a test key, a live key and a webhook secret,
// all in one transaction, unless the account already has MaxAppsPerAccount
// apps.
// Errors: validation_failed (name, redirect-domain, webhook-url; account,
// when it has all the apps it may have), not_found (the account).
func (s *Service) CreateApp(ctx context.Context, in AppInput) (*NewApp, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, apperr.Invalid("name", "is required")
	}
	if p := clientinput.NameProblem(name); p != "" {
		return nil, apperr.Invalid("name", "%s", p)
	}
	domains, err := NormalizeDomains(in.RedirectDomains)
	if err != nil {
		return nil, err
	}
	if err := s.CheckWebhookURL(in.WebhookURL); err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	out := &NewApp{WebhookSecret: newWebhookSecret()}
	out.App = &store.App{
		AccountID: in.AccountID, Name: name, Status: store.AppActive, RedirectDomains: domains,
		WebhookURL: in.WebhookURL, WebhookSecret: out.WebhookSecret, CreatedAt: now, UpdatedAt: now,
	}
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		// Locked, so that apps created at once are counted one after another.
		if err := store.LockAccount(ctx, tx, in.AccountID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return notFound("account %d does not exist", in.AccountID)
			}
			return err
		}
		if err := s.checkAppCap(ctx, tx, in.AccountID); err != nil {
			return err
		}
		if err := store.InsertApp(ctx, tx, out.App); err != nil {
			return err
		}
		// The endpoints that follow the app's webhook URL and secret.
		for _, ep := range webhook.AppEndpoints(out.App.ID, now) {
			if err := store.InsertWebhookEndpoint(ctx, tx, ep); err != nil {
				return err
			}
		}
		if out.TestKey, err = issueKey(ctx, tx, out.App.ID, store.EnvTest, now); err != nil {
			return err
		}
		if out.LiveKey, err = issueKey(ctx, tx, out.App.ID, store.EnvLive, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: in.AccountID, AppID: out.App.ID, Action: audit.AppCreate,
			Detail: fmt.Sprintf("name %q; test and live keys and webhook secret issued", name)})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkAppCap refuses another app for an account that has
// MaxAppsPerAccount of them already.
// Errors: validation_failed (account).
func (s *Service) checkAppCap(ctx context.Context, db bun.IDB, accountID int64) error {
	most := s.MaxAppsPerAccount
	if most <= 0 {
		most = DefaultMaxAppsPerAccount
	}
	n, err := store.CountAccountApps(ctx, db, accountID)
	if err != nil {
		return err
	}
	if n < most {
		return nil
	}
	// The message is the CLI's (an operator may raise the cap); the
	// detail is the portal's, for the partner.
	return &apperr.Error{Code: apperr.ValidationFailed,
		Message: fmt.Sprintf("account %d already has %d apps, the most one account may have (MAX_APPS_PER_ACCOUNT)", accountID, n),
		Details: apperr.Details{"account": {fmt.Sprintf("already has %d apps, the most one account may have; ask the Boxoffice team if you need more", n)}}}
}

// AppUpdate changes an app; nil fields stay as they are.
type AppUpdate struct {
	// RedirectDomains, when not nil, are added to the allowlist.
	RedirectDomains []string
	// RemoveRedirectDomains are taken off the allowlist.
	RemoveRedirectDomains []string
	// ClearRedirectDomains empties the allowlist before adding.
	ClearRedirectDomains bool
	WebhookURL           *string
	Name                 *string
}

// UpdateApp applies an AppUpdate and returns the app as stored.
// Errors: validation_failed (name, redirect-domain, webhook-url), not_found.
func (s *Service) UpdateApp(ctx context.Context, id int64, up AppUpdate) (*store.App, error) {
	add, err := NormalizeDomains(up.RedirectDomains)
	if err != nil {
		return nil, err
	}
	remove, err := NormalizeDomains(up.RemoveRedirectDomains)
	if err != nil {
		return nil, err
	}
	if up.WebhookURL != nil {
		if err := s.CheckWebhookURL(*up.WebhookURL); err != nil {
			return nil, err
		}
	}
	var name string
	if up.Name != nil {
		if name = strings.TrimSpace(*up.Name); name == "" {
			return nil, apperr.Invalid("name", "must not be empty")
		}
		if p := clientinput.NameProblem(name); p != "" {
			return nil, apperr.Invalid("name", "%s", p)
		}
	}
	now := s.Now().UTC()
	var app *store.App
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		app, err = s.app(ctx, tx, id)
		if err != nil {
			return err
		}
		var changes []audit.Entry
		note := func(action, detail string) {
			changes = append(changes, audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: action, Detail: detail})
		}
		if up.ClearRedirectDomains {
			for _, d := range app.RedirectDomains {
				note(audit.RedirectRemove, d)
			}
			app.RedirectDomains = nil
		}
		for _, d := range remove {
			if i := slices.Index(app.RedirectDomains, d); i >= 0 {
				app.RedirectDomains = slices.Delete(app.RedirectDomains, i, i+1)
				note(audit.RedirectRemove, d)
			}
		}
		for _, d := range add {
			if !slices.Contains(app.RedirectDomains, d) {
				app.RedirectDomains = append(app.RedirectDomains, d)
				note(audit.RedirectAdd, d)
			}
		}
		if up.WebhookURL != nil && *up.WebhookURL != app.WebhookURL {
			app.WebhookURL = *up.WebhookURL
			note(audit.WebhookURL, webhookURLDetail(app.WebhookURL))
		}
		if up.Name != nil && name != app.Name {
			note(audit.AppRename, fmt.Sprintf("%q → %q", app.Name, name))
			app.Name = name
		}
		app.UpdatedAt = now
		if err := store.UpdateApp(ctx, tx, app); err != nil {
			return err
		}
		for _, e := range changes {
			if err := audit.Record(ctx, tx, now, e); err != nil {
				return err
			}
		}
		return nil
	})
	return app, err
}

// webhookURLDetail names a webhook URL in the audit log by scheme and host
// only: a path or query may carry the receiver's own secret.
func webhookURLDetail(raw string) string {
	if raw == "" {
		return "removed"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "set"
	}
	return "set to " + u.Scheme + "://" + u.Host + "/…"
}

// SetAppStatus suspends or reactivates an app.
// Errors: validation_failed (status), not_found.
func (s *Service) SetAppStatus(ctx context.Context, id int64, status string) error {
	if status != store.AppActive && status != store.AppSuspended {
		return &apperr.Error{Code: apperr.ValidationFailed,
			Message: fmt.Sprintf("status %q is not one of active, suspended", status),
			Details: apperr.Details{"status": {fmt.Sprintf("%q is not one of active, suspended", status)}}}
	}
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, id)
		if err != nil {
			return err
		}
		app.Status, app.UpdatedAt = status, s.Now().UTC()
		if err := store.UpdateApp(ctx, tx, app); err != nil {
			return err
		}
		return audit.Record(ctx, tx, app.UpdatedAt, audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: audit.AppStatus, Detail: "status " + status})
	})
}

// SetTicketEmails switches an app's ticket emails on or off: off is for an
// app that delivers tickets to its buyers itself, whose later orders'
// tickets_email stays not_sent. Orders already queued are still sent.
// Errors: not_found.
func (s *Service) SetTicketEmails(ctx context.Context, id int64, on bool) (*store.App, error) {
	var out *store.App
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.Now().UTC()
		if err := store.SetTicketEmails(ctx, tx, id, on, now); err != nil {
			return err
		}
		app.TicketEmails, app.UpdatedAt, out = on, now, app
		detail := "off"
		if on {
			detail = "on"
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: audit.TicketEmails, Detail: detail})
	})
	return out, err
}

// ListApps returns the apps, oldest first; with an account id, only that
// account's, and an error when the account does not exist (so "no apps" is
// never a typo's answer).
func (s *Service) ListApps(ctx context.Context, accountID int64) ([]store.App, error) {
	if accountID != 0 {
		if _, err := store.AccountByID(ctx, s.DB, accountID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, fmt.Errorf("account %d does not exist", accountID)
			}
			return nil, err
		}
	}
	return store.ListApps(ctx, s.DB, accountID)
}

// AppDetails is an app as an operator may see it: never its keys or webhook
// secret, only the hints of its active keys.
type AppDetails struct {
	App  *store.App
	Keys []KeyHint
}

// KeyHint names one active key of an app without revealing it.
type KeyHint struct {
	Environment string
	Hint        string // the key's last four characters
	CreatedAt   time.Time
}

// ShowApp returns an app and the hints of its active keys.
func (s *Service) ShowApp(ctx context.Context, id int64) (*AppDetails, error) {
	app, err := s.app(ctx, s.DB, id)
	if err != nil {
		return nil, err
	}
	keys, err := store.ActiveAPIKeys(ctx, s.DB, id)
	if err != nil {
		return nil, err
	}
	d := &AppDetails{App: app, Keys: []KeyHint{}}
	for _, k := range keys {
		d.Keys = append(d.Keys, KeyHint{Environment: k.Environment, Hint: k.Hint, CreatedAt: k.CreatedAt.UTC()})
	}
	return d, nil
}

// RotateKey revokes an app's current key of env and issues a new one.
// Errors: validation_failed (env), not_found.
func (s *Service) RotateKey(ctx context.Context, appID int64, env string) (string, error) {
	if err := auth.CheckEnv(env); err != nil {
		return "", err
	}
	var key string
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, appID)
		if err != nil {
			return err
		}
		now := s.Now().UTC()
		if _, err := store.RevokeAPIKeys(ctx, tx, appID, env, now); err != nil {
			return err
		}
		if key, err = issueKey(ctx, tx, appID, env, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: app.AccountID, AppID: appID, Action: audit.KeyRotate,
			Detail: env + " key rotated; the old one is revoked"})
	})
	return key, err
}

// RevokeKey revokes an app's key of env without issuing a new one.
// Errors: validation_failed (env), not_found (the app, or an active key).
func (s *Service) RevokeKey(ctx context.Context, appID int64, env string) error {
	if err := auth.CheckEnv(env); err != nil {
		return err
	}
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, appID)
		if err != nil {
			return err
		}
		now := s.Now().UTC()
		n, err := store.RevokeAPIKeys(ctx, tx, appID, env, now)
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound("app %d has no active %s key", appID, env)
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: app.AccountID, AppID: appID, Action: audit.KeyRevoke,
			Detail: env + " key revoked"})
	})
}

// RotateWebhookSecret replaces an app's webhook signing secret and returns
// the new one, shown this once. Deliveries from then on are signed with it.
// Errors: not_found.
func (s *Service) RotateWebhookSecret(ctx context.Context, appID int64) (string, error) {
	secret := newWebhookSecret()
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, appID)
		if err != nil {
			return err
		}
		now := s.Now().UTC()
		if err := store.SetWebhookSecret(ctx, tx, appID, secret, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: app.AccountID, AppID: appID, Action: audit.WebhookSecretRotate,
			Detail: "webhook secret rotated"})
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

func (s *Service) app(ctx context.Context, db bun.IDB, id int64) (*store.App, error) {
	app, err := store.AppByID(ctx, db, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("app %d does not exist", id)
	}
	return app, err
}

func issueKey(ctx context.Context, db bun.IDB, appID int64, env string, now time.Time) (string, error) {
	key, hash, hint := auth.NewKey(env)
	err := store.InsertAPIKey(ctx, db, &store.APIKey{AppID: appID, Environment: env, KeyHash: hash, Hint: hint, CreatedAt: now})
	return key, err
}

// newWebhookSecret returns a fresh secret in the form signing needs.
func newWebhookSecret() string { return webhook.NewSecret() }

// NormalizeDomains lower-cases redirect hosts and refuses anything that is
// not a bare host name (no scheme, port or path).
// Errors: validation_failed (redirect-domain).
func NormalizeDomains(in []string) ([]string, error) {
	var out []string
	for _, d := range in {
		h := strings.ToLower(strings.TrimSpace(d))
		if !validHost(h) {
			return nil, apperr.Invalid("redirect-domain", "%q is not a host name such as shop.example.com", d)
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out, nil
}

func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
				return false
			}
		}
	}
	return true
}

// CheckWebhookURL refuses a webhook URL that deliveries could not safely
// use: anything but an absolute https:// URL, credentials in the URL, and
// hosts that are addresses of webhook.Special's table (or localhost),
// unless AllowPrivateWebhooks; and one longer than clientinput.MaxURL.
// Delivery checks the address it dials again, after DNS; this check tells
// the person setting the URL at once. "" (no webhook) is valid.
// Errors: validation_failed (webhook-url).
func (s *Service) CheckWebhookURL(raw string) error {
	if raw == "" {
		return nil
	}
	if p := clientinput.TooLong(raw, clientinput.MaxURL); p != "" {
		return apperr.Invalid("webhook-url", "%s", p)
	}
	u, err := url.Parse(raw)
	// A receiver on the partner's own machine is what `boxoffice listen`
	// is for: a refusal of one says so.
	listen := ""
	if err == nil && !s.AllowPrivateWebhooks && onThisMachine(u.Hostname()) {
		listen = fmt.Sprintf("; to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to %s", raw)
	}
	if err != nil || u.Host == "" || u.Opaque != "" || (u.Scheme != "https" && !(s.AllowPrivateWebhooks && u.Scheme == "http")) {
		return apperr.Invalid("webhook-url", "%q must be an absolute https:// URL%s", raw, listen)
	}
	if u.User != nil {
		return apperr.Invalid("webhook-url", "%q must not carry a user name or password", raw)
	}
	if s.AllowPrivateWebhooks {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return apperr.Invalid("webhook-url", "%q must be reachable on the public internet, not localhost%s", raw, listen)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if block := webhook.Special(ip); block != "" {
			return apperr.Invalid("webhook-url", "%q points at a special-purpose address (%s), which never receives webhooks%s", raw, block, listen)
		}
	}
	return nil
}

// onThisMachine reports whether host names the machine itself or its
// private network: localhost, a loopback or a private address, or one of
// those written as an IPv4-mapped IPv6 address.
func onThisMachine(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified()
}
