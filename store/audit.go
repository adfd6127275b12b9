package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Audit actors: who took an action.
const (
	ActorPartner  = "partner"  // the account's own people, in the portal
	ActorOperator = "operator" // someone with shell access, through the CLI
)

// AuditEntry is one action taken on an account or its apps: who, what,
// when. Details never hold a key, a secret or a password.
type AuditEntry struct {
	bun.BaseModel `bun:"table:audit_log,alias:al"`

	ID        int64     `bun:"id,pk,autoincrement"`
	AccountID int64     `bun:"account_id,nullzero"`
	AppID     int64     `bun:"app_id,nullzero"`
	Actor     string    `bun:"actor,notnull"`
	IP        string    `bun:"ip,nullzero"`
	Action    string    `bun:"action,notnull"`
	Detail    string    `bun:"detail,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// InsertAuditEntry stores an audit entry.
func InsertAuditEntry(ctx context.Context, db bun.IDB, e *AuditEntry) error {
	_, err := db.NewInsert().Model(e).Returning("id").Exec(ctx)
	return translate(err)
}

// AuditEntries returns the newest entries first, at most limit, only those
// of accountID unless it is 0.
func AuditEntries(ctx context.Context, db bun.IDB, accountID int64, limit int) ([]AuditEntry, error) {
	entries := []AuditEntry{}
	q := db.NewSelect().Model(&entries).Order("al.id DESC").Limit(int64(limit))
	if accountID != 0 {
		q = q.Where("al.account_id = ?", accountID)
	}
	return entries, translate(q.Scan(ctx))
}
