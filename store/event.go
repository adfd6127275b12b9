package store

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Event is a catalog event; its dates carry the tickets.
type Event struct {
	bun.BaseModel `bun:"table:events,alias:e"`

	ID                 int64     `bun:"id,pk,autoincrement"`
	Reference          string    `bun:"reference,notnull"`
	Name               string    `bun:"name,notnull"`
	Slug               string    `bun:"slug,notnull"`
	Description        *string   `bun:"description"`
	ImageURL           *string   `bun:"image_url"`
	Timezone           string    `bun:"timezone,notnull"`
	Published          bool      `bun:"published,notnull"`
	HiddenFromListings bool      `bun:"hidden_from_listings,notnull"`
	Private            bool      `bun:"private,notnull"`
	PasswordProtected  bool      `bun:"password_protected,notnull"`
	USSDCode           *string   `bun:"ussd_code"`
	USSDFullCode       *string   `bun:"ussd_full_code"`
	SalesStart         time.Time `bun:"sales_start,nullzero"`
	SalesEnd           time.Time `bun:"sales_end,nullzero"`
	CreatedAt          time.Time `bun:"created_at,notnull"`
	UpdatedAt          time.Time `bun:"updated_at,notnull"`
	// SortStart is the start a listing ordered soonest first sorts the
	// event by; only those listings read it.
	SortStart time.Time `bun:"sort_start,scanonly"`
}

// visible restricts a query on events (alias e) to the events partners may
// see: published and not hidden from listings. It is the one home of that rule.
func visible(q *bun.SelectQuery) *bun.SelectQuery {
	return q.Where("e.published = ?", true).Where("e.hidden_from_listings = ?", false)
}

// EventFilter selects visible events: a page of them (ListEvents) or those
// after a position (EventsAfter).
type EventFilter struct {
	// Q keeps events whose name contains it, case-insensitively.
	Q string
	// Slug keeps events with exactly this slug.
	Slug string
	// IncludePast keeps events that have no active date ending after Now;
	// the date filters then look at every active date, not only upcoming ones.
	IncludePast bool
	Now         time.Time
	// The date filters: an event is kept when one of its active dates
	// (upcoming ones unless IncludePast) passes all of them. A zero or nil
	// value leaves its filter out. Dates start at or after StartsAfter and
	// before StartsBefore.
	StartsAfter, StartsBefore time.Time
	// City matches the city of the date's venue, case-insensitively.
	City    string
	VenueID int64
	Online  *bool
	// Free keeps entirely free events (true: every ticket of the upcoming
	// active dates is free, and there is one) or events with a paid ticket
	// (false), as the event's pricing summary says.
	Free *bool
	// Soonest orders by the earliest start among the dates the date filters
	// keep (events without one last), then id; otherwise newest first.
	Soonest bool
	Limit   int
	Offset  int
	// After keeps the events after this position in the order (EventsAfter).
	After *EventKey
}

// EventKey is an event's position in a listing's order, what a cursor holds.
type EventKey struct {
	ID        int64
	CreatedAt time.Time // newest first
	// Start is the event's sort start (soonest first); zero when it has
	// none, which sorts last.
	Start time.Time
}

// Key returns the position of e, a row of a listing made with f.
func (f *EventFilter) Key(e *Event) EventKey {
	k := EventKey{ID: e.ID}
	if f.Soonest {
		k.Start = e.SortStart.UTC()
	} else {
		k.CreatedAt = e.CreatedAt.UTC()
	}
	return k
}

// byDate reports whether the filter looks at dates at all.
func (f *EventFilter) byDate() bool {
	return !f.IncludePast || !f.StartsAfter.IsZero() || !f.StartsBefore.IsZero() ||
		f.City != "" || f.VenueID != 0 || f.Online != nil
}

// dates restricts a query on event_dates (alias d) to the dates the date
// filters keep, of any event.
func (f *EventFilter) dates(q *bun.SelectQuery) *bun.SelectQuery {
	if f.IncludePast {
		q = q.Where("d.active = ?", true)
	} else {
		q = upcoming(q, "d", f.Now)
	}
	if !f.StartsAfter.IsZero() {
		q = q.Where("d.start_at >= ?", f.StartsAfter.UTC())
	}
	if !f.StartsBefore.IsZero() {
		q = q.Where("d.start_at < ?", f.StartsBefore.UTC())
	}
	if f.City != "" {
		q = q.Join("JOIN venues AS v ON v.id = d.venue_id").Where("lower(v.city) = lower(?)", f.City)
	}
	if f.VenueID != 0 {
		q = q.Where("d.venue_id = ?", f.VenueID)
	}
	if f.Online != nil {
		q = q.Where("d.online = ?", *f.Online)
	}
	return q
}

// Which tickets cost money: catalog.IsFree in SQL (zero effective price:
// flagged free, no price, a zero price, or a zero promotional price below
// the price). Prices are never negative. The two are each other's negation
// written out, not NOT of one another: NOT of a NULL comparison is NULL,
// so a ticket without a price would be neither. catalog's
// TestEffectivePrice runs the same cases through both and through IsFree.
const (
	paidTicket = "(t.free = ? AND t.price > 0 AND (t.promotional_price IS NULL OR t.promotional_price > 0))"
	freeTicket = "(t.free = ? OR t.price IS NULL OR t.price = 0 OR t.promotional_price = 0)"
)

// tickets is "a ticket of an upcoming active date of event e passing cond".
func (f *EventFilter) tickets(db bun.IDB, cond string, arg bool) *bun.SelectQuery {
	q := db.NewSelect().TableExpr("event_dates AS pd").
		Join("JOIN tickets AS t ON t.event_date_id = pd.id").
		ColumnExpr("1").
		Where("pd.event_id = e.id")
	return upcoming(q, "pd", f.Now).Where(cond, arg)
}

// where restricts a query on events (alias e) to the events f keeps; the
// date filters are left to the caller when byDates is false.
func (f *EventFilter) where(db bun.IDB, q *bun.SelectQuery, byDates bool) *bun.SelectQuery {
	q = visible(q)
	if f.Q != "" {
		q = q.Where(`lower(e.name) LIKE ? ESCAPE '\'`, "%"+escapeLike(strings.ToLower(f.Q))+"%")
	}
	if f.Slug != "" {
		q = q.Where("e.slug = ?", f.Slug)
	}
	if byDates && f.byDate() {
		q = q.Where("EXISTS (?)", f.dates(db.NewSelect().Model((*EventDate)(nil)).ColumnExpr("1").Where("d.event_id = e.id")))
	}
	if f.Free != nil {
		paid := f.tickets(db, paidTicket, false)
		if *f.Free {
			q = q.Where("EXISTS (?)", f.tickets(db, freeTicket, true)).Where("NOT EXISTS (?)", paid)
		} else {
			q = q.Where("EXISTS (?)", paid)
		}
	}
	return q
}

// ordered selects the events f keeps in f's order, after key when key is
// not nil. Soonest first joins each event to the earliest start of its
// kept dates, grouped in one pass over event_dates (an inner join doing
// the date filters' work; a left join, sorting events without an active
// date last, when there are none).
func (f *EventFilter) ordered(db bun.IDB, events *[]Event, key *EventKey) *bun.SelectQuery {
	if !f.Soonest {
		q := f.where(db, db.NewSelect().Model(events), true)
		if key != nil {
			q = q.Where("(e.created_at < ? OR (e.created_at = ? AND e.id < ?))", key.CreatedAt, key.CreatedAt, key.ID)
		}
		return q.Order("e.created_at DESC", "e.id DESC")
	}
	starts := f.dates(db.NewSelect().Model((*EventDate)(nil)).
		ColumnExpr("d.event_id").ColumnExpr("min(d.start_at) AS sort_start").Group("d.event_id"))
	join := "JOIN (?) AS s ON s.event_id = e.id"
	if !f.byDate() {
		join = "LEFT " + join
	}
	q := f.where(db, db.NewSelect().Model(events).ColumnExpr("e.*").ColumnExpr("s.sort_start").Join(join, starts), false)
	switch {
	case key == nil:
	case key.Start.IsZero():
		q = q.Where("(s.sort_start IS NULL AND e.id > ?)", key.ID)
	default:
		q = q.Where("(s.sort_start > ? OR (s.sort_start = ? AND e.id > ?) OR s.sort_start IS NULL)", key.Start, key.Start, key.ID)
	}
	return q.OrderExpr("s.sort_start ASC NULLS LAST").Order("e.id ASC")
}

// ListEvents returns one page of visible events in f's order (Limit and
// Offset), and how many events match in all.
func ListEvents(ctx context.Context, db bun.IDB, f EventFilter) ([]Event, int, error) {
	total, err := f.where(db, db.NewSelect().Model((*Event)(nil)), true).Count(ctx)
	if err != nil {
		return nil, 0, translate(err)
	}
	events := []Event{}
	if total == 0 || int64(f.Offset) >= total {
		return events, int(total), nil
	}
	err = f.ordered(db, &events, nil).Limit(int64(f.Limit)).Offset(int64(f.Offset)).Scan(ctx)
	return events, int(total), translate(err)
}

// EventsAfter returns up to Limit visible events in f's order that come
// after f.After (from the first when it is nil), in one statement.
func EventsAfter(ctx context.Context, db bun.IDB, f EventFilter) ([]Event, error) {
	events := []Event{}
	err := f.ordered(db, &events, f.After).Limit(int64(f.Limit)).Scan(ctx)
	return events, translate(err)
}

// VisibleEventBySlug returns the newest visible event with this slug; any
// other slug is ErrNotFound.
func VisibleEventBySlug(ctx context.Context, db bun.IDB, slug string) (*Event, error) {
	e := new(Event)
	err := visible(db.NewSelect().Model(e)).Where("e.slug = ?", slug).
		Order("e.created_at DESC", "e.id DESC").Limit(1).Scan(ctx)
	return e, translate(err)
}

// VisibleEvent returns a visible event; any other id is ErrNotFound.
func VisibleEvent(ctx context.Context, db bun.IDB, id int64) (*Event, error) {
	e := new(Event)
	err := visible(db.NewSelect().Model(e)).Where("e.id = ?", id).Scan(ctx)
	return e, translate(err)
}

// EventsByReferences returns the events with these references.
func EventsByReferences(ctx context.Context, db bun.IDB, refs []string) ([]Event, error) {
	var es []Event
	if len(refs) == 0 {
		return es, nil
	}
	err := db.NewSelect().Model(&es).Where("reference IN (?)", bun.List(refs)).Scan(ctx)
	return es, translate(err)
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// EventByID returns an event whatever its visibility (for orders already made).
func EventByID(ctx context.Context, db bun.IDB, id int64) (*Event, error) {
	e := new(Event)
	err := db.NewSelect().Model(e).Where("e.id = ?", id).Scan(ctx)
	return e, translate(err)
}
