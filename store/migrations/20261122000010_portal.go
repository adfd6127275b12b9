package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The developer portal: a password per account (NULL until one is set),
// server-side sign-in sessions, one-time password reset links and the audit
// log of what partners and operators did. Session and reset tokens are
// stored as hashes only, like API keys.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`ALTER TABLE accounts ADD COLUMN password_hash TEXT`,

			`CREATE TABLE portal_sessions (
				id {pk},
				token_hash TEXT NOT NULL,
				account_id BIGINT NOT NULL REFERENCES accounts (id),
				created_at {ts} NOT NULL,
				expires_at {ts} NOT NULL
			)`,
			`CREATE UNIQUE INDEX portal_sessions_token_key ON portal_sessions (token_hash)`,
			`CREATE INDEX portal_sessions_account_idx ON portal_sessions (account_id)`,
			`CREATE INDEX portal_sessions_expires_idx ON portal_sessions (expires_at)`,

			`CREATE TABLE password_resets (
				id {pk},
				token_hash TEXT NOT NULL,
				account_id BIGINT NOT NULL REFERENCES accounts (id),
				created_at {ts} NOT NULL,
				expires_at {ts} NOT NULL,
				used_at {ts}
			)`,
			`CREATE UNIQUE INDEX password_resets_token_key ON password_resets (token_hash)`,
			`CREATE INDEX password_resets_account_idx ON password_resets (account_id)`,

			`CREATE TABLE audit_log (
				id {pk},
				account_id BIGINT REFERENCES accounts (id),
				app_id BIGINT REFERENCES apps (id),
				actor TEXT NOT NULL CHECK (actor IN ('partner', 'operator')),
				ip TEXT,
				action TEXT NOT NULL,
				detail TEXT NOT NULL,
				created_at {ts} NOT NULL
			)`,
			`CREATE INDEX audit_log_account_idx ON audit_log (account_id, id)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`DROP TABLE audit_log`, `DROP TABLE password_resets`, `DROP TABLE portal_sessions`,
			`ALTER TABLE accounts DROP COLUMN password_hash`)
	})
}
