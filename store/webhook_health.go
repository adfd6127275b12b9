package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// WebhookHealth is the failure streak of a webhook endpoint: the row
// exists while deliveries to URL keep failing and is deleted by the next
// success. DisabledAt is set once the streak has lasted so long that
// deliveries to URL stop.
type WebhookHealth struct {
	bun.BaseModel `bun:"table:webhook_endpoint_health,alias:wh"`

	EndpointID    string    `bun:"endpoint_id,pk"`
	URL           string    `bun:"url,notnull"`
	Failures      int64     `bun:"failures,notnull"`
	FailingSince  time.Time `bun:"failing_since,notnull"`
	LastFailureAt time.Time `bun:"last_failure_at,notnull"`
	LastError     string    `bun:"last_error,notnull"`
	DisabledAt    time.Time `bun:"disabled_at,nullzero"`
}

// Disabled reports whether deliveries to url are stopped: the streak is of
// that URL and has been disabled. A streak of another URL (the endpoint's
// URL has changed since) stops nothing.
func (h *WebhookHealth) Disabled(url string) bool {
	return h != nil && h.URL == url && !h.DisabledAt.IsZero()
}

// WebhookHealthOf returns the failure streak of an endpoint.
// Errors: ErrNotFound when there is none (the last delivery succeeded, or
// none has failed).
func WebhookHealthOf(ctx context.Context, db bun.IDB, endpointID string) (*WebhookHealth, error) {
	h := new(WebhookHealth)
	err := db.NewSelect().Model(h).Where("wh.endpoint_id = ?", endpointID).Scan(ctx)
	return h, translate(err)
}

// WebhookHealthOfEndpoints returns the streaks of endpoints by endpoint id,
// in one statement.
func WebhookHealthOfEndpoints(ctx context.Context, db bun.IDB, ids []string) (map[string]*WebhookHealth, error) {
	out := map[string]*WebhookHealth{}
	if len(ids) == 0 {
		return out, nil
	}
	var hs []WebhookHealth
	if err := db.NewSelect().Model(&hs).Where("wh.endpoint_id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for i := range hs {
		out[hs[i].EndpointID] = &hs[i]
	}
	return out, nil
}

// RecordWebhookFailure adds a failed delivery to url at now to the
// endpoint's streak, or starts a new streak when there is none or it was
// of another URL, and returns the streak as it now stands.
func RecordWebhookFailure(ctx context.Context, db bun.IDB, endpointID string, url, errText string, now time.Time) (*WebhookHealth, error) {
	var hs []WebhookHealth
	// One statement, so failures counted at once on several instances all
	// count; the SET expressions read the row as it was.
	err := db.NewRaw(`INSERT INTO webhook_endpoint_health AS h (endpoint_id, url, failures, failing_since, last_failure_at, last_error)
		VALUES (?, ?, 1, ?, ?, ?)
		ON CONFLICT (endpoint_id) DO UPDATE SET
			failures = CASE WHEN h.url = excluded.url THEN h.failures + 1 ELSE 1 END,
			failing_since = CASE WHEN h.url = excluded.url THEN h.failing_since ELSE excluded.failing_since END,
			disabled_at = CASE WHEN h.url = excluded.url THEN h.disabled_at ELSE NULL END,
			url = excluded.url, last_failure_at = excluded.last_failure_at, last_error = excluded.last_error
		RETURNING endpoint_id, url, failures, failing_since, last_failure_at, last_error, disabled_at`,
		endpointID, url, now, now, errText).Scan(ctx, &hs)
	if err != nil {
		return nil, translate(err)
	}
	if len(hs) != 1 {
		return nil, ErrNotFound
	}
	return &hs[0], nil
}

// DisableWebhookEndpoint stops deliveries to the URL of the endpoint's
// streak at now, and reports whether this call did it (false when it was
// already disabled, or the streak has ended).
func DisableWebhookEndpoint(ctx context.Context, db bun.IDB, endpointID string, now time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*WebhookHealth)(nil)).Set("disabled_at = ?", now).
		Where("endpoint_id = ?", endpointID).Where("disabled_at IS NULL").Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ResetWebhookHealth ends the endpoint's streak (a delivery succeeded, or
// the partner resumed deliveries) and reports whether there was one.
func ResetWebhookHealth(ctx context.Context, db bun.IDB, endpointID string) (bool, error) {
	res, err := db.NewDelete().Model((*WebhookHealth)(nil)).Where("endpoint_id = ?", endpointID).Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
