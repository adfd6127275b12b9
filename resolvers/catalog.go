package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/readcache"
	"github.com/boxoffice/boxoffice/store"
)

// events converts stored events with their summaries (catalog.Summaries).
// It loads the dates of all events in one query and keeps them in the
// loaders, so Event.dates below costs nothing.
func (r *Resolver) events(ctx context.Context, events []store.Event) ([]*model.Event, error) {
	ids := make([]int64, len(events))
	for i := range events {
		ids[i] = events[i].ID
	}
	dates, err := loaders.For(ctx).LoadDates(ctx, ids)
	if err != nil {
		return nil, err
	}
	sums, err := r.Catalog.Summaries(ctx, dates)
	if err != nil {
		return nil, err
	}
	out := make([]*model.Event, len(events))
	for i := range events {
		out[i] = toEvent(&events[i], sums[i])
	}
	return out, nil
}

// eventDates converts dates of one event with their venues, which it
// reads in one call (already loaded when a parent primed them).
func (r *Resolver) eventDates(ctx context.Context, dates []store.EventDate, tz string) ([]*model.EventDate, error) {
	var ids []int64
	for i := range dates {
		if dates[i].VenueID != nil {
			ids = append(ids, *dates[i].VenueID)
		}
	}
	venues, err := loaders.For(ctx).Venue.LoadAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*model.EventDate, len(dates))
	for i, n := 0, 0; i < len(dates); i++ {
		var v *store.Venue
		if dates[i].VenueID != nil {
			v, n = venues[n], n+1
		}
		out[i] = toEventDate(&dates[i], tz, v)
	}
	return out, nil
}

// Keys of what the catalog cache keeps (readcache.Cache): converted API
// values, shared by every request until the catalog changes.
type (
	pageKey  catalog.ListParams // keptPage
	eventKey int64              // *model.Event
	dateKey  int64              // *model.EventDate
	datesKey struct {           // []*model.EventDate of an event
		event       int64
		includePast bool
	}
	venueKey   int64              // *model.Venue
	ticketsKey int64              // []*model.Ticket of a date, availability as last read
	connKey    catalog.ListParams // *model.EventConnection
	slugKey    string             // *model.Event
	encodedKey catalog.ListParams // keptBytes: an events page as an adapter wrote it
)

// keptPage is an events page as the catalog cache keeps it, with the stamp
// that lets it outlive a catalog change that did not touch it
// (catalog.Service.Unchanged); keptBytes is the same for its REST bytes.
type (
	keptPage struct {
		page  *model.EventPage
		stamp catalog.Stamp
	}
	keptBytes struct {
		b     []byte
		stamp catalog.Stamp
	}
)

func one[V any](V) int       { return 1 }
func rows[V any](vs []V) int { return len(vs) + 1 }

// EventsPage is GET /events and Query.events: one page of visible events.
// Errors: validation_failed (catalog.ListRequest.Params).
func (r *Resolver) EventsPage(ctx context.Context, req catalog.ListRequest) (*model.EventPage, error) {
	p, err := req.Params()
	if err != nil {
		return nil, err
	}
	kept, err := r.keptPage(ctx, p)
	return kept.page, err
}

func (r *Resolver) keptPage(ctx context.Context, p catalog.ListParams) (keptPage, error) {
	return readcache.CachedValid(ctx, readcache.For(ctx), pageKey(p),
		func(k keptPage) int { return rows(k.page.Nodes) },
		func(k keptPage) bool { return r.Catalog.Unchanged(ctx, p, k.stamp) },
		func() (keptPage, error) { return r.eventsPage(ctx, p) })
}

// EventsPageEncoded is EventsPage written by encode (the REST adapter's
// JSON), kept with the page in the catalog cache and charged its size: a
// page is the same bytes for every caller until the catalog changes, and
// answers that share them hold no memory of their own while a slow client
// reads them. Errors: as EventsPage, and encode's.
func (r *Resolver) EventsPageEncoded(ctx context.Context, req catalog.ListRequest, encode func(*model.EventPage) ([]byte, error)) ([]byte, error) {
	p, err := req.Params()
	if err != nil {
		return nil, err
	}
	kept, err := readcache.CachedValid(ctx, readcache.For(ctx), encodedKey(p),
		func(k keptBytes) int { return cap(k.b)/512 + 1 },
		func(k keptBytes) bool { return r.Catalog.Unchanged(ctx, p, k.stamp) },
		func() (keptBytes, error) {
			kept, err := r.keptPage(ctx, p)
			if err != nil {
				return keptBytes{}, err
			}
			b, err := encode(kept.page)
			return keptBytes{b: b, stamp: kept.stamp}, err
		})
	return kept.b, err
}

func (r *Resolver) eventsPage(ctx context.Context, p catalog.ListParams) (keptPage, error) {
	page, err := r.Catalog.ListEvents(ctx, p)
	if err != nil {
		return keptPage{}, err
	}
	nodes, err := r.events(ctx, page.Events)
	if err != nil {
		return keptPage{}, err
	}
	return keptPage{stamp: page.Stamp, page: &model.EventPage{
		Nodes: nodes,
		PageInfo: &model.PageNumbers{
			Page: page.Page, PerPage: page.PerPage, Total: page.Total, TotalPages: page.TotalPages,
			HasNext: page.HasNext(), HasPrev: page.HasPrev(),
		},
		Timezone: catalog.DefaultTimezone,
	}}, nil
}

// EventsConnection is Query.eventsConnection: the visible events after a
// cursor, each with its own cursor.
// Errors: validation_failed (catalog.ListRequest.Params).
func (r *Resolver) EventsConnection(ctx context.Context, req catalog.ListRequest) (*model.EventConnection, error) {
	p, err := req.Params()
	if err != nil {
		return nil, err
	}
	return readcache.Cached(ctx, readcache.For(ctx), connKey(p),
		func(c *model.EventConnection) int { return rows(c.Edges) },
		func() (*model.EventConnection, error) { return r.eventsConnection(ctx, p) })
}

func (r *Resolver) eventsConnection(ctx context.Context, p catalog.ListParams) (*model.EventConnection, error) {
	s, err := r.Catalog.EventsAfter(ctx, p)
	if err != nil {
		return nil, err
	}
	nodes, err := r.events(ctx, s.Events)
	if err != nil {
		return nil, err
	}
	c := &model.EventConnection{
		Edges:    make([]*model.EventEdge, len(nodes)),
		PageInfo: &model.CursorPageInfo{HasNextPage: s.HasNext, HasPreviousPage: s.HasPrev},
		Timezone: catalog.DefaultTimezone,
	}
	for i, n := range nodes {
		c.Edges[i] = &model.EventEdge{Cursor: s.Cursors[i], Node: n}
	}
	if len(nodes) > 0 {
		c.PageInfo.StartCursor, c.PageInfo.EndCursor = &s.Cursors[0], &s.Cursors[len(nodes)-1]
	}
	return c, nil
}

// EventBySlug is Query.eventBySlug: the newest visible event with this slug.
// Errors: event_not_found.
func (r *Resolver) EventBySlug(ctx context.Context, slug string) (*model.Event, error) {
	return r.event(ctx, slugKey(slug), func() (*store.Event, error) { return r.Catalog.EventBySlug(ctx, slug) })
}

// EventByID is Query.event and GET /events/{id}.
// Errors: event_not_found.
func (r *Resolver) EventByID(ctx context.Context, id int64) (*model.Event, error) {
	return r.event(ctx, eventKey(id), func() (*store.Event, error) { return r.Catalog.Event(ctx, id) })
}

// event converts the one event read finds, kept in the catalog cache under
// key.
func (r *Resolver) event(ctx context.Context, key any, read func() (*store.Event, error)) (*model.Event, error) {
	return readcache.Cached(ctx, readcache.For(ctx), key, one, func() (*model.Event, error) {
		e, err := read()
		if err != nil {
			return nil, err
		}
		evs, err := r.events(ctx, []store.Event{*e})
		if err != nil {
			return nil, err
		}
		return evs[0], nil
	})
}

// EventDateByID is Query.eventDate and the date of GET /event-dates/{id}/tickets.
// Errors: event_date_not_found.
func (r *Resolver) EventDateByID(ctx context.Context, id int64) (*model.EventDate, error) {
	return readcache.Cached(ctx, readcache.For(ctx), dateKey(id), one, func() (*model.EventDate, error) {
		d, e, err := r.Catalog.EventDate(ctx, id)
		if err != nil {
			return nil, err
		}
		ds, err := r.eventDates(ctx, []store.EventDate{*d}, e.Timezone)
		if err != nil {
			return nil, err
		}
		return ds[0], nil
	})
}

// Dates is Event.dates: the event's upcoming active dates, or all its
// active dates when includePast, primed by the query field that returned
// the event.
func (r *Resolver) Dates(ctx context.Context, ev *model.Event, includePast bool) ([]*model.EventDate, error) {
	return r.dates(ctx, ev, includePast, false)
}

// DatesUnbatched is GET /events/{id}/dates: Dates of one event, read at once
// (the event may have come from the catalog cache, without its dates).
func (r *Resolver) DatesUnbatched(ctx context.Context, ev *model.Event, includePast bool) ([]*model.EventDate, error) {
	return r.dates(ctx, ev, includePast, true)
}

func (r *Resolver) dates(ctx context.Context, ev *model.Event, includePast, now bool) ([]*model.EventDate, error) {
	l := loaders.For(ctx)
	return readcache.Cached(ctx, readcache.For(ctx), datesKey{int64(ev.ID), includePast}, rows, func() ([]*model.EventDate, error) {
		all, err := loadOne(ctx, l.Dates, int64(ev.ID), now)
		if err != nil {
			return nil, err
		}
		return r.eventDates(ctx, catalog.FilterDates(all, includePast, r.Now()), ev.Timezone)
	})
}

// Venue is EventDate.venue: nil for an online date.
func (r *Resolver) Venue(ctx context.Context, d *model.EventDate) (*model.Venue, error) {
	if d.VenueID == nil {
		return nil, nil
	}
	l := loaders.For(ctx)
	return readcache.Cached(ctx, readcache.For(ctx), venueKey(*d.VenueID), one, func() (*model.Venue, error) {
		v, err := l.Venue.Load(ctx, int64(*d.VenueID))()
		if err != nil || v == nil {
			return nil, err
		}
		return toVenue(v), nil
	})
}

// Tickets is EventDate.tickets: the date's tickets, loaded in one batch
// with those of the other dates of the query. Ticket fields other than
// availability may come from the cache; availability is read live every
// time, with the stock columns only.
func (r *Resolver) Tickets(ctx context.Context, d *model.EventDate) ([]*model.Ticket, error) {
	stock := true
	if graphql.HasOperationContext(ctx) {
		if fc := graphql.GetFieldContext(ctx); fc != nil {
			stock = wantsStock(graphql.GetOperationContext(ctx), fc.Field.Selections)
		}
	}
	return r.tickets(ctx, d, false, stock)
}

// TicketsUnbatched is GET /event-dates/{id}/tickets: Tickets of one date, read at
// once rather than after a batch window that no other date will join.
func (r *Resolver) TicketsUnbatched(ctx context.Context, d *model.EventDate) ([]*model.Ticket, error) {
	return r.tickets(ctx, d, true, true)
}

// loadOne loads the value of one key through ld: at once when now is true,
// else in the batch being gathered.
func loadOne[V any](ctx context.Context, ld *loaders.Loader[V], id int64, now bool) (V, error) {
	if now {
		vs, err := ld.LoadAll(ctx, []int64{id})
		if err != nil {
			var zero V
			return zero, err
		}
		return vs[0], nil
	}
	return ld.Load(ctx, id)()
}

// tickets reads the tickets of d: the kept ones as they are when the
// caller shows no live availability (withLiveStock false), else with their
// stock read now.
func (r *Resolver) tickets(ctx context.Context, d *model.EventDate, now, withLiveStock bool) ([]*model.Ticket, error) {
	l := loaders.For(ctx)
	id := int64(d.ID)
	if kept, hit := readcache.For(ctx).Get(ctx, ticketsKey(id)); hit {
		if !withLiveStock {
			return kept.([]*model.Ticket), nil
		}
		stock, err := loadOne(ctx, l.Stock, id, now)
		if err != nil {
			return nil, err
		}
		if out, ok := withStock(kept.([]*model.Ticket), stock); ok {
			readcache.SawStock(ctx, id, stock)
			return out, nil
		}
	}
	ts, err := loadOne(ctx, l.Tickets, id, now)
	if err != nil {
		return nil, err
	}
	if readcache.Recording(ctx) {
		stock := make([]store.Stock, len(ts))
		for i := range ts {
			stock[i] = ts[i].Stock()
		}
		readcache.SawStock(ctx, id, stock)
	}
	out := make([]*model.Ticket, len(ts))
	for i := range ts {
		out[i] = toTicket(&ts[i], d.Timezone)
	}
	readcache.For(ctx).Put(ctx, ticketsKey(id), out, rows(out))
	return out, nil
}
