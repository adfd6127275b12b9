package accounts

import (
	"context"
	"time"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook"
)

// The portal's webhook page: a partner manages the endpoints of one of
// their apps per environment and reads and replays its event log, through
// the same webhook service the API and the CLI call. Every method checks
// that the app is the session's account's and records the change as the
// partner's. Errors: account_pending_approval, account_disabled,
// not_found (the app), and those of the webhook service's method.

// WebhookPage is what an app's webhook page shows of one environment.
type WebhookPage struct {
	App       *store.App
	Env       string
	Endpoints []*webhook.Endpoint
	Events    *webhook.EventPage
}

// PageLogEvents is how many events the webhook page lists at a time.
const PageLogEvents = 25

// WebhookPage reads an app's endpoints of env and its newest events
// (after cursor, when given).
// Errors: validation_failed (env, cursor).
func (s *Service) WebhookPage(ctx context.Context, sess *Session, appID int64, env, cursor string) (*WebhookPage, error) {
	app, err := s.ownApp(ctx, sess, appID)
	if err != nil {
		return nil, err
	}
	if env == "" {
		env = store.EnvTest
	}
	if err := auth.CheckEnv(env); err != nil {
		return nil, err
	}
	p := &WebhookPage{App: app, Env: env}
	if p.Endpoints, err = s.Webhooks.Endpoints(ctx, appID, env); err != nil {
		return nil, err
	}
	if p.Events, err = s.Webhooks.Events(ctx, appID, env, webhook.EventFilter{Limit: PageLogEvents, Cursor: cursor}); err != nil {
		return nil, err
	}
	return p, nil
}

// CreateEndpoint adds an endpoint to the app's environment; its secret is
// in the answer, once.
func (s *Service) CreateEndpoint(ctx context.Context, sess *Session, appID int64, env string, in webhook.EndpointInput) (*webhook.Endpoint, error) {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return nil, err
	}
	return s.Webhooks.CreateEndpoint(asPartner(ctx), appID, env, in)
}

// UpdateEndpoint changes an endpoint of the app.
func (s *Service) UpdateEndpoint(ctx context.Context, sess *Session, appID int64, env, id string, in webhook.EndpointInput) (*webhook.Endpoint, error) {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return nil, err
	}
	return s.Webhooks.UpdateEndpoint(asPartner(ctx), appID, env, id, in)
}

// DeleteEndpoint deletes an endpoint of the app.
func (s *Service) DeleteEndpoint(ctx context.Context, sess *Session, appID int64, env, id string) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	return s.Webhooks.DeleteEndpoint(asPartner(ctx), appID, env, id)
}

// RotateEndpointSecret gives an endpoint of the app a new secret, in the
// answer once.
func (s *Service) RotateEndpointSecret(ctx context.Context, sess *Session, appID int64, env, id string) (*webhook.Endpoint, error) {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return nil, err
	}
	return s.Webhooks.RotateEndpointSecret(asPartner(ctx), appID, env, id)
}

// RecoverEndpoint queues again the events since whose delivery to an
// endpoint of the app failed or was not sent, and returns how many.
func (s *Service) RecoverEndpoint(ctx context.Context, sess *Session, appID int64, env, id string, since time.Time) (int, error) {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return 0, err
	}
	return s.Webhooks.Recover(asPartner(ctx), appID, env, id, since)
}

// RedeliverEvent starts a new round of delivery of an event of the app to
// one endpoint, or ("") every enabled endpoint that takes it.
func (s *Service) RedeliverEvent(ctx context.Context, sess *Session, appID int64, env, id, endpointID string) error {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return err
	}
	_, err := s.Webhooks.RedeliverEvent(asPartner(ctx), appID, env, id, endpointID)
	return err
}
