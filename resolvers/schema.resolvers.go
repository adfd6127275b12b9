package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/store"
)

func (r *eventResolver) Dates(ctx context.Context, obj *model.Event, includePast *bool) ([]*model.EventDate, error) {
	all, err := loaders.For(ctx).Dates.Load(ctx, int64(obj.ID))()
	if err != nil {
		return nil, err
	}
	return r.eventDates(ctx, catalog.FilterDates(all, deref(includePast), r.Now()), obj.Timezone)
}

func (r *eventDateResolver) Venue(ctx context.Context, obj *model.EventDate) (*model.Venue, error) {
	if obj.VenueID == nil {
		return nil, nil
	}
	v, err := loaders.For(ctx).Venue.Load(ctx, int64(*obj.VenueID))()
	if err != nil || v == nil {
		return nil, err
	}
	return toVenue(v), nil
}

func (r *eventDateResolver) Tickets(ctx context.Context, obj *model.EventDate) ([]*model.Ticket, error) {
	ts, err := loaders.For(ctx).Tickets.Load(ctx, int64(obj.ID))()
	if err != nil {
		return nil, err
	}
	out := make([]*model.Ticket, len(ts))
	for i := range ts {
		out[i] = toTicket(&ts[i], obj.Timezone)
	}
	return out, nil
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
	e, err := r.Catalog.Event(ctx, int64(id))
	if err != nil {
		return nil, err
	}
	evs, err := r.events(ctx, []store.Event{*e})
	if err != nil {
		return nil, err
	}
	return evs[0], nil
}

func (r *queryResolver) EventDate(ctx context.Context, id int) (*model.EventDate, error) {
	d, e, err := r.Catalog.EventDate(ctx, int64(id))
	if err != nil {
		return nil, err
	}
	ds, err := r.eventDates(ctx, []store.EventDate{*d}, e.Timezone)
	if err != nil {
		return nil, err
	}
	return ds[0], nil
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
