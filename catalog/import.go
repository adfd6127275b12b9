package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// ImportResult maps each reference of an imported file to its id, and
// says what the import changed.
type ImportResult struct {
	Venues     map[string]int64 `json:"venues"`
	Events     map[string]int64 `json:"events"`
	EventDates map[string]int64 `json:"event_dates"`
	Tickets    map[string]int64 `json:"tickets"`
	// Created, Updated and Unchanged count the file's rows by what the
	// import did with them; venues the file only names are not counted.
	Created   Counts `json:"created"`
	Updated   Counts `json:"updated"`
	Unchanged Counts `json:"unchanged"`
	// NothingChanged is true when the database already matched the file,
	// so the import wrote nothing.
	NothingChanged bool `json:"nothing_changed"`
}

// Counts counts rows of each kind of a catalog file.
type Counts struct {
	Venues     int `json:"venues"`
	Events     int `json:"events"`
	EventDates int `json:"event_dates"`
	Tickets    int `json:"tickets"`
}

// Total is the number of rows of every kind.
func (c Counts) Total() int { return c.Venues + c.Events + c.EventDates + c.Tickets }

// String lists the non-zero counts, such as "1 venue, 2 tickets", or "none".
func (c Counts) String() string {
	var parts []string
	for _, k := range []struct {
		n          int
		one, other string
	}{
		{c.Venues, "venue", "venues"}, {c.Events, "event", "events"},
		{c.EventDates, "event date", "event dates"}, {c.Tickets, "ticket", "tickets"},
	} {
		switch {
		case k.n == 1:
			parts = append(parts, "1 "+k.one)
		case k.n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", k.n, k.other))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Import validates a catalog file and upserts it by reference in one
// transaction: all of it is written, or nothing. Every problem is reported
// at once, before anything is written: values of the wrong JSON type, the
// file's own rules, and what needs the database (venues that are neither in
// the file nor stored, quantities below the tickets already sold or held).
// Rows whose values did not change are left untouched, so importing the
// same file twice changes nothing, and the result says so. A ticket's sold
// count is seeded only when the ticket is created; later imports never
// write sold or held, and refuse a quantity below them as they stand when
// the import writes, so it may run beside live checkouts. It returns a
// *FileError naming the reference, field and line of every problem.
func Import(ctx context.Context, db *store.DB, f *File, now time.Time) (*ImportResult, error) {
	return ImportReporting(ctx, db, f, now, nil)
}

// ImportReporting is Import telling progress (which may be nil) how many
// of the file's rows it has written or found unchanged so far, of how
// many, as it goes: a file of a million events takes minutes.
func ImportReporting(ctx context.Context, db *store.DB, f *File, now time.Time, progress func(done, total int)) (*ImportResult, error) {
	p := f.validate()
	now = now.UTC()
	res := &ImportResult{
		Venues: map[string]int64{}, Events: map[string]int64{},
		EventDates: map[string]int64{}, Tickets: map[string]int64{},
	}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		im := importer{tx: tx, now: now, res: res, file: f, problems: p, postgres: db.Postgres(), progress: progress}
		for _, e := range f.Events {
			im.total++
			for _, d := range e.Dates {
				im.total += 1 + len(d.Tickets)
			}
		}
		if err := im.check(ctx); err != nil {
			return err
		}
		if err := im.problems.err(); err != nil {
			return err
		}
		return im.run(ctx)
	})
	if err != nil {
		return nil, err
	}
	res.NothingChanged = res.Created.Total()+res.Updated.Total() == 0
	return res, nil
}

type importer struct {
	tx         bun.Tx
	now        time.Time
	res        *ImportResult
	file       *File
	problems   problems
	oldTickets map[string]*store.Ticket
	postgres   bool
	// written counts rows written so far; bulk is set once it passes
	// BulkRows.
	written int
	bulk    bool
	// done and total count the file's events, dates and tickets for
	// progress.
	done, total int
	progress    func(done, total int)
}

// BulkRows is how many rows an import writes before it tells PostgreSQL's
// catalog triggers that it is a bulk change (boxoffice.catalog_bulk): from
// then on each statement notifies "anything changed" once instead of each
// row naming its event, and listeners read the catalog again once, which
// costs less than following thousands of single changes.
const BulkRows = 5_000

// wrote counts n rows about to be written, switching to a bulk change
// when they pass BulkRows.
func (im *importer) wrote(ctx context.Context, n int) error {
	im.written += n
	if im.postgres && !im.bulk && im.written > BulkRows {
		im.bulk = true
		_, err := im.tx.ExecContext(ctx, "SET LOCAL boxoffice.catalog_bulk = 'on'")
		return err
	}
	return nil
}

// step reports n more of the file's rows handled.
func (im *importer) step(n int) {
	im.done += n
	if im.progress != nil {
		im.progress(im.done, im.total)
	}
}

// insertChunk is how many rows one INSERT writes.
const insertChunk = 1_000

// insertAll inserts rows in statements of insertChunk rows, and returns
// the id given to each reference.
func insertAll[R any](ctx context.Context, im *importer, rows []R, ref func(*R) (string, int64)) (map[string]int64, error) {
	ids := make(map[string]int64, len(rows))
	for chunk := range slices.Chunk(rows, insertChunk) {
		if err := im.wrote(ctx, len(chunk)); err != nil {
			return nil, err
		}
		if _, err := im.tx.NewInsert().Model(&chunk).Returning("id, reference").Exec(ctx); err != nil {
			return nil, err
		}
		for i := range chunk {
			r, id := ref(&chunk[i])
			ids[r] = id
		}
	}
	return ids, nil
}

// check finds what is wrong with the file given the database, before
// anything is written, so it is reported with the file's other problems:
// venues that dates name but that are neither in the file nor stored, and
// quantities below the tickets sold or held as they stand now (the write
// checks again, for holds taken meanwhile).
func (im *importer) check(ctx context.Context) error {
	f := im.file
	inFile := map[string]bool{}
	for _, v := range f.Venues {
		inFile[v.Reference] = true
	}
	var named, ticketRefs []string
	for _, e := range f.Events {
		for _, d := range e.Dates {
			if d.Venue != nil && !inFile[*d.Venue] {
				named = append(named, *d.Venue)
			}
			for _, t := range d.Tickets {
				ticketRefs = append(ticketRefs, t.Reference)
			}
		}
	}
	found, err := store.VenuesByReferences(ctx, im.tx, named)
	if err != nil {
		return err
	}
	for _, v := range found {
		im.res.Venues[v.Reference] = v.ID
	}
	tickets, err := store.TicketsByReferences(ctx, im.tx, ticketRefs)
	if err != nil {
		return err
	}
	im.oldTickets = index(tickets, func(t *store.Ticket) string { return t.Reference })
	for i := range f.Events {
		for j := range f.Events[i].Dates {
			d := &f.Events[i].Dates[j]
			if d.Venue != nil && !inFile[*d.Venue] {
				if _, ok := im.res.Venues[*d.Venue]; !ok {
					im.problems.add(f.pos.at(d, where("date", j, d.Reference)), "venue",
						"%q is neither in the file nor an existing venue", *d.Venue)
				}
			}
			for k := range d.Tickets {
				t := &d.Tickets[k]
				if old := im.oldTickets[t.Reference]; old != nil && t.Quantity != nil && !Fits(restocked(old, *t.Quantity), 0) {
					im.problems.add(f.pos.at(t, where("ticket", k, t.Reference)), "quantity",
						"%d is less than the %d tickets already sold or held", *t.Quantity, old.Sold+old.Held)
				}
			}
		}
	}
	return nil
}

// run writes the file; only a quantity refused at write time (holds taken
// since check) can still make it fail.
func (im *importer) run(ctx context.Context) error {
	if err := im.venues(ctx); err != nil {
		return err
	}
	if err := im.events(ctx); err != nil {
		return err
	}
	return im.problems.err()
}

func (im *importer) venues(ctx context.Context) error {
	f := im.file
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
	var creates []store.Venue
	for _, v := range f.Venues {
		row := &store.Venue{
			Reference: v.Reference, Name: v.Name, Slug: v.Slug,
			Street: v.Street, City: v.City, State: v.State, Lat: v.Lat, Lng: v.Lng,
		}
		id, done, err := upsert(ctx, im, row, byRef[v.Reference], updateRow)
		if err != nil {
			return err
		}
		im.count(done, func(c *Counts) { c.Venues++ })
		if done == created {
			creates = append(creates, *row)
			continue
		}
		im.res.Venues[v.Reference] = id
	}
	ids, err := insertAll(ctx, im, creates, func(v *store.Venue) (string, int64) { return v.Reference, v.ID })
	maps.Copy(im.res.Venues, ids)
	return err
}

// count adds one row to the count of what was done with it.
func (im *importer) count(done outcome, inc func(*Counts)) {
	switch done {
	case created:
		inc(&im.res.Created)
	case updated:
		inc(&im.res.Updated)
	case unchanged:
		inc(&im.res.Unchanged)
	}
}

func (im *importer) events(ctx context.Context) error {
	f := im.file
	var eventRefs, dateRefs []string
	for _, e := range f.Events {
		eventRefs = append(eventRefs, e.Reference)
		for _, d := range e.Dates {
			dateRefs = append(dateRefs, d.Reference)
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
	oldEvents, oldDates := index(events, func(e *store.Event) string { return e.Reference }),
		index(dates, func(d *store.EventDate) string { return d.Reference })

	// Events, then dates, then tickets, each kind in batches: a row's
	// parent has its id before the row is written. New rows go in
	// multi-row INSERTs; changed rows are updated one by one (a ticket's
	// update checks its quantity against live stock), unchanged ones are
	// left alone.
	var creates []store.Event
	for i := range f.Events {
		e := &f.Events[i]
		tz := e.Timezone
		if tz == "" {
			tz = DefaultTimezone
		}
		row := &store.Event{
			Reference: e.Reference, Name: e.Name, Slug: e.Slug, Description: e.Description,
			ImageURL: e.ImageURL, Timezone: tz, Published: e.Published,
			HiddenFromListings: e.HiddenFromListings, Private: e.Private,
			PasswordProtected: e.PasswordProtected, USSDCode: e.USSDCode, USSDFullCode: e.USSDFullCode,
			SalesStart: mustInstant(e.SalesStart), SalesEnd: mustInstant(e.SalesEnd),
		}
		eventID, done, err := upsert(ctx, im, row, oldEvents[e.Reference], updateRow)
		if err != nil {
			return err
		}
		im.count(done, func(c *Counts) { c.Events++ })
		if done == created {
			creates = append(creates, *row)
			continue
		}
		im.res.Events[e.Reference] = eventID
		im.step(1)
	}
	ids, err := insertAll(ctx, im, creates, func(e *store.Event) (string, int64) { return e.Reference, e.ID })
	if err != nil {
		return err
	}
	maps.Copy(im.res.Events, ids)
	im.step(len(creates))

	var dateCreates []store.EventDate
	for i := range f.Events {
		e := &f.Events[i]
		for j := range e.Dates {
			row, done, err := im.date(ctx, im.res.Events[e.Reference], &e.Dates[j], oldDates[e.Dates[j].Reference])
			if err != nil {
				return err
			}
			if done == created {
				dateCreates = append(dateCreates, *row)
			} else {
				im.step(1)
			}
		}
	}
	ids, err = insertAll(ctx, im, dateCreates, func(d *store.EventDate) (string, int64) { return d.Reference, d.ID })
	if err != nil {
		return err
	}
	maps.Copy(im.res.EventDates, ids)
	im.step(len(dateCreates))

	var ticketCreates []store.Ticket
	for i := range f.Events {
		for j := range f.Events[i].Dates {
			d := &f.Events[i].Dates[j]
			rows, err := im.tickets(ctx, im.res.EventDates[d.Reference], d)
			if err != nil {
				return err
			}
			ticketCreates = append(ticketCreates, rows...)
		}
	}
	ids, err = insertAll(ctx, im, ticketCreates, func(t *store.Ticket) (string, int64) { return t.Reference, t.ID })
	if err != nil {
		return err
	}
	maps.Copy(im.res.Tickets, ids)
	im.step(len(ticketCreates))
	return nil
}

// date writes date d of event eventID when it changed; a new date is
// returned for the caller to insert with the others (done is created).
func (im *importer) date(ctx context.Context, eventID int64, d *DateSpec, old *store.EventDate) (*store.EventDate, outcome, error) {
	row := &store.EventDate{
		Reference: d.Reference, EventID: eventID,
		StartAt: mustInstant(&d.Start), EndAt: mustInstant(&d.End),
		Online: d.Online, Active: d.Active == nil || *d.Active, PayoutLocked: d.PayoutLocked,
	}
	if d.Venue != nil {
		id, ok := im.res.Venues[*d.Venue]
		if !ok { // check reported it before anything was written
			return nil, 0, fmt.Errorf("catalog import: date %q: venue %q was not resolved", d.Reference, *d.Venue)
		}
		row.VenueID = &id
	}
	dateID, done, err := upsert(ctx, im, row, old, updateRow)
	if err != nil {
		return nil, 0, err
	}
	im.count(done, func(c *Counts) { c.EventDates++ })
	if done != created {
		im.res.EventDates[d.Reference] = dateID
	}
	return row, done, nil
}

// tickets writes the changed tickets of date d (id dateID) and returns
// its new ones for the caller to insert with the others.
func (im *importer) tickets(ctx context.Context, dateID int64, d *DateSpec) ([]store.Ticket, error) {
	var creates []store.Ticket
	for k := range d.Tickets {
		t := &d.Tickets[k]
		row := &store.Ticket{
			Reference: t.Reference, EventDateID: dateID, Name: t.Name, Description: t.Description,
			Free: t.Free, Quantity: t.Quantity, Sold: t.Sold, TicketsPerAttendee: t.TicketsPerAttendee,
			SalesStart: mustInstant(t.SalesStart), SalesEnd: mustInstant(t.SalesEnd),
			Currency: t.Currency,
		}
		row.Price = amount(t.Price)
		row.PromotionalPrice = amount(t.PromotionalPrice)
		prev := im.oldTickets[t.Reference]
		if prev != nil {
			// Live stock counts belong to checkout, not to the file. Those
			// read may be stale by now: they are copied only so that they
			// do not count as a change; UpdateTicketCatalog never writes
			// them, and checks the quantity against the live ones.
			row.Sold, row.Held = prev.Sold, prev.Held
		}
		id, done, err := upsert(ctx, im, row, prev, store.UpdateTicketCatalog)
		if err != nil {
			return nil, err
		}
		if done == refused {
			if err := im.quantityBelowStock(ctx, row, im.file.pos.at(t, where("ticket", k, t.Reference))); err != nil {
				return nil, err
			}
			continue
		}
		im.count(done, func(c *Counts) { c.Tickets++ })
		if done == created {
			creates = append(creates, *row)
			continue
		}
		im.res.Tickets[t.Reference] = id
		im.step(1)
	}
	return creates, nil
}

// quantityBelowStock reports a ticket whose update was refused: its new
// quantity is below the tickets sold or held, read again as they stood
// when the import wrote.
func (im *importer) quantityBelowStock(ctx context.Context, t *store.Ticket, at *objectPos) error {
	live, err := store.TicketsByIDs(ctx, im.tx, []int64{t.ID})
	if err != nil {
		return err
	}
	if len(live) != 1 || t.Quantity == nil {
		// Only a quantity can be refused, and tickets are never deleted.
		return fmt.Errorf("catalog import: ticket %q (id %d) could not be updated", t.Reference, t.ID)
	}
	im.problems.add(at, "quantity",
		"%d is less than the %d tickets already sold or held", *t.Quantity, live[0].Sold+live[0].Held)
	return nil
}

// restocked is old's stock as the quantity q would leave it.
func restocked(old *store.Ticket, q int64) store.Stock {
	s := old.Stock()
	s.Quantity = sql.NullInt64{Int64: q, Valid: true}
	return s
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

// outcome is what upsert did with a row.
type outcome int

const (
	created outcome = iota
	updated
	unchanged
	refused // update declined to write (a ticket quantity below its stock)
)

// upsert writes r with update when its values differ from old and
// otherwise leaves the database alone; when old is nil it only stamps r,
// created, for the caller to insert with others (insertAll). It returns
// the row's id (0 when created) and what it did.
func upsert[R row](ctx context.Context, im *importer, r R, old R,
	update func(context.Context, bun.IDB, R) (bool, error)) (int64, outcome, error) {
	rv := reflect.ValueOf(r).Elem()
	now := im.now
	if old == nil {
		rv.FieldByName("CreatedAt").Set(reflect.ValueOf(now))
		rv.FieldByName("UpdatedAt").Set(reflect.ValueOf(now))
		return 0, created, nil
	}
	ov := reflect.ValueOf(old).Elem()
	for _, f := range []string{"ID", "CreatedAt", "UpdatedAt"} {
		rv.FieldByName(f).Set(ov.FieldByName(f))
	}
	normalizeTimes(ov)
	normalizeTimes(rv)
	if reflect.DeepEqual(ov.Interface(), rv.Interface()) {
		return ov.FieldByName("ID").Int(), unchanged, nil
	}
	rv.FieldByName("UpdatedAt").Set(reflect.ValueOf(now))
	if err := im.wrote(ctx, 1); err != nil {
		return 0, updated, err
	}
	ok, err := update(ctx, im.tx, r)
	if err != nil {
		return 0, updated, err
	}
	if !ok {
		return rv.FieldByName("ID").Int(), refused, nil
	}
	return rv.FieldByName("ID").Int(), updated, nil
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
