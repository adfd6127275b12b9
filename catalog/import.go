package catalog

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// ImportResult maps each reference of an imported file to its id.
type ImportResult struct {
	Venues     map[string]int64 `json:"venues"`
	Events     map[string]int64 `json:"events"`
	EventDates map[string]int64 `json:"event_dates"`
	Tickets    map[string]int64 `json:"tickets"`
}

// Import validates a catalog file and upserts it by reference in one
// transaction: all of it is written, or nothing. Rows whose values did not
// change are left untouched, so importing the same file twice changes
// nothing. A ticket's sold count is seeded only when the ticket is created;
// later imports never write sold or held, and refuse a quantity below them
// as they stand when the import writes, so it may run beside live
// checkouts. It returns a *FileError naming the reference and field of
// every problem.
func Import(ctx context.Context, db *store.DB, f *File, now time.Time) (*ImportResult, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	now = now.UTC()
	res := &ImportResult{
		Venues: map[string]int64{}, Events: map[string]int64{},
		EventDates: map[string]int64{}, Tickets: map[string]int64{},
	}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		im := importer{tx: tx, now: now, res: res}
		return im.run(ctx, f)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

type importer struct {
	tx       bun.Tx
	now      time.Time
	res      *ImportResult
	problems problems
}

func (im *importer) run(ctx context.Context, f *File) error {
	if err := im.venues(ctx, f); err != nil {
		return err
	}
	if err := im.resolveVenues(ctx, f); err != nil {
		return err
	}
	if err := im.events(ctx, f); err != nil {
		return err
	}
	if len(im.problems) > 0 {
		return &FileError{Problems: im.problems}
	}
	return nil
}

func (im *importer) venues(ctx context.Context, f *File) error {
	refs := make([]string, len(f.Venues))
	for i, v := range f.Venues {
		refs[i] = v.Reference
	}
	existing, err := store.VenuesByReferences(ctx, im.tx, refs)
	if err != nil {
		return err
	}
	byRef := map[string]*store.Venue{}
	for i := range existing {
		byRef[existing[i].Reference] = &existing[i]
	}
	for _, v := range f.Venues {
		row := &store.Venue{
			Reference: v.Reference, Name: v.Name, Slug: v.Slug,
			Street: v.Street, City: v.City, State: v.State, Lat: v.Lat, Lng: v.Lng,
		}
		id, _, err := upsert(ctx, im.tx, row, byRef[v.Reference], im.now, updateRow)
		if err != nil {
			return err
		}
		im.res.Venues[v.Reference] = id
	}
	return nil
}

// resolveVenues finds the ids of venues that dates name but the file does
// not define: they must already exist.
func (im *importer) resolveVenues(ctx context.Context, f *File) error {
	var missing []string
	for _, e := range f.Events {
		for _, d := range e.Dates {
			if d.Venue != nil {
				if _, ok := im.res.Venues[*d.Venue]; !ok {
					missing = append(missing, *d.Venue)
				}
			}
		}
	}
	found, err := store.VenuesByReferences(ctx, im.tx, missing)
	if err != nil {
		return err
	}
	for _, v := range found {
		im.res.Venues[v.Reference] = v.ID
	}
	return nil
}

func (im *importer) events(ctx context.Context, f *File) error {
	var eventRefs, dateRefs, ticketRefs []string
	for _, e := range f.Events {
		eventRefs = append(eventRefs, e.Reference)
		for _, d := range e.Dates {
			dateRefs = append(dateRefs, d.Reference)
			for _, t := range d.Tickets {
				ticketRefs = append(ticketRefs, t.Reference)
			}
		}
	}
	events, err := store.EventsByReferences(ctx, im.tx, eventRefs)
	if err != nil {
		return err
	}
	dates, err := store.EventDatesByReferences(ctx, im.tx, dateRefs)
	if err != nil {
		return err
	}
	tickets, err := store.TicketsByReferences(ctx, im.tx, ticketRefs)
	if err != nil {
		return err
	}
	oldEvents, oldDates, oldTickets := index(events, func(e *store.Event) string { return e.Reference }),
		index(dates, func(d *store.EventDate) string { return d.Reference }),
		index(tickets, func(t *store.Ticket) string { return t.Reference })

	for _, e := range f.Events {
		tz := e.Timezone
		if tz == "" {
			tz = DefaultTimezone
		}
		var p problems
		row := &store.Event{
			Reference: e.Reference, Name: e.Name, Slug: e.Slug, Description: e.Description,
			ImageURL: e.ImageURL, Timezone: tz, Published: e.Published,
			HiddenFromListings: e.HiddenFromListings, Private: e.Private,
			PasswordProtected: e.PasswordProtected, USSDCode: e.USSDCode, USSDFullCode: e.USSDFullCode,
			SalesStart: parseInstant(&p, "", "", e.SalesStart), SalesEnd: parseInstant(&p, "", "", e.SalesEnd),
		}
		eventID, _, err := upsert(ctx, im.tx, row, oldEvents[e.Reference], im.now, updateRow)
		if err != nil {
			return err
		}
		im.res.Events[e.Reference] = eventID
		for _, d := range e.Dates {
			if err := im.date(ctx, eventID, &d, oldDates[d.Reference], oldTickets); err != nil {
				return err
			}
		}
	}
	return nil
}

func (im *importer) date(ctx context.Context, eventID int64, d *DateSpec, old *store.EventDate, oldTickets map[string]*store.Ticket) error {
	var p problems
	row := &store.EventDate{
		Reference: d.Reference, EventID: eventID,
		StartAt: parseInstant(&p, "", "", &d.Start), EndAt: parseInstant(&p, "", "", &d.End),
		Online: d.Online, Active: d.Active == nil || *d.Active, PayoutLocked: d.PayoutLocked,
	}
	if d.Venue != nil {
		id, ok := im.res.Venues[*d.Venue]
		if !ok {
			im.problems.add(where("date", 0, d.Reference), "venue", "%q is neither in the file nor an existing venue", *d.Venue)
			return nil
		}
		row.VenueID = &id
	}
	dateID, _, err := upsert(ctx, im.tx, row, old, im.now, updateRow)
	if err != nil {
		return err
	}
	im.res.EventDates[d.Reference] = dateID
	for _, t := range d.Tickets {
		row := &store.Ticket{
			Reference: t.Reference, EventDateID: dateID, Name: t.Name, Description: t.Description,
			Free: t.Free, Quantity: t.Quantity, Sold: t.Sold, TicketsPerAttendee: t.TicketsPerAttendee,
			SalesStart: parseInstant(&p, "", "", t.SalesStart), SalesEnd: parseInstant(&p, "", "", t.SalesEnd),
			Currency: t.Currency,
		}
		row.Price = amount(t.Price)
		row.PromotionalPrice = amount(t.PromotionalPrice)
		prev := oldTickets[t.Reference]
		if prev != nil {
			// Live stock counts belong to checkout, not to the file. Those
			// read may be stale by now: they are copied only so that they
			// do not count as a change; UpdateTicketCatalog never writes
			// them, and checks the quantity against the live ones.
			row.Sold, row.Held = prev.Sold, prev.Held
		}
		id, ok, err := upsert(ctx, im.tx, row, prev, im.now, store.UpdateTicketCatalog)
		if err != nil {
			return err
		}
		if !ok {
			if err := im.quantityBelowStock(ctx, row); err != nil {
				return err
			}
			continue
		}
		im.res.Tickets[t.Reference] = id
	}
	return nil
}

// quantityBelowStock reports a ticket whose update was refused: its new
// quantity is below the tickets sold or held, read again as they stood
// when the import wrote.
func (im *importer) quantityBelowStock(ctx context.Context, t *store.Ticket) error {
	live, err := store.TicketsByIDs(ctx, im.tx, []int64{t.ID})
	if err != nil {
		return err
	}
	if len(live) != 1 || t.Quantity == nil {
		// Only a quantity can be refused, and tickets are never deleted.
		return fmt.Errorf("catalog import: ticket %q (id %d) could not be updated", t.Reference, t.ID)
	}
	im.problems.add(where("ticket", 0, t.Reference), "quantity",
		"%d is less than the %d tickets already sold or held", *t.Quantity, live[0].Sold+live[0].Held)
	return nil
}

func amount(s *string) *int64 {
	if s == nil {
		return nil
	}
	v, _ := ParseAmount(*s) // validated before
	return &v
}

func index[T any](rows []T, key func(*T) string) map[string]*T {
	m := make(map[string]*T, len(rows))
	for i := range rows {
		m[key(&rows[i])] = &rows[i]
	}
	return m
}

// row is a catalog model with the bookkeeping columns upsert manages.
type row interface {
	*store.Venue | *store.Event | *store.EventDate | *store.Ticket
}

// plainRow is a catalog model without live columns: every column of it
// comes from the file. Tickets are not, so updateRow cannot write one.
type plainRow interface {
	*store.Venue | *store.Event | *store.EventDate
}

// updateRow writes every column of an existing row; it never refuses.
func updateRow[R plainRow](ctx context.Context, db bun.IDB, r R) (bool, error) {
	_, err := db.NewUpdate().Model(r).WherePK().Exec(ctx)
	return true, err
}

// upsert inserts r when old is nil, writes it with update when its values
// differ from old, and otherwise leaves the database alone. It returns the
// row's id, and false when update refused to write.
func upsert[R row](ctx context.Context, tx bun.Tx, r R, old R, now time.Time,
	update func(context.Context, bun.IDB, R) (bool, error)) (int64, bool, error) {
	rv := reflect.ValueOf(r).Elem()
	if old == nil {
		rv.FieldByName("CreatedAt").Set(reflect.ValueOf(now))
		rv.FieldByName("UpdatedAt").Set(reflect.ValueOf(now))
		if _, err := tx.NewInsert().Model(r).Returning("id").Exec(ctx); err != nil {
			return 0, false, err
		}
		return rv.FieldByName("ID").Int(), true, nil
	}
	ov := reflect.ValueOf(old).Elem()
	for _, f := range []string{"ID", "CreatedAt", "UpdatedAt"} {
		rv.FieldByName(f).Set(ov.FieldByName(f))
	}
	normalizeTimes(ov)
	normalizeTimes(rv)
	if reflect.DeepEqual(ov.Interface(), rv.Interface()) {
		return ov.FieldByName("ID").Int(), true, nil
	}
	rv.FieldByName("UpdatedAt").Set(reflect.ValueOf(now))
	ok, err := update(ctx, tx, r)
	if err != nil {
		return 0, false, err
	}
	return rv.FieldByName("ID").Int(), ok, nil
}

// normalizeTimes puts every time.Time field in UTC so values read back from
// either driver compare equal to values parsed from the file.
func normalizeTimes(v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		if t, ok := v.Field(i).Interface().(time.Time); ok && v.Field(i).CanSet() {
			if t.IsZero() {
				v.Field(i).Set(reflect.ValueOf(time.Time{}))
			} else {
				v.Field(i).Set(reflect.ValueOf(t.UTC()))
			}
		}
	}
}
