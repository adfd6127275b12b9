package checkin

import (
	"context"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
)

// Door is what the door page shows of a scanner's event: its name and
// every active date, in start order, with its venue.
type Door struct {
	Event *store.Event
	Dates []DoorDate
}

// DoorDate is one date of the door's event; Venue is "" for an online date.
type DoorDate struct {
	Date  store.EventDate
	Venue string
}

// Door loads the event of scanner sc with its active dates and their
// venues, in three queries. Errors: not_found when the event is gone.
func (s *Service) Door(ctx context.Context, sc Scanner) (*Door, error) {
	event, err := store.EventByID(ctx, s.DB, sc.EventID)
	if err != nil {
		return nil, err
	}
	dates, err := store.ActiveDatesOfEvents(ctx, s.DB, []int64{event.ID})
	if err != nil {
		return nil, err
	}
	var venueIDs []int64
	for _, d := range dates {
		if d.VenueID != nil && !d.Online {
			venueIDs = append(venueIDs, *d.VenueID)
		}
	}
	venues, err := store.VenuesByIDs(ctx, s.DB, venueIDs)
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, v := range venues {
		names[v.ID] = v.Name
	}
	loc := catalog.Zone(event.Timezone)
	out := &Door{Event: event}
	for _, d := range dates {
		d.StartAt, d.EndAt = d.StartAt.In(loc), d.EndAt.In(loc)
		dd := DoorDate{Date: d}
		if d.VenueID != nil && !d.Online {
			dd.Venue = names[*d.VenueID]
		}
		out.Dates = append(out.Dates, dd)
	}
	return out, nil
}
