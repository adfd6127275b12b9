package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Tickets (spec/fulfilment.md sections 1 to 3): the issued tickets of paid
// orders, one row per admission; each order's ticket-page token and the
// state of its ticket email; the name a line item was bought under; an
// app's choice to deliver tickets itself; and the development mailbox,
// where mail goes when no SMTP server is configured.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE order_items ADD COLUMN name TEXT NOT NULL DEFAULT ''`,
			`UPDATE order_items SET name = (SELECT t.name FROM tickets t WHERE t.id = order_items.ticket_id)`,

			`ALTER TABLE orders ADD COLUMN tickets_token TEXT`,
			`ALTER TABLE orders ADD COLUMN tickets_email_status TEXT NOT NULL DEFAULT 'not_sent'`,
			`ALTER TABLE orders ADD COLUMN tickets_email_sent_at {ts}`,
			// The ticket page finds its order by token.
			`CREATE UNIQUE INDEX orders_tickets_token_key ON orders (tickets_token)`,

			`ALTER TABLE apps ADD COLUMN ticket_emails BOOLEAN NOT NULL DEFAULT TRUE`,

			`CREATE TABLE issued_tickets (
				id {pk},
				public_id TEXT NOT NULL,
				code TEXT NOT NULL,
				order_id BIGINT NOT NULL REFERENCES orders (id),
				app_id BIGINT NOT NULL REFERENCES apps (id),
				environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
				ticket_id BIGINT NOT NULL REFERENCES tickets (id),
				ticket_name TEXT NOT NULL,
				event_id BIGINT NOT NULL REFERENCES events (id),
				event_date_id BIGINT NOT NULL REFERENCES event_dates (id),
				position BIGINT NOT NULL CHECK (position > 0),
				status TEXT NOT NULL CHECK (status IN ('valid', 'checked_in', 'void')),
				checked_in_at {ts},
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			// A scan looks a ticket up by its code, the API by its id; an
			// order has each position once, so a second issuance of one
			// order cannot commit.
			`CREATE UNIQUE INDEX issued_tickets_code_key ON issued_tickets (code)`,
			`CREATE UNIQUE INDEX issued_tickets_public_id_key ON issued_tickets (public_id)`,
			`CREATE UNIQUE INDEX issued_tickets_order_position_key ON issued_tickets (order_id, position)`,
			`CREATE INDEX issued_tickets_date_idx ON issued_tickets (event_date_id, status)`,

			`CREATE TABLE mail_messages (
				id {pk},
				order_id BIGINT REFERENCES orders (id),
				mail_from TEXT NOT NULL,
				mail_to TEXT NOT NULL,
				subject TEXT NOT NULL,
				text_body TEXT NOT NULL,
				html_body TEXT NOT NULL,
				raw TEXT NOT NULL,
				created_at {ts} NOT NULL
			)`,
			`CREATE INDEX mail_messages_created_idx ON mail_messages (created_at)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`DROP TABLE mail_messages`,
			`DROP TABLE issued_tickets`,
			`ALTER TABLE apps DROP COLUMN ticket_emails`,
			`DROP INDEX orders_tickets_token_key`,
			`ALTER TABLE orders DROP COLUMN tickets_email_sent_at`,
			`ALTER TABLE orders DROP COLUMN tickets_email_status`,
			`ALTER TABLE orders DROP COLUMN tickets_token`,
			`ALTER TABLE order_items DROP COLUMN name`,
		)
	})
}
