package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// ListingEvent is what the catalog's listing index keeps of a visible
// event: what its filters and orders read of the event itself.
type ListingEvent struct {
	bun.BaseModel `bun:"table:events,alias:e"`

	ID        int64     `bun:"id"`
	Name      string    `bun:"name"`
	CreatedAt time.Time `bun:"created_at"`
}

// ListingDate is what the listing index keeps of an active date of a
// visible event: its place in time and space, and whether it has a free
// ticket and a paid one (the free filter's question, asked per date).
type ListingDate struct {
	bun.BaseModel `bun:"table:event_dates,alias:d"`

	ID      int64     `bun:"id"`
	EventID int64     `bun:"event_id"`
	StartAt time.Time `bun:"start_at"`
	EndAt   time.Time `bun:"end_at"`
	Online  bool      `bun:"online"`
	VenueID int64     `bun:"venue_id"` // 0: none
	HasFree bool      `bun:"has_free"`
	HasPaid bool      `bun:"has_paid"`
}

// ListingVenue is a venue's id and city, what the city filter reads.
type ListingVenue struct {
	bun.BaseModel `bun:"table:venues,alias:v"`

	ID   int64   `bun:"id"`
	City *string `bun:"city"`
}

// ListingEventsInRange returns up to limit visible events with an id above
// after, by id, and the active dates of those events: one chunk of a full
// read of the listing facts, in two statements over the primary key and
// event_dates' (event_id, …) index.
func ListingEventsInRange(ctx context.Context, db bun.IDB, after int64, limit int) ([]ListingEvent, []ListingDate, error) {
	es := []ListingEvent{}
	err := visible(db.NewSelect().Model(&es).Column("e.id", "e.name", "e.created_at")).
		Where("e.id > ?", after).Order("e.id").Limit(int64(limit)).Scan(ctx)
	if err != nil || len(es) == 0 {
		return es, nil, translate(err)
	}
	ds, err := listingDates(ctx, db, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("d.event_id > ?", after).Where("d.event_id <= ?", es[len(es)-1].ID)
	})
	return es, ds, err
}

// ListingEventsByIDs returns those of these events that are visible, and
// their active dates: what the index re-reads when they changed.
func ListingEventsByIDs(ctx context.Context, db bun.IDB, ids []int64) ([]ListingEvent, []ListingDate, error) {
	es := []ListingEvent{}
	if len(ids) == 0 {
		return es, nil, nil
	}
	err := visible(db.NewSelect().Model(&es).Column("e.id", "e.name", "e.created_at")).
		Where("e.id IN (?)", bun.List(ids)).Scan(ctx)
	if err != nil || len(es) == 0 {
		return es, nil, translate(err)
	}
	kept := make([]int64, len(es))
	for i := range es {
		kept[i] = es[i].ID
	}
	ds, err := listingDates(ctx, db, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("d.event_id IN (?)", bun.List(kept))
	})
	return es, ds, err
}

// listingDates reads the active dates where selects, each with whether it
// has a free and a paid ticket (freeTicket and paidTicket, the SQL the
// listing's free filter uses), each asked of tickets_pricing_idx for that
// date alone, so a chunk of dates reads its own tickets, not the table's.
func listingDates(ctx context.Context, db bun.IDB, where func(*bun.SelectQuery) *bun.SelectQuery) ([]ListingDate, error) {
	ds := []ListingDate{}
	// OFFSET keeps PostgreSQL from turning EXISTS into a hashed subplan,
	// which reads every ticket of the table for each chunk of a full read:
	// it then probes the index once per date.
	has := func(cond string) string {
		return "EXISTS (SELECT 1 FROM tickets AS t WHERE t.event_date_id = d.id AND " + cond + " LIMIT 1 OFFSET 0)"
	}
	q := db.NewSelect().Model(&ds).
		Column("d.id", "d.event_id", "d.start_at", "d.end_at", "d.online").
		ColumnExpr("coalesce(d.venue_id, 0) AS venue_id").
		ColumnExpr(has(freeTicket)+" AS has_free", true).
		ColumnExpr(has(paidTicket)+" AS has_paid", false).
		Where("d.active = ?", true)
	err := where(q).Scan(ctx)
	for i := range ds {
		ds[i].StartAt, ds[i].EndAt = ds[i].StartAt.UTC(), ds[i].EndAt.UTC()
	}
	return ds, translate(err)
}

// ListingVenues returns the id and city of these venues, or of every venue
// when ids is nil.
func ListingVenues(ctx context.Context, db bun.IDB, ids []int64) ([]ListingVenue, error) {
	vs := []ListingVenue{}
	q := db.NewSelect().Model(&vs).Column("v.id", "v.city")
	if ids != nil {
		if len(ids) == 0 {
			return vs, nil
		}
		q = q.Where("v.id IN (?)", bun.List(ids))
	}
	return vs, translate(q.Scan(ctx))
}

// EventsByIDs returns the events with these ids in the order of ids,
// leaving out those that are gone: a listing page the index chose.
func EventsByIDs(ctx context.Context, db bun.IDB, ids []int64) ([]Event, error) {
	out := []Event{}
	if len(ids) == 0 {
		return out, nil
	}
	var es []Event
	if err := db.NewSelect().Model(&es).Where("e.id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	byID := make(map[int64]int, len(es))
	for i := range es {
		byID[es[i].ID] = i
	}
	for _, id := range ids {
		if i, ok := byID[id]; ok {
			out = append(out, es[i])
		}
	}
	return out, nil
}
