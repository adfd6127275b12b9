package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/webhook"
)

func (r *checkoutSessionResolver) TotalMoney(ctx context.Context, obj *checkout.Session) (*model.Money, error) {
	return model.NewMoney(obj.TotalAmount, obj.Currency), nil
}

func (r *eventResolver) Dates(ctx context.Context, obj *model.Event, includePast *bool) ([]*model.EventDate, error) {
	return r.Resolver.Dates(ctx, obj, deref(includePast))
}

func (r *eventDateResolver) Venue(ctx context.Context, obj *model.EventDate) (*model.Venue, error) {
	return r.Resolver.Venue(ctx, obj)
}

func (r *eventDateResolver) Tickets(ctx context.Context, obj *model.EventDate) ([]*model.Ticket, error) {
	return r.Resolver.Tickets(ctx, obj)
}

func (r *mutationResolver) CreateCheckoutSession(ctx context.Context, input model.CreateCheckoutSessionInput) (*model.CreateCheckoutSessionPayload, error) {
	return checkoutPayload(r.Resolver.CreateCheckoutSession(ctx, input.IdempotencyKey, &input.CheckoutRequest, nil))
}

func (r *mutationResolver) ExpireCheckoutSession(ctx context.Context, input model.ExpireCheckoutSessionInput) (*model.ExpireCheckoutSessionPayload, error) {
	return expirePayload(r.Resolver.ExpireCheckoutSession(ctx, input.Reference))
}

func (r *mutationResolver) CheckIn(ctx context.Context, input model.CheckInInput) (*model.CheckInPayload, error) {
	return checkInPayload(r.Resolver.CheckIn(ctx, deref(input.IdempotencyKey), toCheckInInput(input), nil))
}

func (r *mutationResolver) CreateRefund(ctx context.Context, input model.CreateRefundInput) (*model.CreateRefundPayload, error) {
	return refundPayload(r.Resolver.CreateRefund(ctx, input.Reference, input.IdempotencyKey, toRefundInput(input), nil))
}

func (r *mutationResolver) CreateWebhookEndpoint(ctx context.Context, input model.CreateWebhookEndpointInput) (*model.WebhookEndpointPayload, error) {
	return endpointPayload(r.Resolver.CreateWebhookEndpoint(ctx, webhook.EndpointInput{URL: &input.URL, EnabledEvents: input.EnabledEvents, Description: input.Description}, nil))
}

func (r *mutationResolver) UpdateWebhookEndpoint(ctx context.Context, input model.UpdateWebhookEndpointInput) (*model.WebhookEndpointPayload, error) {
	return endpointPayload(r.Resolver.UpdateWebhookEndpoint(ctx, input.ID, webhook.EndpointInput{URL: input.URL, EnabledEvents: input.EnabledEvents,
		Description: input.Description, Status: input.Status}, nil))
}

func (r *mutationResolver) DeleteWebhookEndpoint(ctx context.Context, input model.WebhookEndpointIDInput) (*model.DeleteWebhookEndpointPayload, error) {
	return deletePayload(input.ID, r.Resolver.DeleteWebhookEndpoint(ctx, input.ID))
}

func (r *mutationResolver) RotateWebhookEndpointSecret(ctx context.Context, input model.WebhookEndpointIDInput) (*model.WebhookEndpointPayload, error) {
	return endpointPayload(r.Resolver.RotateWebhookEndpointSecret(ctx, input.ID))
}

func (r *mutationResolver) RecoverWebhookEndpoint(ctx context.Context, input model.RecoverWebhookEndpointInput) (*model.RecoverWebhookEndpointPayload, error) {
	return recoverPayload(r.Resolver.RecoverWebhookEndpoint(ctx, input.ID, input.Since, nil))
}

func (r *mutationResolver) RedeliverWebhookEvent(ctx context.Context, input model.RedeliverWebhookEventInput) (*model.RedeliverWebhookEventPayload, error) {
	return redeliverPayload(r.Resolver.RedeliverWebhookEvent(ctx, input.ID, deref(input.EndpointID), nil))
}

func (r *queryResolver) Events(ctx context.Context, page *int, perPage *int, q *string, includePast *bool, slug *string, startsAfter *string, startsBefore *string, city *string, venueID *int, online *bool, free *bool, orderBy *model.EventOrder) (*model.EventPage, error) {
	p, err := r.EventsPage(ctx, listRequest(catalog.ListRequest{Page: page, PerPage: perPage},
		q, includePast, slug, startsAfter, startsBefore, city, venueID, online, free, orderBy))
	if err != nil {
		return nil, graphQLPaths(err, "")
	}
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{"EventPage"}) {
		if f.Name == "nodes" {
			if err := r.prefetchLevels(ctx, p.Nodes, f.Selections); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

func (r *queryResolver) EventsConnection(ctx context.Context, first *int, after *string, q *string, includePast *bool, slug *string, startsAfter *string, startsBefore *string, city *string, venueID *int, online *bool, free *bool, orderBy *model.EventOrder) (*model.EventConnection, error) {
	c, err := r.Resolver.EventsConnection(ctx, listRequest(catalog.ListRequest{First: first, After: after},
		q, includePast, slug, startsAfter, startsBefore, city, venueID, online, free, orderBy))
	if err != nil {
		return nil, graphQLPaths(err, "")
	}
	op := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{"EventConnection"}) {
		if f.Name != "edges" {
			continue
		}
		for _, g := range graphql.CollectFields(op, f.Selections, []string{"EventEdge"}) {
			if g.Name != "node" {
				continue
			}
			nodes := make([]*model.Event, len(c.Edges))
			for i, e := range c.Edges {
				nodes[i] = e.Node
			}
			if err := r.prefetchLevels(ctx, nodes, g.Selections); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func (r *queryResolver) EventBySlug(ctx context.Context, slug string) (*model.Event, error) {
	ev, err := r.Resolver.EventBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	return ev, r.prefetchLevels(ctx, []*model.Event{ev}, graphql.GetFieldContext(ctx).Field.Selections)
}

func (r *queryResolver) Event(ctx context.Context, id int) (*model.Event, error) {
	ev, err := r.EventByID(ctx, int64(id))
	if err != nil {
		return nil, err
	}
	return ev, r.prefetchLevels(ctx, []*model.Event{ev}, graphql.GetFieldContext(ctx).Field.Selections)
}

func (r *queryResolver) EventDate(ctx context.Context, id int) (*model.EventDate, error) {
	d, err := r.EventDateByID(ctx, int64(id))
	if err != nil {
		return nil, err
	}
	return d, r.prefetchDate(ctx, d, graphql.GetFieldContext(ctx).Field.Selections)
}

func (r *queryResolver) Order(ctx context.Context, reference string) (*checkout.OrderView, error) {
	return r.Resolver.Order(ctx, reference)
}

func (r *queryResolver) Orders(ctx context.Context, filter *model.OrderFilter, first *int, after *string) (*model.OrderConnection, error) {
	c, err := r.Resolver.Orders(ctx, ordersRequest(filter, first, after))
	return c, orderArgPaths(err)
}

func (r *queryResolver) OrderChanges(ctx context.Context, since *string, first *int) (*model.OrderChangePage, error) {
	p, err := r.Resolver.OrderChanges(ctx, checkout.ChangesRequest{Since: deref(since), Limit: first})
	return p, orderArgPaths(err)
}

func (r *queryResolver) CheckInStats(ctx context.Context, eventDateID int) (*checkin.Stats, error) {
	return r.Resolver.CheckInStats(ctx, int64(eventDateID))
}

func (r *queryResolver) WebhookEndpoints(ctx context.Context) ([]*webhook.Endpoint, error) {
	return r.Resolver.WebhookEndpoints(ctx)
}

func (r *queryResolver) WebhookEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error) {
	return r.Resolver.WebhookEndpoint(ctx, id)
}

func (r *queryResolver) WebhookEvents(ctx context.Context, filter *model.WebhookEventFilter, first *int, after *string) (*model.WebhookEventConnection, error) {
	return r.webhookEventConnection(ctx, filter, first, after)
}

func (r *queryResolver) WebhookEvent(ctx context.Context, id string) (*webhook.LogEvent, error) {
	return r.Resolver.ReadWebhookEvent(ctx, id)
}

func (r *subscriptionResolver) OrderUpdated(ctx context.Context, reference string) (<-chan *checkout.OrderView, error) {
	return r.Resolver.OrderUpdated(ctx, reference)
}

func (r *subscriptionResolver) AvailabilityChanged(ctx context.Context, eventDateID int) (<-chan *model.DateAvailability, error) {
	return r.Resolver.AvailabilityChanged(ctx, int64(eventDateID))
}

func (r *subscriptionResolver) CheckIns(ctx context.Context, eventDateID int) (<-chan *checkin.View, error) {
	return r.Resolver.CheckInFeed(ctx, int64(eventDateID))
}

func (r *webhookEventResolver) Body(ctx context.Context, obj *webhook.LogEvent) (any, error) {
	return eventBody(obj)
}

func (r *Resolver) CheckoutSession() graph.CheckoutSessionResolver {
	return &checkoutSessionResolver{r}
}

func (r *Resolver) Event() graph.EventResolver { return &eventResolver{r} }

func (r *Resolver) EventDate() graph.EventDateResolver { return &eventDateResolver{r} }

func (r *Resolver) Mutation() graph.MutationResolver { return &mutationResolver{r} }

func (r *Resolver) Query() graph.QueryResolver { return &queryResolver{r} }

func (r *Resolver) Subscription() graph.SubscriptionResolver { return &subscriptionResolver{r} }

func (r *Resolver) WebhookEvent() graph.WebhookEventResolver { return &webhookEventResolver{r} }

type (
	checkoutSessionResolver struct{ *Resolver }
	eventResolver           struct{ *Resolver }
	eventDateResolver       struct{ *Resolver }
	mutationResolver        struct{ *Resolver }
	queryResolver           struct{ *Resolver }
	subscriptionResolver    struct{ *Resolver }
	webhookEventResolver    struct{ *Resolver }
)
