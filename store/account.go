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

	ID        int64     `bun:"id,pk,autoincrement"`
	Name      string    `bun:"name,notnull"`
	Email     string    `bun:"email,notnull"`
	Status    string    `bun:"status,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
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

// AccountByEmail returns the account with this (lower-case) email.
func AccountByEmail(ctx context.Context, db bun.IDB, email string) (*Account, error) {
	a := new(Account)
	err := db.NewSelect().Model(a).Where("email = ?", email).Scan(ctx)
	return a, translate(err)
}

// ListAccounts returns the accounts, oldest first; only those of status
// when it is not empty.
func ListAccounts(ctx context.Context, db bun.IDB, status string) ([]Account, error) {
	as := []Account{}
	q := db.NewSelect().Model(&as).Order("acc.id")
	if status != "" {
		q = q.Where("acc.status = ?", status)
	}
	err := q.Scan(ctx)
	return as, translate(err)
}
