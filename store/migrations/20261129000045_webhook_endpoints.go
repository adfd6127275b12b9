package migrations

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/uptrace/bun"
)

// Webhook endpoints (docs/spec/webhook-endpoints.md): an app's receivers,
// per environment, each with its own filter, secret and failure streak; an
// event is recorded once and has one delivery per endpoint it went to.
//
// An endpoint whose url is NULL follows the app's webhook URL, and one
// whose secret is NULL signs with the app's webhook secret: every existing
// app gets two such endpoints (test and live, every event type), so
// partners who set a URL see no change, and `apps update --webhook-url` or
// the portal's webhook card keep steering them.
//
// The failure streak moves from the app (webhook_health) to the endpoint:
// an app's streak becomes its two endpoints'. Attempts name their
// endpoint; webhook_deliveries_recover_idx finds an endpoint's failed
// deliveries for recover, webhook_events_log_idx an environment's events
// newest first for the event log.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if err := execAll(ctx, db,
			`CREATE TABLE webhook_endpoints (
				id TEXT PRIMARY KEY,
				app_id BIGINT NOT NULL REFERENCES apps (id),
				environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
				url TEXT,
				secret TEXT,
				previous_secret TEXT,
				previous_secret_until {ts},
				enabled_events TEXT NOT NULL,
				description TEXT,
				disabled_manually BOOLEAN NOT NULL,
				created_at {ts} NOT NULL,
				updated_at {ts} NOT NULL
			)`,
			`CREATE INDEX webhook_endpoints_app_idx ON webhook_endpoints (app_id, environment, created_at)`,
			`CREATE TABLE webhook_endpoint_health (
				endpoint_id TEXT PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
				url TEXT NOT NULL,
				failures BIGINT NOT NULL,
				failing_since {ts} NOT NULL,
				last_failure_at {ts} NOT NULL,
				last_error TEXT NOT NULL,
				disabled_at {ts}
			)`,
			`CREATE TABLE webhook_deliveries (
				event_id TEXT NOT NULL REFERENCES webhook_events (id),
				endpoint_id TEXT NOT NULL,
				status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'not_sent')),
				attempts BIGINT NOT NULL,
				last_error TEXT,
				delivered_at {ts},
				PRIMARY KEY (event_id, endpoint_id)
			)`,
			`CREATE INDEX webhook_deliveries_recover_idx ON webhook_deliveries (endpoint_id, status)`,
			`ALTER TABLE webhook_attempts ADD COLUMN endpoint_id TEXT`,
			`CREATE INDEX webhook_events_log_idx ON webhook_events (app_id, environment, created_at, id)`,
		); err != nil {
			return err
		}
		var apps []int64
		if err := db.NewRaw(`SELECT id FROM apps ORDER BY id`).Scan(ctx, &apps); err != nil {
			return err
		}
		now := time.Now().UTC()
		for _, app := range apps {
			for _, env := range []string{"test", "live"} {
				id := newEndpointID()
				if _, err := db.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, app_id, environment, enabled_events, disabled_manually, created_at, updated_at)
					VALUES (?, ?, ?, '["*"]', ?, ?, ?)`, id, app, env, false, now, now); err != nil {
					return err
				}
				if _, err := db.ExecContext(ctx, `INSERT INTO webhook_endpoint_health (endpoint_id, url, failures, failing_since, last_failure_at, last_error, disabled_at)
					SELECT ?, url, failures, failing_since, last_failure_at, last_error, disabled_at FROM webhook_health WHERE app_id = ?`, id, app); err != nil {
					return err
				}
			}
		}
		return execAll(ctx, db, `DROP TABLE webhook_health`)
	}, func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db,
			`CREATE TABLE webhook_health (
				app_id BIGINT PRIMARY KEY REFERENCES apps (id),
				url TEXT NOT NULL,
				failures BIGINT NOT NULL,
				failing_since {ts} NOT NULL,
				last_failure_at {ts} NOT NULL,
				last_error TEXT NOT NULL,
				disabled_at {ts}
			)`,
			`DROP INDEX webhook_events_log_idx`,
			`ALTER TABLE webhook_attempts DROP COLUMN endpoint_id`,
			`DROP TABLE webhook_deliveries`, `DROP TABLE webhook_endpoint_health`, `DROP TABLE webhook_endpoints`)
	})
}

// newEndpointID is an endpoint id as the webhook service makes them.
func newEndpointID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "we_" + hex.EncodeToString(b)
}
