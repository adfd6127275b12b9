package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The foundation: developer accounts, apps, API keys and the catalog.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE TABLE accounts (
				id {pk},
				name TEXT NOT NULL,
				email TEXT NOT NULL,
				status TEXT NOT NULL CHECK (status IN ('active', 'pending_approval', 'disabled')),
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX accounts_email_key ON accounts (email)`,

			`CREATE TABLE apps (
				id {pk},
				account_id BIGINT NOT NULL REFERENCES accounts (id),
				name TEXT NOT NULL,
				status TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
				redirect_domains TEXT NOT NULL,
				webhook_url TEXT,
				webhook_secret TEXT NOT NULL,
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE INDEX apps_account_id_idx ON apps (account_id)`,

			`CREATE TABLE api_keys (
				id {pk},
				app_id BIGINT NOT NULL REFERENCES apps (id),
				environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
				key_hash TEXT NOT NULL,
				hint TEXT NOT NULL,
				created_at {ts} NOT NULL,
				revoked_at {ts}
			)`,
			`CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash)`,
			`CREATE INDEX api_keys_app_env_idx ON api_keys (app_id, environment)`,

			`CREATE TABLE venues (
				id {pk},
				reference TEXT NOT NULL,
				name TEXT NOT NULL,
				slug TEXT NOT NULL,
				street TEXT,
				city TEXT,
				state TEXT,
				lat {float},
				lng {float},
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX venues_reference_key ON venues (reference)`,

			`CREATE TABLE events (
				id {pk},
				reference TEXT NOT NULL,
				name TEXT NOT NULL,
				slug TEXT NOT NULL,
				description TEXT,
				image_url TEXT,
				timezone TEXT NOT NULL,
				published BOOLEAN NOT NULL,
				hidden_from_listings BOOLEAN NOT NULL,
				private BOOLEAN NOT NULL,
				password_protected BOOLEAN NOT NULL,
				ussd_code TEXT,
				ussd_full_code TEXT,
				sales_start {ts},
				sales_end {ts},
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX events_reference_key ON events (reference)`,
			// Listing walks visible events newest first.
			`CREATE INDEX events_listing_idx ON events (published, hidden_from_listings, created_at DESC, id DESC)`,

			`CREATE TABLE event_dates (
				id {pk},
				reference TEXT NOT NULL,
				event_id BIGINT NOT NULL REFERENCES events (id),
				start_at {ts} NOT NULL,
				end_at {ts} NOT NULL,
				online BOOLEAN NOT NULL,
				venue_id BIGINT REFERENCES venues (id),
				active BOOLEAN NOT NULL,
				payout_locked BOOLEAN NOT NULL,
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX event_dates_reference_key ON event_dates (reference)`,
			// Dates of a page of events, and the "has an upcoming date" filter.
			`CREATE INDEX event_dates_event_idx ON event_dates (event_id, active, end_at)`,
			`CREATE INDEX event_dates_venue_idx ON event_dates (venue_id)`,

			`CREATE TABLE tickets (
				id {pk},
				reference TEXT NOT NULL,
				event_date_id BIGINT NOT NULL REFERENCES event_dates (id),
				name TEXT NOT NULL,
				description TEXT,
				free BOOLEAN NOT NULL,
				price BIGINT CHECK (price >= 0),
				promotional_price BIGINT CHECK (promotional_price >= 0),
				quantity BIGINT CHECK (quantity >= 0),
				sold BIGINT NOT NULL CHECK (sold >= 0),
				held BIGINT NOT NULL CHECK (held >= 0),
				tickets_per_attendee BIGINT CHECK (tickets_per_attendee >= 1),
				sales_start {ts},
				sales_end {ts},
				currency TEXT NOT NULL,
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX tickets_reference_key ON tickets (reference)`,
			`CREATE INDEX tickets_event_date_idx ON tickets (event_date_id)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`DROP TABLE tickets`, `DROP TABLE event_dates`, `DROP TABLE events`, `DROP TABLE venues`,
			`DROP TABLE api_keys`, `DROP TABLE apps`, `DROP TABLE accounts`)
	})
}
