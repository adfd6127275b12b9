package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The development provider's refunds, and the refund email.
//
// dev_refunds is what a real provider keeps of the refunds it made, keyed
// by the service's refund id: asking twice for one refund finds the row.
// dev_payments.refund_outcome is the development page's switch that makes
// the next refunds of a payment fail, so the failure path can be tried.
//
// refunds.email_status is the live buyer's refund email: NULL when none is
// due, queued, sent or failed, as orders.tickets_email_status is for the
// ticket email.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE TABLE dev_refunds (
				refund_id TEXT PRIMARY KEY,
				payment_reference TEXT NOT NULL,
				amount BIGINT NOT NULL CHECK (amount >= 0),
				currency TEXT NOT NULL,
				state TEXT NOT NULL CHECK (state IN ('succeeded', 'failed')),
				failure_reason TEXT,
				created_at {ts} NOT NULL
			)`,
			`CREATE INDEX dev_refunds_payment_idx ON dev_refunds (payment_reference)`,
			`ALTER TABLE dev_payments ADD COLUMN refund_outcome TEXT NOT NULL DEFAULT 'succeed'`,
			`ALTER TABLE refunds ADD COLUMN email_status TEXT`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE refunds DROP COLUMN email_status`,
			`ALTER TABLE dev_payments DROP COLUMN refund_outcome`,
			`DROP TABLE dev_refunds`,
		)
	})
}
