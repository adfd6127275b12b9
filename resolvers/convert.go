package resolvers

import (
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/store"
)

// toEvent converts a stored event and its summary into the API's Event.
func toEvent(e *store.Event, s catalog.Summary) *model.Event {
	loc := catalog.Zone(e.Timezone)
	next, last := catalog.FormatTime(s.NextStart, loc), catalog.FormatTime(s.LastEnd, loc)
	return &model.Event{
		ID:                   int(e.ID),
		Reference:            e.Reference,
		Name:                 e.Name,
		Slug:                 e.Slug,
		Description:          e.Description,
		ImageURL:             e.ImageURL,
		ActiveDatesCount:     s.ActiveDatesCount,
		HasMultipleDates:     s.HasMultipleDates(),
		USSDCode:             e.USSDCode,
		USSDFullCode:         e.USSDFullCode,
		HasUSSD:              e.USSDFullCode != nil && *e.USSDFullCode != "" || e.USSDCode != nil && *e.USSDCode != "",
		NextStartdate:        plain(next),
		LastEnddate:          plain(last),
		NextStartdateISO:     iso(next),
		LastEnddateISO:       iso(last),
		NextStartdateDisplay: display(next),
		LastEnddateDisplay:   display(last),
		Timezone:             e.Timezone,
		CreatedAt:            catalog.FormatStamp(e.CreatedAt),
		UpdatedAt:            catalog.FormatStamp(e.UpdatedAt),
		Pricing: &model.PricingSummary{
			HasFreeTickets: s.HasFreeTickets,
			HasPaidTickets: s.HasPaidTickets,
			IsEntirelyFree: s.IsEntirelyFree(),
		},
	}
}

// toEventDate converts a stored date, in its event's timezone, with its
// venue flattened in (v may be nil).
func toEventDate(d *store.EventDate, tz string, v *store.Venue) *model.EventDate {
	loc := catalog.Zone(tz)
	start, end := catalog.FormatTime(d.StartAt, loc), catalog.FormatTime(d.EndAt, loc)
	out := &model.EventDate{
		ID:               int(d.ID),
		Reference:        d.Reference,
		EventID:          int(d.EventID),
		Startdate:        start.Plain,
		Enddate:          end.Plain,
		StartdateISO:     iso(start),
		EnddateISO:       iso(end),
		StartdateDisplay: display(start),
		EnddateDisplay:   display(end),
		Online:           d.Online,
		Timezone:         tz,
		Cancelled:        !d.CancelledAt.IsZero(),
	}
	if v != nil {
		id := int(v.ID)
		out.VenueID = &id
		out.VenueName, out.VenueSlug = &v.Name, &v.Slug
		out.VenueStreet, out.VenueCity, out.VenueState = v.Street, v.City, v.State
		out.VenueLat, out.VenueLng = v.Lat, v.Lng
	}
	return out
}

// toVenue converts a stored venue.
func toVenue(v *store.Venue) *model.Venue {
	return &model.Venue{
		ID: int(v.ID), Reference: v.Reference, Name: v.Name, Slug: v.Slug,
		Street: v.Street, City: v.City, State: v.State, Lat: v.Lat, Lng: v.Lng,
	}
}

// toTicket converts a stored ticket, in its event's timezone.
func toTicket(t *store.Ticket, tz string) *model.Ticket {
	loc := catalog.Zone(tz)
	start, end := catalog.FormatTime(t.SalesStart, loc), catalog.FormatTime(t.SalesEnd, loc)
	effective := catalog.EffectivePrice(t)
	return &model.Ticket{QuantityAvailable: int(catalog.Available(t.Stock())), TicketInfo: &model.TicketInfo{
		ID:                 int(t.ID),
		Reference:          t.Reference,
		EventdateID:        int(t.EventDateID),
		Name:               t.Name,
		Description:        t.Description,
		Free:               t.Free,
		Price:              amount(t.Price),
		Promotionalprice:   amount(t.PromotionalPrice),
		Quantity:           intPtr(t.Quantity),
		Ticketsperattendee: intPtr(t.TicketsPerAttendee),
		Salesstartdate:     plain(start),
		Salesenddate:       plain(end),
		SalesstartdateISO:  iso(start),
		SalesenddateISO:    iso(end),
		Currency:           t.Currency,
		CurrencySymbol:     catalog.CurrencySymbol(t.Currency),
		IsFree:             catalog.IsFree(t),
		EffectivePrice:     catalog.FormatAmount(effective),
		RequiresPayment:    !catalog.IsFree(t),
		Timezone:           tz,
	}}
}

// toAvailability converts the stock rows of a date's tickets.
func toAvailability(dateID int64, stock []store.Stock) *model.DateAvailability {
	out := &model.DateAvailability{EventDateID: int(dateID), Tickets: make([]*model.TicketAvailability, len(stock))}
	for i := range stock {
		out.Tickets[i] = &model.TicketAvailability{TicketID: int(stock[i].ID), QuantityAvailable: int(catalog.Available(stock[i]))}
	}
	return out
}

// withStock gives kept tickets the availability of their stock rows (same
// tickets, same order), sharing what the catalog says of them; ok is false
// when the two no longer match.
func withStock(kept []*model.Ticket, stock []store.Stock) (out []*model.Ticket, ok bool) {
	if len(kept) != len(stock) {
		return nil, false
	}
	copies := make([]model.Ticket, len(kept))
	out = make([]*model.Ticket, len(kept))
	for i, t := range kept {
		if int64(t.ID) != stock[i].ID {
			return nil, false
		}
		copies[i].TicketInfo = t.TicketInfo
		copies[i].QuantityAvailable = int(catalog.Available(stock[i]))
		out[i] = &copies[i]
	}
	return out, true
}

func amount(minor *int64) *string {
	if minor == nil {
		return nil
	}
	s := catalog.FormatAmount(*minor)
	return &s
}

func intPtr(v *int64) *int {
	if v == nil {
		return nil
	}
	i := int(*v)
	return &i
}

func plain(t *catalog.Times) *string {
	if t == nil {
		return nil
	}
	return &t.Plain
}

func iso(t *catalog.Times) *string {
	if t == nil {
		return nil
	}
	return &t.ISO
}

func display(t *catalog.Times) *string {
	if t == nil {
		return nil
	}
	return &t.Display
}
