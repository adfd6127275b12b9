package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Account statuses.
const (
	AccountActive          = "active"
	AccountPendingApproval = "pending_approval"
	AccountDisabled        = "disabled"
)

// Account is a developer account; it owns apps.
type Account struct {
	bun.BaseModel `bun:"table:accounts,alias:acc"`

	ID     int64  `bun:"id,pk,autoincrement"`
	Name   string `bun:"name,notnull"`
	Email  string `bun:"email,notnull"`
	Status string `bun:"status,notnull"`
	// PasswordHash is the portal password's argon2id hash ("" until set).
	PasswordHash string    `bun:"password_hash,nullzero"`
	CreatedAt    time.Time `bun:"created_at,notnull"`
	UpdatedAt    time.Time `bun:"updated_at,notnull"`
}

// InsertAccount stores a new account and sets its ID. A taken email is ErrConflict.
func InsertAccount(ctx context.Context, db bun.IDB, a *Account) error {
	_, err := db.NewInsert().Model(a).Returning("id").Exec(ctx)
	return translate(err)
}

// SetAccountStatus changes an account's status; an unknown id is ErrNotFound.
func SetAccountStatus(ctx context.Context, db bun.IDB, id int64, status string, now time.Time) error {
	res, err := db.NewUpdate().Model((*Account)(nil)).
		Set("status = ?", status).Set("updated_at = ?", now).
		Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err)
}

// AccountByID returns one account.
func AccountByID(ctx context.Context, db bun.IDB, id int64) (*Account, error) {
	a := new(Account)
	err := db.NewSelect().Model(a).Where("id = ?", id).Scan(ctx)
	return a, translate(err)
}

// LockAccount holds the account's row until the transaction ends, so rules
// that count or replace what an account owns (its apps, its reset links)
// are decided one transaction at a time per account. An UPDATE rather than
// SELECT … FOR UPDATE because SQLite has no row locks (its transactions
// already run one at a time); on PostgreSQL the update takes the row
// lock. An unknown id is ErrNotFound.
func LockAccount(ctx context.Context, db bun.IDB, id int64) error {
	res, err := db.NewUpdate().Model((*Account)(nil)).
		Set("updated_at = updated_at").
		Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err)
}

// AccountByEmail returns the account with this (lower-case) email.
func AccountByEmail(ctx context.Context, db bun.IDB, email string) (*Account, error) {
	a := new(Account)
	err := db.NewSelect().Model(a).Where("email = ?", email).Scan(ctx)
	return a, translate(err)
}

// SetAccountPassword replaces an account's password hash; an unknown id is
// ErrNotFound.
func SetAccountPassword(ctx context.Context, db bun.IDB, id int64, hash string, now time.Time) error {
	res, err := db.NewUpdate().Model((*Account)(nil)).
		Set("password_hash = ?", hash).Set("updated_at = ?", now).
		Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err)
}

// ListAccounts returns accounts oldest first, only those of status unless
// it is "".
func ListAccounts(ctx context.Context, db bun.IDB, status string) ([]Account, error) {
	accounts := []Account{}
	q := db.NewSelect().Model(&accounts).Order("acc.id")
	if status != "" {
		q = q.Where("acc.status = ?", status)
	}
	return accounts, translate(q.Scan(ctx))
}
