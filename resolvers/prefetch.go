package resolvers

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/loaders"
	"github.com/boxoffice/boxoffice/readcache"
	"github.com/boxoffice/boxoffice/store"
	"github.com/vektah/gqlparser/v2/ast"
)

// A need is what a field's resolver reads through the loaders: its
// parent must have primed it (handed the loader every key of the level at
// once) before gqlgen resolves the field.
type need int

const (
	needNothing need = iota
	// needDates: the event's dates (Loaders.Dates), primed by the query
	// field that returned the event (prefetchLevels).
	needDates
	// needVenue: the date's venue (Loaders.Venue), primed by whoever
	// returned the date (prefetchLevels, prefetchDate).
	needVenue
	// needTickets: the date's tickets (Loaders.Tickets), or their stock
	// (Loaders.Stock) when the catalog cache keeps the rest (primeTickets).
	needTickets
)

// fieldNeeds is the one table of the fields whose resolvers read a
// loader, by "Type.field". Every other field with a resolver of its own
// reads none (resolverFieldsReadNoLoader in the tests), and loaders.Strict
// makes any field reading an unprimed key fail the tests:
// TestEveryFieldPrimed queries every catalog field of the schema.
var fieldNeeds = map[string]need{
	"Event.dates":       needDates,
	"EventDate.venue":   needVenue,
	"EventDate.tickets": needTickets,
}

// needOf is what a selected field of typeName needs primed.
func needOf(typeName string, f graphql.CollectedField) need {
	return fieldNeeds[typeName+"."+f.Name]
}

// datesWanted is what one `dates` selection of an Event asks for.
type datesWanted struct {
	includePast    bool
	venue, tickets bool
	stock          bool // the tickets' live availability (wantsStock)
}

// stockFields are the Ticket fields whose values come from the live stock
// columns rather than from the catalog cache.
var stockFields = map[string]bool{"quantityAvailable": true}

// wantsStock reports whether a selection of Ticket asks for a field of
// stockFields, anywhere in its fragments. It errs towards yes: a field
// under @skip or @include counts. A ticket list that shows no stock
// field needs no stock read: its other fields are the catalog's, kept in
// the catalog cache until the catalog changes.
func wantsStock(op *graphql.OperationContext, sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if stockFields[s.Name] {
				return true
			}
		case *ast.InlineFragment:
			if wantsStock(op, s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			// Validation rejects fragment cycles, so this ends.
			if f := op.Doc.Fragments.ForName(s.Name); f != nil && wantsStock(op, f.SelectionSet) {
				return true
			}
		}
	}
	return false
}

// prefetchLevels loads what a GraphQL selection asks of these events'
// dates, one batch per level, before gqlgen resolves the children: the
// dates of every event, then the venues and the tickets (or, where the
// fields are kept, only the stock) of every date shown. The children then
// find everything primed in the loaders. Waiting for a dataloader window
// instead would let a busy machine split a level into several statements;
// handing the loaders all keys of a level in one call never does.
// eventSel is the selection set of one Event.
func (r *Resolver) prefetchLevels(ctx context.Context, events []*model.Event, eventSel ast.SelectionSet) error {
	if len(events) == 0 || !graphql.HasOperationContext(ctx) {
		return nil
	}
	op := graphql.GetOperationContext(ctx)
	var wants []datesWanted
	for _, f := range graphql.CollectFields(op, eventSel, []string{"Event"}) {
		if needOf("Event", f) != needDates {
			continue
		}
		w := dateNeeds(op, f.Selections)
		if v, ok := f.ArgumentMap(op.Variables)["includePast"].(bool); ok {
			w.includePast = v
		}
		wants = append(wants, w)
	}
	if len(wants) == 0 {
		return nil
	}
	l := loaders.For(ctx)

	// Level 1: the dates of every event whose converted dates are not kept.
	var need []int64
	for _, ev := range events {
		for _, w := range wants {
			if _, hit := readcache.For(ctx).Get(ctx, datesKey{int64(ev.ID), w.includePast}); !hit {
				need = append(need, int64(ev.ID))
				break
			}
		}
	}
	stored, err := l.LoadDates(ctx, need)
	if err != nil {
		return err
	}
	byEvent := make(map[int64][]store.EventDate, len(need))
	for i, id := range need {
		byEvent[id] = stored[i]
	}

	// Level 2: venues and tickets of every date shown.
	var venues, tickets, stocked []int64
	now := r.Now()
	for _, ev := range events {
		for _, w := range wants {
			if kept, hit := readcache.For(ctx).Get(ctx, datesKey{int64(ev.ID), w.includePast}); hit {
				for _, d := range kept.([]*model.EventDate) {
					if w.venue && d.VenueID != nil {
						if _, hit := readcache.For(ctx).Get(ctx, venueKey(*d.VenueID)); !hit {
							venues = append(venues, int64(*d.VenueID))
						}
					}
					if w.tickets {
						tickets = append(tickets, int64(d.ID))
					}
					if w.stock {
						stocked = append(stocked, int64(d.ID))
					}
				}
				continue
			}
			for _, d := range catalog.FilterDates(byEvent[int64(ev.ID)], w.includePast, now) {
				if d.VenueID != nil { // converting a date reads its venue
					venues = append(venues, *d.VenueID)
				}
				if w.tickets {
					tickets = append(tickets, d.ID)
				}
				if w.stock {
					stocked = append(stocked, d.ID)
				}
			}
		}
	}
	if err := l.PrimeVenues(ctx, uniq(venues)); err != nil {
		return err
	}
	return r.primeTickets(ctx, tickets, stocked)
}

// dateNeeds is what a selection of an EventDate needs primed.
func dateNeeds(op *graphql.OperationContext, dateSel ast.SelectionSet) datesWanted {
	var w datesWanted
	for _, g := range graphql.CollectFields(op, dateSel, []string{"EventDate"}) {
		switch needOf("EventDate", g) {
		case needVenue:
			w.venue = true
		case needTickets:
			w.tickets = true
			w.stock = w.stock || wantsStock(op, g.Selections)
		}
	}
	return w
}

// prefetchDate loads what a selection asks of one date, for
// Query.eventDate: its tickets, and its venue unless the catalog cache
// keeps it (a date kept from a query that did not ask for its venue comes
// without one).
func (r *Resolver) prefetchDate(ctx context.Context, d *model.EventDate, dateSel ast.SelectionSet) error {
	if !graphql.HasOperationContext(ctx) {
		return nil
	}
	w := dateNeeds(graphql.GetOperationContext(ctx), dateSel)
	if w.venue && d.VenueID != nil {
		if _, hit := readcache.For(ctx).Get(ctx, venueKey(*d.VenueID)); !hit {
			if err := loaders.For(ctx).PrimeVenues(ctx, []int64{int64(*d.VenueID)}); err != nil {
				return err
			}
		}
	}
	if w.tickets {
		var stocked []int64
		if w.stock {
			stocked = []int64{int64(d.ID)}
		}
		return r.primeTickets(ctx, []int64{int64(d.ID)}, stocked)
	}
	return nil
}

// primeTickets loads the tickets of these dates in at most two queries:
// whole rows of those the catalog cache does not keep, and the stock
// columns of the kept ones among stocked (the dates whose tickets show
// their live availability).
func (r *Resolver) primeTickets(ctx context.Context, dateIDs, stocked []int64) error {
	l := loaders.For(ctx)
	var full, stock []int64
	wanted := make(map[int64]bool, len(stocked))
	for _, id := range stocked {
		wanted[id] = true
	}
	for _, id := range uniq(dateIDs) {
		if _, hit := readcache.For(ctx).Get(ctx, ticketsKey(id)); !hit {
			full = append(full, id)
		} else if wanted[id] {
			stock = append(stock, id)
		}
	}
	if err := l.PrimeTickets(ctx, full); err != nil {
		return err
	}
	return l.PrimeStock(ctx, stock)
}

// uniq returns the distinct ids, sorted.
func uniq(ids []int64) []int64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}
