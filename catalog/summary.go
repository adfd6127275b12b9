package catalog

import (
	"context"
	"time"

	"github.com/boxoffice/boxoffice/store"
)

// Summary holds an event's derived fields, computed from its active dates
// and the tickets of the upcoming ones.
type Summary struct {
	// ActiveDatesCount counts active dates that have not ended.
	ActiveDatesCount int
	// NextStart is the earliest start among those dates (zero if none).
	NextStart time.Time
	// LastEnd is the latest end among all active dates (zero if none).
	LastEnd        time.Time
	HasFreeTickets bool
	HasPaidTickets bool
}

// HasMultipleDates reports whether more than one upcoming active date exists.
func (s Summary) HasMultipleDates() bool { return s.ActiveDatesCount > 1 }

// IsEntirelyFree reports whether the event has tickets and all are free.
func (s Summary) IsEntirelyFree() bool { return s.HasFreeTickets && !s.HasPaidTickets }

// UpcomingDateIDs returns the ids of the upcoming dates among activeDates.
func UpcomingDateIDs(activeDates []store.EventDate, now time.Time) []int64 {
	var ids []int64
	for i := range activeDates {
		if Upcoming(&activeDates[i], now) {
			ids = append(ids, activeDates[i].ID)
		}
	}
	return ids
}

// Summarize derives an event's summary from its active dates and the tickets
// of its upcoming dates, keyed by date id.
func Summarize(activeDates []store.EventDate, tickets map[int64][]store.Ticket, now time.Time) Summary {
	var s Summary
	for i := range activeDates {
		d := &activeDates[i]
		if d.EndAt.After(s.LastEnd) {
			s.LastEnd = d.EndAt
		}
		if !Upcoming(d, now) {
			continue
		}
		s.ActiveDatesCount++
		if s.NextStart.IsZero() || d.StartAt.Before(s.NextStart) {
			s.NextStart = d.StartAt
		}
		for j := range tickets[d.ID] {
			if IsFree(&tickets[d.ID][j]) {
				s.HasFreeTickets = true
			} else {
				s.HasPaidTickets = true
			}
		}
	}
	return s
}

// Summaries returns the summary of each event whose active dates are given
// (activeDates[i] for event i), reading the pricing fields of the tickets
// of all their upcoming dates in one query.
func (s *Service) Summaries(ctx context.Context, activeDates [][]store.EventDate) ([]Summary, error) {
	now := s.Now()
	var dateIDs []int64
	for _, ds := range activeDates {
		dateIDs = append(dateIDs, UpcomingDateIDs(ds, now)...)
	}
	prices, err := s.Prices(ctx, dateIDs)
	if err != nil {
		return nil, err
	}
	out := make([]Summary, len(activeDates))
	for i, ds := range activeDates {
		out[i] = Summarize(ds, prices, now)
	}
	return out, nil
}
