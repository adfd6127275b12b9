package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/graph/model"
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
// since is an RFC 3339 time ("" when absent).
func (r *Resolver) RecoverWebhookEndpoint(ctx context.Context, id, since string, problems apperr.Details) (int, error) {
	c, err := caller(ctx)
	if err != nil {
		return 0, err
	}
	var at time.Time
	if since != "" {
		if at, err = time.Parse(time.RFC3339, since); err != nil {
			if problems == nil {
				problems = apperr.Details{}
			}
			problems.Add("since", "must be an RFC 3339 time, e.g. 2026-11-28T09:00:00Z")
		}
	}
	if err := apperr.Validation(problems); err != nil {
		return 0, err
	}
	return r.Webhooks.Recover(ctx, c.AppID, c.Environment, id, at)
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

// ReadWebhookEvent is GET /webhook-events/{id}.
// Errors: webhook_event_not_found, environment_mismatch.
func (r *Resolver) ReadWebhookEvent(ctx context.Context, id string) (*webhook.LogEvent, error) {
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

// endpointPayload is the answer of the endpoint mutations: the endpoint,
// or the refusal as user errors (top-level refusals as the error).
func endpointPayload(v *webhook.Endpoint, err error) (*model.WebhookEndpointPayload, error) {
	if err == nil {
		return &model.WebhookEndpointPayload{WebhookEndpoint: v, UserErrors: []*model.UserError{}}, nil
	}
	ues, err := asUserErrors(err)
	return &model.WebhookEndpointPayload{UserErrors: ues}, err
}

// deletePayload is the answer of Mutation.deleteWebhookEndpoint.
func deletePayload(id string, err error) (*model.DeleteWebhookEndpointPayload, error) {
	if err == nil {
		return &model.DeleteWebhookEndpointPayload{DeletedID: &id, UserErrors: []*model.UserError{}}, nil
	}
	ues, err := asUserErrors(err)
	return &model.DeleteWebhookEndpointPayload{UserErrors: ues}, err
}

// recoverPayload is the answer of Mutation.recoverWebhookEndpoint.
func recoverPayload(n int, err error) (*model.RecoverWebhookEndpointPayload, error) {
	if err == nil {
		return &model.RecoverWebhookEndpointPayload{Recovering: &n, UserErrors: []*model.UserError{}}, nil
	}
	ues, err := asUserErrors(err)
	return &model.RecoverWebhookEndpointPayload{UserErrors: ues}, err
}

// redeliverPayload is the answer of Mutation.redeliverWebhookEvent.
func redeliverPayload(v *webhook.LogEvent, err error) (*model.RedeliverWebhookEventPayload, error) {
	if err == nil {
		return &model.RedeliverWebhookEventPayload{WebhookEvent: v, UserErrors: []*model.UserError{}}, nil
	}
	ues, err := asUserErrors(err)
	return &model.RedeliverWebhookEventPayload{UserErrors: ues}, err
}

// asUserErrors turns a refusal about the input into user errors under
// input; a top-level one (authentication, limits, failures) stays the
// error.
func asUserErrors(err error) ([]*model.UserError, error) {
	var ae *apperr.Error
	if !errors.As(err, &ae) || topLevel(ae) {
		return nil, err
	}
	if ae.Code == apperr.WebhookEndpointNotFound || ae.Code == apperr.WebhookEventNotFound || ae.Code == apperr.EnvironmentMismatch {
		return []*model.UserError{{Code: string(ae.Code), Field: []string{"input", "id"}, Message: ae.Message}}, nil
	}
	return userErrors(ae, "input"), nil
}

// webhookEventConnection is Query.webhookEvents: the event log's page as a
// Relay connection.
func (r *Resolver) webhookEventConnection(ctx context.Context, filter *model.WebhookEventFilter, first *int, after *string) (*model.WebhookEventConnection, error) {
	f := webhook.EventFilter{Cursor: deref(after)}
	if first != nil {
		f.Limit = *first
		if f.Limit == 0 {
			f.Limit = -1 // first: 0 is out of range, not the default
		}
	}
	if filter != nil {
		f.Type, f.OrderReference = deref(filter.Type), deref(filter.OrderReference)
	}
	page, err := r.WebhookEvents(ctx, f, nil)
	if err != nil {
		return nil, webhookArgPaths(err)
	}
	c := &model.WebhookEventConnection{Edges: make([]*model.WebhookEventEdge, len(page.Events)),
		PageInfo: &model.CursorPageInfo{HasNextPage: page.NextCursor != "", HasPreviousPage: f.Cursor != ""}}
	for i, ev := range page.Events {
		c.Edges[i] = &model.WebhookEventEdge{Cursor: page.Cursors[i], Node: ev}
	}
	if n := len(c.Edges); n > 0 {
		c.PageInfo.StartCursor, c.PageInfo.EndCursor = &c.Edges[0].Cursor, &c.Edges[n-1].Cursor
	}
	return c, nil
}

// webhookArgPaths renames the details of a validation error of the event
// log from REST's parameters to GraphQL's arguments.
func webhookArgPaths(err error) error {
	var ae *apperr.Error
	if !errors.As(err, &ae) || len(ae.Details) == 0 {
		return err
	}
	names := map[string]string{"limit": "first", "cursor": "after", "type": "filter.type"}
	out := *ae
	out.Details = make(apperr.Details, len(ae.Details))
	for name, msgs := range ae.Details {
		if n, ok := names[name]; ok {
			name = n
		}
		out.Details[name] = msgs
	}
	return &out
}

// eventBody is WebhookEvent.body: the JSON every delivery carries, when
// the event was read alone.
func eventBody(ev *webhook.LogEvent) (any, error) {
	if len(ev.Body) == 0 {
		return nil, nil
	}
	var v any
	err := json.Unmarshal(ev.Body, &v)
	return v, err
}
