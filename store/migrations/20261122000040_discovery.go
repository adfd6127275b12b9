package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Discovery: an index for each filter of the event listing (catalog
// ListRequest); event_dates (event_id, active, end_at) already serves the
// upcoming-date probe every listing makes. EXPLAIN on PostgreSQL (20,000
// events, 60,000 dates, 180,000 tickets) uses each for its filter.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			// slug and eventBySlug.
			`CREATE INDEX events_slug_idx ON events (slug)`,
			// starts_after / starts_before.
			`CREATE INDEX event_dates_start_idx ON event_dates (start_at, event_id)`,
			// city: lower(v.city) = lower(?) on both databases, then the
			// upcoming dates at those venues without reading them.
			`CREATE INDEX venues_city_idx ON venues (lower(city))`,
			// venue_id (and city's second step). It replaces (venue_id), its
			// prefix, and serves foreign-key checks as that did.
			`CREATE INDEX event_dates_venue_upcoming_idx ON event_dates (venue_id, active, end_at, event_id)`,
			`DROP INDEX event_dates_venue_idx`,
			// online: the few online dates, by event.
			`CREATE INDEX event_dates_online_idx ON event_dates (event_id) WHERE online`,
			// free / paid: the pricing columns of a date's tickets without
			// reading the rows.
			`CREATE INDEX tickets_pricing_idx ON tickets (event_date_id, free, price, promotional_price)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`DROP INDEX tickets_pricing_idx`, `DROP INDEX event_dates_online_idx`,
			`CREATE INDEX event_dates_venue_idx ON event_dates (venue_id)`, `DROP INDEX event_dates_venue_upcoming_idx`,
			`DROP INDEX venues_city_idx`, `DROP INDEX event_dates_start_idx`, `DROP INDEX events_slug_idx`)
	})
}
