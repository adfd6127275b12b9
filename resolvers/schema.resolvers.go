package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/graph/model"
)

func (r *eventResolver) Dates(ctx context.Context, obj *model.Event, includePast *bool) ([]*model.EventDate, error) {
	return r.Resolver.Dates(ctx, obj, deref(includePast))
}

func (r *eventDateResolver) Venue(ctx context.Context, obj *model.EventDate) (*model.Venue, error) {
	return r.Resolver.Venue(ctx, obj)
}

func (r *eventDateResolver) Tickets(ctx context.Context, obj *model.EventDate) ([]*model.Ticket, error) {
	return r.Resolver.Tickets(ctx, obj)
}

func (r *mutationResolver) CreateCheckoutSession(ctx context.Context, input checkout.Input, idempotencyKey *string) (*checkout.Session, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Checkout.Create(ctx, c, deref(idempotencyKey), &input)
}

func (r *queryResolver) Events(ctx context.Context, page *int, perPage *int, q *string, includePast *bool) (*model.EventPage, error) {
	return r.EventsPage(ctx, catalog.ListParams{
		Page: deref(page), PerPage: deref(perPage), Q: deref(q), IncludePast: deref(includePast),
	})
}

func (r *queryResolver) Event(ctx context.Context, id int) (*model.Event, error) {
	return r.EventByID(ctx, int64(id))
}

func (r *queryResolver) EventDate(ctx context.Context, id int) (*model.EventDate, error) {
	return r.EventDateByID(ctx, int64(id))
}

func (r *queryResolver) Order(ctx context.Context, reference string) (*checkout.OrderView, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	o, err := r.Checkout.Order(ctx, c, reference)
	if err != nil {
		return nil, err
	}
	return checkout.View(o), nil
}

func (r *Resolver) Event() graph.EventResolver { return &eventResolver{r} }

func (r *Resolver) EventDate() graph.EventDateResolver { return &eventDateResolver{r} }

func (r *Resolver) Mutation() graph.MutationResolver { return &mutationResolver{r} }

func (r *Resolver) Query() graph.QueryResolver { return &queryResolver{r} }

type (
	eventResolver     struct{ *Resolver }
	eventDateResolver struct{ *Resolver }
	mutationResolver  struct{ *Resolver }
	queryResolver     struct{ *Resolver }
)
