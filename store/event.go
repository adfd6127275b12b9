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
}

// visible restricts a query on events (alias e) to the events partners may
// see: published and not hidden from listings. It is the one home of that rule.
func visible(q *bun.SelectQuery) *bun.SelectQuery {
	return q.Where("e.published = ?", true).Where("e.hidden_from_listings = ?", false)
}

// EventFilter selects a page of visible events.
type EventFilter struct {
	// Q keeps events whose name contains it, case-insensitively.
	Q string
	// IncludePast keeps events that have no active date ending after Now.
	IncludePast bool
	Now         time.Time
	Limit       int
	Offset      int
}

// ListEvents returns one page of visible events, newest first, and how many
// events match in all.
func ListEvents(ctx context.Context, db bun.IDB, f EventFilter) ([]Event, int, error) {
	filter := func(q *bun.SelectQuery) *bun.SelectQuery {
		q = visible(q)
		if f.Q != "" {
			q = q.Where(`lower(e.name) LIKE ? ESCAPE '\'`, "%"+escapeLike(strings.ToLower(f.Q))+"%")
		}
		if !f.IncludePast {
			q = q.Where("EXISTS (SELECT 1 FROM event_dates AS d WHERE d.event_id = e.id AND d.active = ? AND d.end_at > ?)", true, f.Now.UTC())
		}
		return q
	}
	total, err := filter(db.NewSelect().Model((*Event)(nil))).Count(ctx)
	if err != nil {
		return nil, 0, translate(err)
	}
	events := []Event{}
	if total == 0 || int64(f.Offset) >= total {
		return events, int(total), nil
	}
	err = filter(db.NewSelect().Model(&events)).
		Order("e.created_at DESC", "e.id DESC").
		Limit(int64(f.Limit)).Offset(int64(f.Offset)).
		Scan(ctx)
	return events, int(total), translate(err)
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
