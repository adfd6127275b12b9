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
	KeyID         int64     `bun:"key_id"`
	Environment   string    `bun:"environment"`
	RevokedAt     time.Time `bun:"revoked_at,nullzero"`
	AppID         int64     `bun:"app_id"`
	AppStatus     string    `bun:"app_status"`
	AccountID     int64     `bun:"account_id"`
	AccountStatus string    `bun:"account_status"`
}

// KeyOwnerByHash finds the key with this hash together with its app and
// account; an unknown hash is ErrNotFound.
func KeyOwnerByHash(ctx context.Context, db bun.IDB, hash string) (*KeyOwner, error) {
	o := new(KeyOwner)
	err := db.NewSelect().
		TableExpr("api_keys AS k").
		Join("JOIN apps AS app ON app.id = k.app_id").
		Join("JOIN accounts AS acc ON acc.id = app.account_id").
		ColumnExpr("k.id AS key_id, k.environment, k.revoked_at").
		ColumnExpr("app.id AS app_id, app.status AS app_status").
		ColumnExpr("acc.id AS account_id, acc.status AS account_status").
		Where("k.key_hash = ?", hash).
		Limit(1).
		Scan(ctx, o)
	return o, translate(err)
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

// ActiveAPIKeys returns an app's unrevoked keys (hashes and hints), test
// before live.
func ActiveAPIKeys(ctx context.Context, db bun.IDB, appID int64) ([]APIKey, error) {
	ks := []APIKey{}
	err := db.NewSelect().Model(&ks).Where("k.app_id = ?", appID).Where("k.revoked_at IS NULL").
		OrderExpr("k.environment DESC, k.id").Scan(ctx)
	return ks, translate(err)
}
