package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Venue is a place where event dates happen.
type Venue struct {
	bun.BaseModel `bun:"table:venues,alias:v"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Reference string    `bun:"reference,notnull"`
	Name      string    `bun:"name,notnull"`
	Slug      string    `bun:"slug,notnull"`
	Street    *string   `bun:"street"`
	City      *string   `bun:"city"`
	State     *string   `bun:"state"`
	Lat       *float64  `bun:"lat"`
	Lng       *float64  `bun:"lng"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

// VenuesByIDs returns the venues with these ids, in no particular order.
func VenuesByIDs(ctx context.Context, db bun.IDB, ids []int64) ([]Venue, error) {
	var vs []Venue
	if len(ids) == 0 {
		return vs, nil
	}
	err := db.NewSelect().Model(&vs).Where("id IN (?)", bun.List(ids)).Scan(ctx)
	return vs, translate(err)
}

// VenuesByReferences returns the venues with these references.
func VenuesByReferences(ctx context.Context, db bun.IDB, refs []string) ([]Venue, error) {
	var vs []Venue
	if len(refs) == 0 {
		return vs, nil
	}
	err := db.NewSelect().Model(&vs).Where("reference IN (?)", bun.List(refs)).Scan(ctx)
	return vs, translate(err)
}
