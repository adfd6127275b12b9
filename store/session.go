package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// PortalSession is a partner's signed-in session in the developer portal.
// The browser holds the token; only its SHA-256 hash is stored.
type PortalSession struct {
	bun.BaseModel `bun:"table:portal_sessions,alias:ps"`

	ID        int64     `bun:"id,pk,autoincrement"`
	TokenHash string    `bun:"token_hash,notnull"`
	AccountID int64     `bun:"account_id,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	ExpiresAt time.Time `bun:"expires_at,notnull"`

	// Account is the session's account, read with it.
	Account *Account `bun:"rel:belongs-to,join:account_id=id"`
}

// InsertSession stores a new session and sets its ID.
func InsertSession(ctx context.Context, db bun.IDB, s *PortalSession) error {
	_, err := db.NewInsert().Model(s).Returning("id").Exec(ctx)
	return translate(err)
}

// SessionByTokenHash returns the session with this token hash and its
// account (without the password hash), in one query; an unknown hash is
// ErrNotFound.
func SessionByTokenHash(ctx context.Context, db bun.IDB, hash string) (*PortalSession, error) {
	s := new(PortalSession)
	err := db.NewSelect().Model(s).
		Relation("Account", func(q *bun.SelectQuery) *bun.SelectQuery { return q.ExcludeColumn("password_hash") }).
		Where("ps.token_hash = ?", hash).Scan(ctx)
	return s, translate(err)
}

// DeleteSession ends the session with this token hash; ending one that does
// not exist is not an error.
func DeleteSession(ctx context.Context, db bun.IDB, hash string) error {
	_, err := db.NewDelete().Model((*PortalSession)(nil)).Where("token_hash = ?", hash).Exec(ctx)
	return translate(err)
}

// DeleteAccountSessions ends every session of an account.
func DeleteAccountSessions(ctx context.Context, db bun.IDB, accountID int64) error {
	_, err := db.NewDelete().Model((*PortalSession)(nil)).Where("account_id = ?", accountID).Exec(ctx)
	return translate(err)
}

// DeleteExpiredSessions removes sessions expired at now and returns how
// many it removed.
func DeleteExpiredSessions(ctx context.Context, db bun.IDB, now time.Time) (int64, error) {
	res, err := db.NewDelete().Model((*PortalSession)(nil)).Where("expires_at <= ?", now).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}
