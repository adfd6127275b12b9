package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// WebhookHealth is the failure streak of an app's webhook endpoint: the row
// exists while deliveries to URL keep failing and is deleted by the next
// success. DisabledAt is set once the streak has lasted so long that
// deliveries to URL stop.
type WebhookHealth struct {
	bun.BaseModel `bun:"table:webhook_health,alias:wh"`

	AppID         int64     `bun:"app_id,pk"`
	URL           string    `bun:"url,notnull"`
	Failures      int64     `bun:"failures,notnull"`
	FailingSince  time.Time `bun:"failing_since,notnull"`
	LastFailureAt time.Time `bun:"last_failure_at,notnull"`
	LastError     string    `bun:"last_error,notnull"`
	DisabledAt    time.Time `bun:"disabled_at,nullzero"`
}

// Disabled reports whether deliveries to url are stopped: the streak is of
// that URL and has been disabled. A streak of another URL (the app's URL
// has changed since) stops nothing.
func (h *WebhookHealth) Disabled(url string) bool {
	return h != nil && h.URL == url && !h.DisabledAt.IsZero()
}

// WebhookHealthOf returns the failure streak of an app's endpoint.
// Errors: ErrNotFound when there is none (the last delivery succeeded, or
// none has failed).
func WebhookHealthOf(ctx context.Context, db bun.IDB, appID int64) (*WebhookHealth, error) {
	h := new(WebhookHealth)
	err := db.NewSelect().Model(h).Where("wh.app_id = ?", appID).Scan(ctx)
	return h, translate(err)
}

// RecordWebhookFailure adds a failed delivery to url at now to the app's
// streak, or starts a new streak when there is none or it was of another
// URL, and returns the streak as it now stands.
func RecordWebhookFailure(ctx context.Context, db bun.IDB, appID int64, url, errText string, now time.Time) (*WebhookHealth, error) {
	var hs []WebhookHealth
	// One statement, so failures counted at once on several instances all
	// count; the SET expressions read the row as it was.
	err := db.NewRaw(`INSERT INTO webhook_health AS h (app_id, url, failures, failing_since, last_failure_at, last_error)
		VALUES (?, ?, 1, ?, ?, ?)
		ON CONFLICT (app_id) DO UPDATE SET
			failures = CASE WHEN h.url = excluded.url THEN h.failures + 1 ELSE 1 END,
			failing_since = CASE WHEN h.url = excluded.url THEN h.failing_since ELSE excluded.failing_since END,
			disabled_at = CASE WHEN h.url = excluded.url THEN h.disabled_at ELSE NULL END,
			url = excluded.url, last_failure_at = excluded.last_failure_at, last_error = excluded.last_error
		RETURNING app_id, url, failures, failing_since, last_failure_at, last_error, disabled_at`,
		appID, url, now, now, errText).Scan(ctx, &hs)
	if err != nil {
		return nil, translate(err)
	}
	if len(hs) != 1 {
		return nil, ErrNotFound
	}
	return &hs[0], nil
}

// DisableWebhookEndpoint stops deliveries to the URL of the app's streak at
// now, and reports whether this call did it (false when it was already
// disabled, or the streak has ended).
func DisableWebhookEndpoint(ctx context.Context, db bun.IDB, appID int64, now time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*WebhookHealth)(nil)).Set("disabled_at = ?", now).
		Where("app_id = ?", appID).Where("disabled_at IS NULL").Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ResetWebhookHealth ends the app's streak (a delivery succeeded, or the
// partner resumed deliveries) and reports whether there was one.
func ResetWebhookHealth(ctx context.Context, db bun.IDB, appID int64) (bool, error) {
	res, err := db.NewDelete().Model((*WebhookHealth)(nil)).Where("app_id = ?", appID).Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// FailWebhookEvent marks an event failed without an attempt (its delivery
// was not made), with the reason as its last error.
func FailWebhookEvent(ctx context.Context, db bun.IDB, id, reason string) error {
	res, err := db.NewUpdate().Model((*WebhookEvent)(nil)).Set("status = ?", WebhookFailed).
		Set("last_error = ?", reason).Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err)
}
