package resolvers

import (
	"context"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/webhook"
)

// The webhook endpoint and event log routes of spec/webhook-endpoints.md
// and their GraphQL fields: each takes the calling app and the key's
// environment and calls the webhook service, where the rules live.
// Every one answers unauthorized or scanner_key_not_allowed first.

// WebhookEndpoints is GET /webhook-endpoints: the app's endpoints of the
// key's environment.
func (r *Resolver) WebhookEndpoints(ctx context.Context) ([]*webhook.Endpoint, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Webhooks.Endpoints(ctx, c.AppID, c.Environment)
}

// WebhookEndpoint is GET /webhook-endpoints/{id}.
// Errors: webhook_endpoint_not_found, environment_mismatch.
func (r *Resolver) WebhookEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Webhooks.Endpoint(ctx, c.AppID, c.Environment, id)
}

// CreateWebhookEndpoint is POST /webhook-endpoints; problems are what
// REST's decoding found.
// Errors: validation_failed.
func (r *Resolver) CreateWebhookEndpoint(ctx context.Context, in webhook.EndpointInput, problems apperr.Details) (*webhook.Endpoint, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := apperr.Validation(problems); err != nil {
		return nil, err
	}
	return r.Webhooks.CreateEndpoint(ctx, c.AppID, c.Environment, in)
}

// UpdateWebhookEndpoint is PATCH /webhook-endpoints/{id}.
// Errors: webhook_endpoint_not_found, environment_mismatch,
// validation_failed.
func (r *Resolver) UpdateWebhookEndpoint(ctx context.Context, id string, in webhook.EndpointInput, problems apperr.Details) (*webhook.Endpoint, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := apperr.Validation(problems); err != nil {
		return nil, err
	}
	return r.Webhooks.UpdateEndpoint(ctx, c.AppID, c.Environment, id, in)
}

// DeleteWebhookEndpoint is DELETE /webhook-endpoints/{id}.
// Errors: webhook_endpoint_not_found, environment_mismatch.
func (r *Resolver) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	c, err := caller(ctx)
	if err != nil {
		return err
	}
	return r.Webhooks.DeleteEndpoint(ctx, c.AppID, c.Environment, id)
}

// RotateWebhookEndpointSecret is POST /webhook-endpoints/{id}/rotate-secret.
// Errors: webhook_endpoint_not_found, environment_mismatch.
func (r *Resolver) RotateWebhookEndpointSecret(ctx context.Context, id string) (*webhook.Endpoint, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Webhooks.RotateEndpointSecret(ctx, c.AppID, c.Environment, id)
}

// RecoverWebhookEndpoint is POST /webhook-endpoints/{id}/recover: how many
// events were queued again.
// Errors: webhook_endpoint_not_found, environment_mismatch,
// validation_failed.
func (r *Resolver) RecoverWebhookEndpoint(ctx context.Context, id string, since time.Time, problems apperr.Details) (int, error) {
	c, err := caller(ctx)
	if err != nil {
		return 0, err
	}
	if err := apperr.Validation(problems); err != nil {
		return 0, err
	}
	return r.Webhooks.Recover(ctx, c.AppID, c.Environment, id, since)
}

// WebhookEvents is GET /webhook-events.
// Errors: validation_failed (type, limit, cursor).
func (r *Resolver) WebhookEvents(ctx context.Context, f webhook.EventFilter, problems apperr.Details) (*webhook.EventPage, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := apperr.Validation(problems); err != nil {
		return nil, err
	}
	return r.Webhooks.Events(ctx, c.AppID, c.Environment, f)
}

// WebhookEvent is GET /webhook-events/{id}.
// Errors: webhook_event_not_found, environment_mismatch.
func (r *Resolver) WebhookEvent(ctx context.Context, id string) (*webhook.LogEvent, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Webhooks.Event(ctx, c.AppID, c.Environment, id)
}

// RedeliverWebhookEvent is POST /webhook-events/{id}/redeliver.
// Errors: webhook_event_not_found, webhook_endpoint_not_found,
// environment_mismatch, validation_failed.
func (r *Resolver) RedeliverWebhookEvent(ctx context.Context, id, endpointID string, problems apperr.Details) (*webhook.LogEvent, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := apperr.Validation(problems); err != nil {
		return nil, err
	}
	return r.Webhooks.RedeliverEvent(ctx, c.AppID, c.Environment, id, endpointID)
}
