package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// App statuses.
const (
	AppActive    = "active"
	AppSuspended = "suspended"
)

// App is a partner application of an account; its keys authenticate requests.
type App struct {
	bun.BaseModel `bun:"table:apps,alias:app"`

	ID              int64    `bun:"id,pk,autoincrement"`
	AccountID       int64    `bun:"account_id,notnull"`
	Name            string   `bun:"name,notnull"`
	Status          string   `bun:"status,notnull"`
	RedirectDomains []string `bun:"redirect_domains,type:text,notnull"`
	WebhookURL      string   `bun:"webhook_url,nullzero"`
	WebhookSecret   string   `bun:"webhook_secret,notnull"`
	// TicketEmails is false for an app that delivers tickets itself. A
	// new app sends them (an insert of false stores the default, true);
	// SetTicketEmails switches them.
	TicketEmails bool      `bun:"ticket_emails,nullzero,notnull,default:true"`
	CreatedAt    time.Time `bun:"created_at,notnull"`
	UpdatedAt    time.Time `bun:"updated_at,notnull"`
}

// InsertApp stores a new app and sets its ID.
func InsertApp(ctx context.Context, db bun.IDB, a *App) error {
	if a.RedirectDomains == nil {
		a.RedirectDomains = []string{}
	}
	_, err := db.NewInsert().Model(a).Returning("id").Exec(ctx)
	return translate(err)
}

// AppByID returns one app.
func AppByID(ctx context.Context, db bun.IDB, id int64) (*App, error) {
	a := new(App)
	err := db.NewSelect().Model(a).Where("id = ?", id).Scan(ctx)
	return a, translate(err)
}

// UpdateApp writes an app's mutable fields (name, status, redirect domains,
// webhook URL) and bumps updated_at.
func UpdateApp(ctx context.Context, db bun.IDB, a *App) error {
	if a.RedirectDomains == nil {
		a.RedirectDomains = []string{}
	}
	res, err := db.NewUpdate().Model(a).
		Column("name", "status", "redirect_domains", "webhook_url", "updated_at").
		WherePK().Exec(ctx)
	return affectedOne(res, err)
}

// CountApps returns how many apps exist.
func CountApps(ctx context.Context, db bun.IDB) (int, error) {
	n, err := db.NewSelect().Model((*App)(nil)).Count(ctx)
	return int(n), translate(err)
}

// CountAccountApps returns how many apps an account has, whatever their
// status.
func CountAccountApps(ctx context.Context, db bun.IDB, accountID int64) (int, error) {
	n, err := db.NewSelect().Model((*App)(nil)).Where("account_id = ?", accountID).Count(ctx)
	return int(n), translate(err)
}

// ListApps returns the apps, oldest first; only those of an account when
// accountID is not 0.
func ListApps(ctx context.Context, db bun.IDB, accountID int64) ([]App, error) {
	as := []App{}
	q := db.NewSelect().Model(&as).Order("app.id")
	if accountID != 0 {
		q = q.Where("app.account_id = ?", accountID)
	}
	err := q.Scan(ctx)
	return as, translate(err)
}

// SetWebhookSecret replaces an app's webhook signing secret.
func SetWebhookSecret(ctx context.Context, db bun.IDB, appID int64, secret string, now time.Time) error {
	res, err := db.NewUpdate().Model((*App)(nil)).
		Set("webhook_secret = ?", secret).Set("updated_at = ?", now).
		Where("id = ?", appID).Exec(ctx)
	return affectedOne(res, err)
}

// SetTicketEmails switches an app's ticket emails on or off. Errors:
// ErrNotFound.
func SetTicketEmails(ctx context.Context, db bun.IDB, appID int64, on bool, now time.Time) error {
	res, err := db.NewUpdate().Model((*App)(nil)).Set("ticket_emails = ?", on).Set("updated_at = ?", now).
		Where("id = ?", appID).Exec(ctx)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
