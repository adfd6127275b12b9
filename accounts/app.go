package accounts

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
)

// Apps returns the apps of the session's account.
// Errors: account_pending_approval, account_disabled.
func (s *Service) Apps(ctx context.Context, sess *Session) ([]store.App, error) {
	if err := CheckActive(sess.Account); err != nil {
		return nil, err
	}
	return store.ListApps(ctx, s.DB, sess.Account.ID)
}

// CreateApp creates an app in the session's account; its keys and webhook
// secret are in the result, shown this once.
// Errors: account_pending_approval, account_disabled, validation_failed (name).
func (s *Service) CreateApp(ctx context.Context, sess *Session, name string) (*provision.NewApp, error) {
	if err := CheckActive(sess.Account); err != nil {
		return nil, err
	}
	return s.Provision.CreateApp(asPartner(ctx), provision.AppInput{AccountID: sess.Account.ID, Name: name})
}

// RotateKey revokes the app's key of env and returns its replacement,
// shown this once.
// Errors: account_pending_approval, account_disabled, not_found,
// validation_failed (env).
func (s *Service) RotateKey(ctx context.Context, sess *Session, appID int64, env string) (string, error) {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return "", err
	}
	return s.Provision.RotateKey(asPartner(ctx), appID, env)
}

// RevokeKey revokes the app's key of env; requests with it fail at once.
// Errors: account_pending_approval, account_disabled, not_found (the app,
// or an active key), validation_failed (env).
func (s *Service) RevokeKey(ctx context.Context, sess *Session, appID int64, env string) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	return s.Provision.RevokeKey(asPartner(ctx), appID, env)
}

// AddRedirectDomain puts a host on the app's redirect allowlist.
// Errors: account_pending_approval, account_disabled, not_found,
// validation_failed (redirect-domain).
func (s *Service) AddRedirectDomain(ctx context.Context, sess *Session, appID int64, host string) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	_, err := s.Provision.UpdateApp(asPartner(ctx), appID, provision.AppUpdate{RedirectDomains: []string{host}})
	return err
}

// RemoveRedirectDomain takes a host off the app's redirect allowlist.
// Errors: account_pending_approval, account_disabled, not_found,
// validation_failed (redirect-domain).
func (s *Service) RemoveRedirectDomain(ctx context.Context, sess *Session, appID int64, host string) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	_, err := s.Provision.UpdateApp(asPartner(ctx), appID, provision.AppUpdate{RemoveRedirectDomains: []string{host}})
	return err
}

// SetWebhookURL sets the app's webhook URL; "" removes it.
// Errors: account_pending_approval, account_disabled, not_found,
// validation_failed (webhook-url).
func (s *Service) SetWebhookURL(ctx context.Context, sess *Session, appID int64, url string) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	url = strings.TrimSpace(url)
	_, err := s.Provision.UpdateApp(asPartner(ctx), appID, provision.AppUpdate{WebhookURL: &url})
	return err
}

// RotateWebhookSecret replaces the app's webhook secret and returns the new
// one, shown this once.
// Errors: account_pending_approval, account_disabled, not_found.
func (s *Service) RotateWebhookSecret(ctx context.Context, sess *Session, appID int64) (string, error) {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return "", err
	}
	return s.Provision.RotateWebhookSecret(asPartner(ctx), appID)
}

// SendTestEvent queues a webhook.test event of env to the app's webhook
// URL and returns its id. An app may send Config.TestEventsPerApp a minute.
// Errors: account_pending_approval, account_disabled, not_found,
// rate_limit_exceeded, validation_failed (env; webhook-url when the app
// has none; while deliveries to its URL are disabled).
func (s *Service) SendTestEvent(ctx context.Context, sess *Session, appID int64, env string) (string, error) {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return "", err
	}
	if err := s.TestEvents.Allow(ctx, strconv.FormatInt(appID, 10), "test events"); err != nil {
		wait := apperr.From(err).RetryAfter
		e := apperr.New(apperr.RateLimitExceeded, "Too many test events: an app may send %d a minute. Send the next one in %d s.",
			s.TestEvents.Limit, wait)
		e.RetryAfter = wait
		return "", e
	}
	return s.Webhooks.EmitTest(asPartner(ctx), appID, env)
}

// SetTicketEmails switches the ticket emails of the app's live orders on
// or off (off: the app delivers tickets itself).
// Errors: account_pending_approval, account_disabled, not_found.
func (s *Service) SetTicketEmails(ctx context.Context, sess *Session, appID int64, on bool) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	_, err := s.Provision.SetTicketEmails(asPartner(ctx), appID, on)
	return err
}

// ResumeWebhooks starts deliveries to the app's webhook URL again after
// they were disabled for failing too long.
// Errors: account_pending_approval, account_disabled, not_found,
// validation_failed (deliveries are not disabled).
func (s *Service) ResumeWebhooks(ctx context.Context, sess *Session, appID int64) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	return s.Webhooks.Resume(asPartner(ctx), appID)
}

// Redeliver queues another round of delivery of one of the app's events.
// Errors: account_pending_approval, account_disabled, not_found.
func (s *Service) Redeliver(ctx context.Context, sess *Session, appID int64, eventID string) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	ev, err := store.WebhookEventByID(ctx, s.DB, eventID)
	if err != nil || ev.AppID != appID {
		return apperr.New(apperr.NotFound, "Webhook event %s was not found for this app.", eventID)
	}
	return s.Webhooks.Redeliver(asPartner(ctx), eventID)
}

// OrderQuery picks the orders an app page lists, and the page of its
// delivery log.
type OrderQuery struct {
	Env       string // test (default) or live
	Reference string // part of a reference; "" for all
	// Email is the buyer's whole email address, in any case; "" for all.
	Email string
	// Review lists only orders flagged for a refund review.
	Review bool
	// Events is where the delivery log's page starts: a cursor the log
	// gave (AppPage.NextEvents), "" for the newest events.
	Events string
}

// Page sizes of an app page. The delivery log is paged and short, so that
// on a phone the page is not mostly log.
const (
	PageOrders = 50
	PageEvents = 10
)

// AppPage is everything an app's page shows.
type AppPage struct {
	App *store.App
	// Keys are the app's active keys by environment (absent when revoked).
	Keys map[string]*store.APIKey
	// Events are the newest webhook events, with their Attempts.
	Events   []store.WebhookEvent
	Attempts map[string][]store.WebhookAttempt
	// NextEvents continues the log after Events; "" on its last page.
	NextEvents string
	// Health is the failure streak of the app's webhook URL (nil when its
	// last delivery succeeded); past DisableAfter, deliveries stop.
	Health       *store.WebhookHealth
	DisableAfter time.Duration
	// Orders are the newest orders of Query, newest first.
	Orders []*store.Order
	Query  OrderQuery
}

// AppPage reads an app's page: its keys, a page of webhook deliveries
// (after q.Events) and the orders of q (store.SearchOrders: flagged ones
// from the index of refund reviews, a buyer's from the index of buyers'
// emails). An email is matched whole, in any case, as the buyer gave it
// at checkout (the checkout's rule for a valid address applies).
// Errors: account_pending_approval, account_disabled, not_found,
// validation_failed (env, reference, email, events).
func (s *Service) AppPage(ctx context.Context, sess *Session, appID int64, q OrderQuery) (*AppPage, error) {
	app, err := s.ownApp(ctx, sess, appID)
	if err != nil {
		return nil, err
	}
	if q.Env == "" {
		q.Env = store.EnvTest
	}
	if err := auth.CheckEnv(q.Env); err != nil {
		return nil, err
	}
	q.Reference = strings.ToLower(strings.TrimSpace(q.Reference))
	// Lowered, a part of a reference is one itself, or nothing.
	if q.Reference != "" && !store.PlausibleReference(q.Reference) {
		return nil, apperr.Invalid("reference", "may hold only letters, digits, '_' and '-' (at most %d), as order references do", store.MaxReferenceLength)
	}
	q.Email = strings.TrimSpace(q.Email)
	if q.Email != "" {
		if p := clientinput.EmailProblem(q.Email); p != "" {
			return nil, apperr.Invalid("email", "%s (a buyer's whole address, such as ama@example.com)", p)
		}
	}
	page := &AppPage{App: app, Query: q, Keys: map[string]*store.APIKey{}}
	keys, err := store.ActiveAPIKeys(ctx, s.DB, appID)
	if err != nil {
		return nil, err
	}
	for i := range keys {
		page.Keys[keys[i].Environment] = &keys[i]
	}
	log, err := s.Webhooks.RecentPage(ctx, appID, PageEvents, q.Events)
	if err != nil {
		return nil, err
	}
	page.Events, page.Attempts, page.NextEvents = log.Events, log.Attempts, log.NextCursor
	if page.Health, err = s.Webhooks.Health(ctx, appID); err != nil {
		return nil, err
	}
	page.DisableAfter = s.Webhooks.DisabledAfter()
	page.Orders, err = store.SearchOrders(ctx, s.DB, store.OrderSearch{AppID: appID, Environment: q.Env,
		RefundReview: q.Review, ReferenceContains: q.Reference, CustomerEmail: q.Email, Limit: PageOrders})
	if err != nil {
		return nil, err
	}
	return page, nil
}
