package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Discovery: an index for each filter of the event listing (catalog
// ListRequest) that the existing ones do not already serve (event_dates
// (venue_id) serves venue_id; event_dates (event_id, active, end_at) the
// upcoming-date probe every listing makes).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			// slug and eventBySlug.
			`CREATE INDEX events_slug_idx ON events (slug)`,
			// starts_after / starts_before, and the soonest order.
			`CREATE INDEX event_dates_start_idx ON event_dates (start_at, event_id)`,
			// city: lower(v.city) = lower(?) on both databases.
			`CREATE INDEX venues_city_idx ON venues (lower(city))`,
			// online: the few online dates, by event.
			`CREATE INDEX event_dates_online_idx ON event_dates (event_id) WHERE online`,
			// free / paid: the pricing columns of a date's tickets without
			// reading the rows.
			`CREATE INDEX tickets_pricing_idx ON tickets (event_date_id, free, price, promotional_price)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`DROP INDEX tickets_pricing_idx`, `DROP INDEX event_dates_online_idx`, `DROP INDEX venues_city_idx`,
			`DROP INDEX event_dates_start_idx`, `DROP INDEX events_slug_idx`)
	})
}
