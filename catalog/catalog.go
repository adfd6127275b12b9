// Package catalog owns the rules of the published catalog: which events a
// partner may see, how events, dates and tickets are listed, how a ticket's
// effective price and live availability are derived, how an event's summary
// fields follow from its dates, and how an operator's catalog file is
// validated and imported.
package catalog

import (
	"context"
	"errors"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// Service reads the published catalog.
type Service struct {
	DB  *store.DB
	Now func() time.Time
	// Index, when set, answers listings' totals and chooses their pages,
	// so a listing reads only its page from DB.
	Index *Index
}

// Event returns a visible event.
// Errors: event_not_found when it is missing, unpublished or hidden.
func (s *Service) Event(ctx context.Context, id int64) (*store.Event, error) {
	e, err := store.VisibleEvent(ctx, s.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.EventNotFound, "Event %d was not found.", id)
	}
	return e, err
}

// EventDate returns an active date of a visible event, with its event.
// Errors: event_date_not_found when it is missing, inactive or its event is
// not visible.
func (s *Service) EventDate(ctx context.Context, id int64) (*store.EventDate, *store.Event, error) {
	d, e, err := store.VisibleEventDate(ctx, s.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apperr.New(apperr.EventDateNotFound, "Event date %d was not found.", id)
	}
	return d, e, err
}

// ActiveDates returns the active dates of each event (past ones included),
// in start order; it is the batch function behind the dates dataloader.
func (s *Service) ActiveDates(ctx context.Context, eventIDs []int64) (map[int64][]store.EventDate, error) {
	ds, err := store.ActiveDatesOfEvents(ctx, s.DB, eventIDs)
	return groupBy(ds, err, func(d *store.EventDate) int64 { return d.EventID })
}

// Tickets returns the tickets of each date; the batch function behind the
// tickets dataloader.
func (s *Service) Tickets(ctx context.Context, dateIDs []int64) (map[int64][]store.Ticket, error) {
	ts, err := store.TicketsOfDates(ctx, s.DB, dateIDs)
	return groupBy(ts, err, ticketDate)
}

// Prices returns the tickets of each date with only their pricing fields
// set: enough for Summarize, much cheaper than Tickets for a page of events.
func (s *Service) Prices(ctx context.Context, dateIDs []int64) (map[int64][]store.Ticket, error) {
	ts, err := store.PricesOfDates(ctx, s.DB, dateIDs)
	return groupBy(ts, err, ticketDate)
}

func ticketDate(t *store.Ticket) int64 { return t.EventDateID }

// groupBy groups rows by a parent id, keeping their order.
// Rows ordered by parent, as every query here returns them, are not
// copied: each parent's group is a slice of rows (capped, so an append to
// one group never overwrites the next).
func groupBy[T any](rows []T, err error, parent func(*T) int64) (map[int64][]T, error) {
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]T)
	for start := 0; start < len(rows); {
		k := parent(&rows[start])
		end := start + 1
		for end < len(rows) && parent(&rows[end]) == k {
			end++
		}
		if prev, ok := out[k]; ok {
			out[k] = append(prev, rows[start:end]...)
		} else {
			out[k] = rows[start:end:end]
		}
		start = end
	}
	return out, nil
}

// Stock returns the stock columns of the tickets of each date (id,
// quantity, sold, held): enough for Available; the batch function behind
// the stock dataloader.
func (s *Service) Stock(ctx context.Context, dateIDs []int64) (map[int64][]store.Stock, error) {
	ts, err := store.StockOfDates(ctx, s.DB, dateIDs)
	return groupBy(ts, err, func(s *store.Stock) int64 { return s.EventDateID })
}

// Venues returns venues by id; the batch function behind the venue dataloader.
func (s *Service) Venues(ctx context.Context, ids []int64) (map[int64]*store.Venue, error) {
	vs, err := store.VenuesByIDs(ctx, s.DB, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*store.Venue, len(vs))
	for i := range vs {
		out[vs[i].ID] = &vs[i]
	}
	return out, nil
}

// Upcoming reports whether a date is active and has not ended at now: the
// dates listings show and event summaries count. store's listings and
// NextDateEnd ask the same in SQL; TestUpcoming runs the same cases
// through both.
func Upcoming(d *store.EventDate, now time.Time) bool {
	return d.Active && !ended(d, now)
}

// DateOnSale returns nil when tickets of date d can be bought at now, and
// otherwise event_date_cancelled for a cancelled date, or
// event_date_not_available saying whether d is inactive, has ended or is
// payout-locked: an upcoming date not locked for payout.
func DateOnSale(d *store.EventDate, now time.Time) error {
	switch {
	case !d.CancelledAt.IsZero():
		return DateCancelled(d.ID)
	case !d.Active:
		return apperr.New(apperr.EventDateNotAvailable, "Event date %d is not active.", d.ID)
	case ended(d, now):
		return apperr.New(apperr.EventDateNotAvailable, "Event date %d has ended.", d.ID)
	case d.PayoutLocked:
		return apperr.New(apperr.EventDateNotAvailable, "Event date %d is closed for sales.", d.ID)
	}
	return nil
}

// DateCancelled is the refusal of a sale of a cancelled date.
func DateCancelled(id int64) error {
	return apperr.New(apperr.EventDateCancelled, "Event date %d is cancelled; its tickets are no longer sold.", id)
}

// ended reports whether d has ended at now; a date ending at now has.
func ended(d *store.EventDate, now time.Time) bool { return !d.EndAt.After(now) }

// FilterDates keeps the upcoming dates, or all given dates when includePast.
func FilterDates(dates []store.EventDate, includePast bool, now time.Time) []store.EventDate {
	if includePast {
		return dates
	}
	out := make([]store.EventDate, 0, len(dates))
	for i := range dates {
		if Upcoming(&dates[i], now) {
			out = append(out, dates[i])
		}
	}
	return out
}
