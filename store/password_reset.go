package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// PasswordReset is a one-time link to set an account's password; only the
// token's hash is stored.
type PasswordReset struct {
	bun.BaseModel `bun:"table:password_resets,alias:pr"`

	ID        int64     `bun:"id,pk,autoincrement"`
	TokenHash string    `bun:"token_hash,notnull"`
	AccountID int64     `bun:"account_id,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	ExpiresAt time.Time `bun:"expires_at,notnull"`
	UsedAt    time.Time `bun:"used_at,nullzero"`
}

// InsertPasswordReset stores a new reset link.
func InsertPasswordReset(ctx context.Context, db bun.IDB, r *PasswordReset) error {
	_, err := db.NewInsert().Model(r).Returning("id").Exec(ctx)
	return translate(err)
}

// PasswordResetByTokenHash returns the reset link with this token hash.
func PasswordResetByTokenHash(ctx context.Context, db bun.IDB, hash string) (*PasswordReset, error) {
	r := new(PasswordReset)
	err := db.NewSelect().Model(r).Where("pr.token_hash = ?", hash).Scan(ctx)
	return r, translate(err)
}

// UsePasswordReset marks a reset link used, only if it is unused and not
// expired at now, and reports whether it did: of two concurrent uses, one
// wins.
func UsePasswordReset(ctx context.Context, db bun.IDB, id int64, now time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*PasswordReset)(nil)).
		Set("used_at = ?", now).
		Where("id = ?", id).Where("used_at IS NULL").Where("expires_at > ?", now).
		Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// VoidPasswordResets deletes every unused reset link of an account and
// returns how many there were: a link that can no longer be used need not
// be kept (the audit log records that it was issued).
func VoidPasswordResets(ctx context.Context, db bun.IDB, accountID int64) (int64, error) {
	res, err := db.NewDelete().Model((*PasswordReset)(nil)).
		Where("account_id = ?", accountID).Where("used_at IS NULL").
		Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}
