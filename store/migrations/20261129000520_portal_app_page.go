package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The portal's app page (store.SearchOrders, store.RecentWebhookEvents).
//
// orders_buyer_email_idx finds an app's orders of one environment by the
// buyer's email in any case, newest first: buyers' emails are stored as
// they were given, so the index holds lower(customer_email), and searches
// compare lower(customer_email) with the lowered address, written exactly
// so, which both databases match to the index's expression. After the
// equalities come the listing's order, so a search is one range of at
// most a page's entries, however many orders the app has.
//
// webhook_events_app_log_idx replaces webhook_events_app_idx with the
// event id after created_at: the app page's delivery log is read a page at
// a time after a cursor (created_at, id), and with the id in the index a
// page is one range in listing order, even among events created in the
// same microsecond.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE INDEX orders_buyer_email_idx ON orders (app_id, environment, lower(customer_email), created_at, reference)`,
			`CREATE INDEX webhook_events_app_log_idx ON webhook_events (app_id, created_at, id)`,
			`DROP INDEX webhook_events_app_idx`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE INDEX webhook_events_app_idx ON webhook_events (app_id, created_at)`,
			`DROP INDEX webhook_events_app_log_idx`,
			`DROP INDEX orders_buyer_email_idx`,
		)
	})
}
