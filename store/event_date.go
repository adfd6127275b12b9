package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// EventDate is one occurrence of an event, at a venue or online.
type EventDate struct {
	bun.BaseModel `bun:"table:event_dates,alias:d"`

	ID           int64     `bun:"id,pk,autoincrement"`
	Reference    string    `bun:"reference,notnull"`
	EventID      int64     `bun:"event_id,notnull"`
	StartAt      time.Time `bun:"start_at,notnull"`
	EndAt        time.Time `bun:"end_at,notnull"`
	Online       bool      `bun:"online,notnull"`
	VenueID      *int64    `bun:"venue_id"`
	Active       bool      `bun:"active,notnull"`
	PayoutLocked bool      `bun:"payout_locked,notnull"`
	// CancelledAt is when the operator cancelled the date (zero while it
	// is not), with CancelReason; CancelRefund says its orders are refunded.
	CancelledAt  time.Time `bun:"cancelled_at,nullzero"`
	CancelReason *string   `bun:"cancel_reason"`
	CancelRefund bool      `bun:"cancel_refund,notnull"`
	CreatedAt    time.Time `bun:"created_at,notnull"`
	UpdatedAt    time.Time `bun:"updated_at,notnull"`
}

// ActiveDatesOfEvents returns the active dates (past ones included) of these
// events, ordered by event, start time and id.
func ActiveDatesOfEvents(ctx context.Context, db bun.IDB, eventIDs []int64) ([]EventDate, error) {
	ds := []EventDate{}
	if len(eventIDs) == 0 {
		return ds, nil
	}
	err := db.NewSelect().Model(&ds).
		Where("d.event_id IN (?)", bun.List(eventIDs)).
		Where("d.active = ?", true).
		Order("d.event_id", "d.start_at", "d.id").
		Scan(ctx)
	return ds, translate(err)
}

// VisibleEventDate returns an active date of a visible event, with that
// event; any other id is ErrNotFound.
func VisibleEventDate(ctx context.Context, db bun.IDB, id int64) (*EventDate, *Event, error) {
	d := new(EventDate)
	err := visible(db.NewSelect().Model(d).Join("JOIN events AS e ON e.id = d.event_id")).
		Where("d.id = ?", id).
		Where("d.active = ?", true).
		Scan(ctx)
	if err != nil {
		return nil, nil, translate(err)
	}
	e, err := VisibleEvent(ctx, db, d.EventID)
	if err != nil {
		return nil, nil, err
	}
	return d, e, nil
}

// EventDatesByReferences returns the dates with these references.
func EventDatesByReferences(ctx context.Context, db bun.IDB, refs []string) ([]EventDate, error) {
	var ds []EventDate
	if len(refs) == 0 {
		return ds, nil
	}
	err := db.NewSelect().Model(&ds).Where("reference IN (?)", bun.List(refs)).Scan(ctx)
	return ds, translate(err)
}

// EventDateOfEvent returns date id if it belongs to event eventID, whatever
// its state; any other id is ErrNotFound.
func EventDateOfEvent(ctx context.Context, db bun.IDB, id, eventID int64) (*EventDate, error) {
	d := new(EventDate)
	err := db.NewSelect().Model(d).Where("d.id = ?", id).Where("d.event_id = ?", eventID).Scan(ctx)
	return d, translate(err)
}

// NextDateEnd returns the earliest end after now of any active date: the
// first moment a date ends and the catalog's listings change with it. It is
// the zero time when no active date ends after now.
func NextDateEnd(ctx context.Context, db bun.IDB, now time.Time) (time.Time, error) {
	var end []time.Time
	err := upcoming(db.NewSelect().Model((*EventDate)(nil)).Column("d.end_at"), "d", now).
		Order("d.end_at").
		Limit(1).
		Scan(ctx, &end)
	if err != nil || len(end) == 0 {
		return time.Time{}, translate(err)
	}
	return end[0], nil
}

// upcoming restricts q to the upcoming dates, aliased alias: active, and
// ending after now (a date ending at now has ended). It is the SQL twin of
// catalog.Upcoming, written once for every query that asks; catalog's
// TestUpcoming runs the same cases through both.
func upcoming(q *bun.SelectQuery, alias string, now time.Time) *bun.SelectQuery {
	return q.Where("?.active = ?", bun.Safe(alias), true).Where("?.end_at > ?", bun.Safe(alias), now.UTC())
}
