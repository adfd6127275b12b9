package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/store"
	"github.com/graph-gophers/dataloader/v7"
)

// events converts stored events with their summaries. It loads the dates of
// all events (kept by the loaders, so Event.dates below costs nothing) and
// the pricing fields of the tickets of their upcoming dates, one query each.
func (r *Resolver) events(ctx context.Context, events []store.Event) ([]*model.Event, error) {
	l := loaders.For(ctx)
	ids := make([]int64, len(events))
	for i := range events {
		ids[i] = events[i].ID
	}
	dates, err := l.DatesNow(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := r.Now()
	var dateIDs []int64
	for _, ds := range dates {
		dateIDs = append(dateIDs, catalog.UpcomingDateIDs(ds, now)...)
	}
	byDate, err := r.Catalog.Prices(ctx, dateIDs)
	if err != nil {
		return nil, err
	}
	out := make([]*model.Event, len(events))
	for i := range events {
		out[i] = toEvent(&events[i], catalog.Summarize(dates[i], byDate, now))
	}
	return out, nil
}

// eventDates converts dates of one event with their venues. The venue
// lookups of concurrent callers share one batch.
func (r *Resolver) eventDates(ctx context.Context, dates []store.EventDate, tz string) ([]*model.EventDate, error) {
	l := loaders.For(ctx)
	thunks := make([]dataloader.Thunk[*store.Venue], len(dates))
	for i := range dates {
		if dates[i].VenueID != nil {
			thunks[i] = l.Venue.Load(ctx, *dates[i].VenueID)
		}
	}
	out := make([]*model.EventDate, len(dates))
	for i := range dates {
		var v *store.Venue
		if thunks[i] != nil {
			var err error
			if v, err = thunks[i](); err != nil {
				return nil, err
			}
		}
		out[i] = toEventDate(&dates[i], tz, v)
	}
	return out, nil
}

// EventsPage is GET /events and Query.events: one page of visible events.
func (r *Resolver) EventsPage(ctx context.Context, p catalog.ListParams) (*model.EventPage, error) {
	page, err := r.Catalog.ListEvents(ctx, p)
	if err != nil {
		return nil, err
	}
	nodes, err := r.events(ctx, page.Events)
	if err != nil {
		return nil, err
	}
	return &model.EventPage{
		Nodes: nodes,
		PageInfo: &model.PageInfo{
			Page: page.Page, PerPage: page.PerPage, Total: page.Total, TotalPages: page.TotalPages,
			HasNext: page.HasNext(), HasPrev: page.HasPrev(),
		},
		Timezone: catalog.DefaultTimezone,
	}, nil
}
