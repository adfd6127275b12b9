package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// tenantTables are the tables whose rows decide whether an API key opens
// the API and what its app may do: accounts (status), apps (status,
// redirect allowlist), api_keys and scanners (revocation). None of them
// changes on the request path, only when an operator or a partner in the
// portal acts.
var tenantTables = []string{"accounts", "apps", "api_keys", "scanners"}

// Tenant changes: as for the catalog (20261121000005_catalog_changes.go),
// triggers tell every server that a tenant row changed, so each may keep
// what it read of them (auth's key lookups, checkout's app) until then.
// PostgreSQL notifies boxoffice_tenants with the schema as payload when
// the changing transaction commits; SQLite counts changes in
// tenant_version.
//
// tickets and idempotency_keys also get a fillfactor: a flash sale
// updates one ticket row thousands of times a minute, and with free room
// on its page every such update is HOT (sold, held and updated_at are in
// no index), so the old versions are pruned on the page instead of
// bloating the primary key until autovacuum comes. The hot table is tiny,
// so the room costs nothing; autovacuum is told to visit it after a few
// thousand dead rows, not 20 % of the table.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			stmts := []string{`CREATE FUNCTION boxoffice_tenants_changed() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					PERFORM pg_notify('boxoffice_tenants', TG_TABLE_SCHEMA);
					RETURN NULL;
				END $$`}
			for _, t := range tenantTables {
				stmts = append(stmts, fmt.Sprintf(`CREATE TRIGGER %[1]s_tenants_changed
					AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %[1]s
					FOR EACH STATEMENT EXECUTE FUNCTION boxoffice_tenants_changed()`, t))
			}
			stmts = append(stmts,
				`ALTER TABLE tickets SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000)`,
				`ALTER TABLE idempotency_keys SET (fillfactor = 90)`,
			)
			return execAll(ctx, db, stmts...)
		}
		stmts := []string{
			`CREATE TABLE tenant_version (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)`,
			`INSERT INTO tenant_version (id, n) VALUES (1, 0)`,
		}
		for _, t := range tenantTables {
			for _, op := range []string{"insert", "delete", "update"} {
				stmts = append(stmts, fmt.Sprintf(`CREATE TRIGGER %s_tenants_%s AFTER %s ON %s
					BEGIN UPDATE tenant_version SET n = n + 1 WHERE id = 1; END`, t, op, op, t))
			}
		}
		return execAll(ctx, db, stmts...)
	}, func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() == dialect.PG {
			stmts := []string{}
			for _, t := range tenantTables {
				stmts = append(stmts, fmt.Sprintf(`DROP TRIGGER %[1]s_tenants_changed ON %[1]s`, t))
			}
			return execAll(ctx, db, append(stmts, `DROP FUNCTION boxoffice_tenants_changed()`,
				`ALTER TABLE tickets RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold)`,
				`ALTER TABLE idempotency_keys RESET (fillfactor)`)...)
		}
		stmts := []string{}
		for _, t := range tenantTables {
			for _, op := range []string{"insert", "delete", "update"} {
				stmts = append(stmts, fmt.Sprintf(`DROP TRIGGER %s_tenants_%s`, t, op))
			}
		}
		return execAll(ctx, db, append(stmts, `DROP TABLE tenant_version`)...)
	})
}
