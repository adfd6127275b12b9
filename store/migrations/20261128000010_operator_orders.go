package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Operators' view of orders (boxoffice orders list, the refund-review
// gauge of /metrics) and of event streams (the portal's delivery log).
//
// orders_refund_review_idx holds only the orders flagged for refund review
// (a payment confirmed late or for the wrong amount): exceptions, a few
// per thousand orders at most, so every listing of flagged orders, with
// any other filter, and the gauge's count read this small index and
// nothing else.
//
// orders_search_idx serves listings across every app: one environment and
// one status, newest first by (created_at, reference). A listing of more
// environments or statuses reads one range of it per pair and merges them
// (store.SearchOrders), so its cost is a few ranges of limit entries at any
// size. A listing of one app reads the order list's indexes
// (20261126000030_order_sync.go) the same way.
//
// webhook_events.streamed_at is when an event was first sent down an event
// stream to `boxoffice listen`, so the delivery log can say an event with
// no webhook URL to go to reached the partner's laptop.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE INDEX orders_refund_review_idx ON orders (created_at, reference) WHERE refund_review`,
			`CREATE INDEX orders_search_idx ON orders (environment, status, created_at, reference)`,
			`ALTER TABLE webhook_events ADD COLUMN streamed_at {ts}`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE webhook_events DROP COLUMN streamed_at`,
			`DROP INDEX orders_search_idx`,
			`DROP INDEX orders_refund_review_idx`,
		)
	})
}
