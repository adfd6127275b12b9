// Package provision is what operators do to developer accounts, apps and
// keys: create them, change their status, rotate and revoke keys. Keys and
// webhook secrets are shown once, when issued; only key hashes are stored.
package provision

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// Service provisions accounts, apps and keys.
type Service struct {
	DB  *store.DB
	Now func() time.Time
	// AllowPrivateWebhooks accepts plain http:// webhook URLs (development).
	AllowPrivateWebhooks bool
}

// AccountInput creates an account.
type AccountInput struct {
	Name   string
	Email  string
	Status string // defaults to active
}

// CreateAccount validates and stores a new developer account.
func (s *Service) CreateAccount(ctx context.Context, in AccountInput) (*store.Account, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, errors.New("--name is required")
	}
	addr, err := mail.ParseAddress(in.Email)
	if err != nil || addr.Address != strings.TrimSpace(in.Email) {
		return nil, fmt.Errorf("--email %q is not a valid email address", in.Email)
	}
	if in.Status == "" {
		in.Status = store.AccountActive
	}
	if err := checkAccountStatus(in.Status); err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	a := &store.Account{Name: name, Email: strings.ToLower(addr.Address), Status: in.Status, CreatedAt: now, UpdatedAt: now}
	if err := store.InsertAccount(ctx, s.DB, a); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, fmt.Errorf("an account with email %s already exists", a.Email)
		}
		return nil, err
	}
	return a, nil
}

// SetAccountStatus changes an account's status.
func (s *Service) SetAccountStatus(ctx context.Context, id int64, status string) error {
	if err := checkAccountStatus(status); err != nil {
		return err
	}
	err := store.SetAccountStatus(ctx, s.DB, id, status, s.Now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("account %d does not exist", id)
	}
	return err
}

// ListAccounts returns the developer accounts, oldest first; with a
// status, only the accounts in it (the CLI's `accounts list --status` and
// the portal's operator views share this).
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
	return fmt.Errorf("status %q is not one of active, pending_approval, disabled", s)
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
// all in one transaction.
func (s *Service) CreateApp(ctx context.Context, in AppInput) (*NewApp, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, errors.New("--name is required")
	}
	domains, err := normalizeDomains(in.RedirectDomains)
	if err != nil {
		return nil, err
	}
	if err := s.checkWebhookURL(in.WebhookURL); err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	out := &NewApp{WebhookSecret: newWebhookSecret()}
	out.App = &store.App{
		AccountID: in.AccountID, Name: name, Status: store.AppActive, RedirectDomains: domains,
		WebhookURL: in.WebhookURL, WebhookSecret: out.WebhookSecret, CreatedAt: now, UpdatedAt: now,
	}
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := store.AccountByID(ctx, tx, in.AccountID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("account %d does not exist", in.AccountID)
			}
			return err
		}
		if err := store.InsertApp(ctx, tx, out.App); err != nil {
			return err
		}
		if out.TestKey, err = issueKey(ctx, tx, out.App.ID, store.EnvTest, now); err != nil {
			return err
		}
		out.LiveKey, err = issueKey(ctx, tx, out.App.ID, store.EnvLive, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppUpdate changes an app; nil fields stay as they are.
type AppUpdate struct {
	// RedirectDomains, when not nil, are added to the allowlist.
	RedirectDomains []string
	// ClearRedirectDomains empties the allowlist before adding.
	ClearRedirectDomains bool
	WebhookURL           *string
	Name                 *string
}

// UpdateApp applies an AppUpdate and returns the app as stored.
func (s *Service) UpdateApp(ctx context.Context, id int64, up AppUpdate) (*store.App, error) {
	domains, err := normalizeDomains(up.RedirectDomains)
	if err != nil {
		return nil, err
	}
	if up.WebhookURL != nil {
		if err := s.checkWebhookURL(*up.WebhookURL); err != nil {
			return nil, err
		}
	}
	var app *store.App
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		app, err = s.app(ctx, tx, id)
		if err != nil {
			return err
		}
		if up.ClearRedirectDomains {
			app.RedirectDomains = nil
		}
		for _, d := range domains {
			if !slices.Contains(app.RedirectDomains, d) {
				app.RedirectDomains = append(app.RedirectDomains, d)
			}
		}
		if up.WebhookURL != nil {
			app.WebhookURL = *up.WebhookURL
		}
		if up.Name != nil {
			if strings.TrimSpace(*up.Name) == "" {
				return errors.New("--name must not be empty")
			}
			app.Name = strings.TrimSpace(*up.Name)
		}
		app.UpdatedAt = s.Now().UTC()
		return store.UpdateApp(ctx, tx, app)
	})
	return app, err
}

// SetAppStatus suspends or reactivates an app.
func (s *Service) SetAppStatus(ctx context.Context, id int64, status string) error {
	if status != store.AppActive && status != store.AppSuspended {
		return fmt.Errorf("status %q is not one of active, suspended", status)
	}
	return s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, id)
		if err != nil {
			return err
		}
		app.Status, app.UpdatedAt = status, s.Now().UTC()
		return store.UpdateApp(ctx, tx, app)
	})
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

// RotateWebhookSecret gives an app a new webhook secret and returns it; it
// is shown this once. Every delivery attempt from then on, retries of
// earlier events included, is signed with it.
func (s *Service) RotateWebhookSecret(ctx context.Context, id int64) (string, error) {
	secret := newWebhookSecret()
	err := store.SetAppWebhookSecret(ctx, s.DB, id, secret, s.Now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("app %d does not exist", id)
	}
	if err != nil {
		return "", err
	}
	return secret, nil
}

// RotateKey revokes an app's current key of env and issues a new one.
func (s *Service) RotateKey(ctx context.Context, appID int64, env string) (string, error) {
	if err := checkEnv(env); err != nil {
		return "", err
	}
	var key string
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := s.app(ctx, tx, appID); err != nil {
			return err
		}
		now := s.Now().UTC()
		if _, err := store.RevokeAPIKeys(ctx, tx, appID, env, now); err != nil {
			return err
		}
		var err error
		key, err = issueKey(ctx, tx, appID, env, now)
		return err
	})
	return key, err
}

// RevokeKey revokes an app's key of env without issuing a new one.
func (s *Service) RevokeKey(ctx context.Context, appID int64, env string) error {
	if err := checkEnv(env); err != nil {
		return err
	}
	return s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := s.app(ctx, tx, appID); err != nil {
			return err
		}
		n, err := store.RevokeAPIKeys(ctx, tx, appID, env, s.Now().UTC())
		if err == nil && n == 0 {
			return fmt.Errorf("app %d has no active %s key", appID, env)
		}
		return err
	})
}

func (s *Service) app(ctx context.Context, db bun.IDB, id int64) (*store.App, error) {
	app, err := store.AppByID(ctx, db, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("app %d does not exist", id)
	}
	return app, err
}

func issueKey(ctx context.Context, db bun.IDB, appID int64, env string, now time.Time) (string, error) {
	key, hash, hint := auth.NewKey(env)
	err := store.InsertAPIKey(ctx, db, &store.APIKey{AppID: appID, Environment: env, KeyHash: hash, Hint: hint, CreatedAt: now})
	return key, err
}

func checkEnv(env string) error {
	if env != store.EnvTest && env != store.EnvLive {
		return fmt.Errorf("--env %q is not one of test, live", env)
	}
	return nil
}

// newWebhookSecret returns a fresh secret in the form signing needs.
func newWebhookSecret() string { return webhook.NewSecret() }

// normalizeDomains lower-cases redirect hosts and refuses anything that is
// not a bare host name (no scheme, port or path).
func normalizeDomains(in []string) ([]string, error) {
	var out []string
	for _, d := range in {
		h := strings.ToLower(strings.TrimSpace(d))
		if !validHost(h) {
			return nil, fmt.Errorf("--redirect-domain %q is not a host name such as shop.example.com", d)
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

func (s *Service) checkWebhookURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(s.AllowPrivateWebhooks && u.Scheme == "http")) {
		return fmt.Errorf("--webhook-url %q must be an absolute https:// URL", raw)
	}
	return nil
}
