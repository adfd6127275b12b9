package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Environments of keys, orders and events.
const (
	EnvTest = "test"
	EnvLive = "live"
)

// APIKey is one secret key of an app; only its SHA-256 hash is kept.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys,alias:k"`

	ID          int64     `bun:"id,pk,autoincrement"`
	AppID       int64     `bun:"app_id,notnull"`
	Environment string    `bun:"environment,notnull"`
	KeyHash     string    `bun:"key_hash,notnull"`
	Hint        string    `bun:"hint,notnull"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
	RevokedAt   time.Time `bun:"revoked_at,nullzero"`
}

// KeyOwner is what authentication needs to know about a key: its app and
// account and their statuses, read in one query.
type KeyOwner struct {
	KeyID         int64
	Environment   string
	Revoked       bool
	AppID         int64
	AppStatus     string
	AccountID     int64
	AccountStatus string
}

// keyOwnerQuery is the statement behind KeyOwnerByHash. Every request
// makes it, so its hash is a bound parameter: one text, prepared once per
// connection. SQLite reads $1 as its first parameter too.
const keyOwnerQuery = `SELECT k.id, k.environment, k.revoked_at IS NOT NULL, app.id, app.status, acc.id, acc.status
	FROM api_keys AS k
	JOIN apps AS app ON app.id = k.app_id
	JOIN accounts AS acc ON acc.id = app.account_id
	WHERE k.key_hash = $1
	LIMIT 1`

// KeyOwnerByHash finds the key with this hash together with its app and
// account; an unknown hash is ErrNotFound.
func KeyOwnerByHash(ctx context.Context, db *DB, hash string) (*KeyOwner, error) {
	var o *KeyOwner
	err := db.queryBound(ctx, keyOwnerQuery, []any{hash}, func(r row) error {
		o = new(KeyOwner)
		return r.Scan(&o.KeyID, &o.Environment, &o.Revoked, &o.AppID, &o.AppStatus, &o.AccountID, &o.AccountStatus)
	})
	if err == nil && o == nil {
		err = ErrNotFound
	}
	return o, err
}

// InsertAPIKey stores a new key.
func InsertAPIKey(ctx context.Context, db bun.IDB, k *APIKey) error {
	_, err := db.NewInsert().Model(k).Returning("id").Exec(ctx)
	return translate(err)
}

// RevokeAPIKeys revokes every unrevoked key of an app in one environment and
// returns how many it revoked.
func RevokeAPIKeys(ctx context.Context, db bun.IDB, appID int64, env string, now time.Time) (int64, error) {
	res, err := db.NewUpdate().Model((*APIKey)(nil)).
		Set("revoked_at = ?", now).
		Where("app_id = ?", appID).Where("environment = ?", env).Where("revoked_at IS NULL").
		Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// ActiveAPIKeys returns an app's unrevoked keys, test before live.
func ActiveAPIKeys(ctx context.Context, db bun.IDB, appID int64) ([]APIKey, error) {
	keys := []APIKey{}
	err := db.NewSelect().Model(&keys).
		Where("k.app_id = ?", appID).Where("k.revoked_at IS NULL").
		Order("k.environment DESC", "k.id").Scan(ctx)
	return keys, translate(err)
}
