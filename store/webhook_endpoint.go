package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// WebhookEndpoint is one receiver of an app's events of one environment.
// A NULL URL follows the app's webhook URL and a NULL Secret signs with the
// app's webhook secret: the endpoints every app has from its webhook URL.
type WebhookEndpoint struct {
	bun.BaseModel `bun:"table:webhook_endpoints,alias:ep"`

	ID          string  `bun:"id,pk"`
	AppID       int64   `bun:"app_id,notnull"`
	Environment string  `bun:"environment,notnull"`
	URL         *string `bun:"url"`
	Secret      *string `bun:"secret"`
	// PreviousSecret also signs deliveries until PreviousSecretUntil, after
	// a rotation.
	PreviousSecret      *string   `bun:"previous_secret"`
	PreviousSecretUntil time.Time `bun:"previous_secret_until,nullzero"`
	// EnabledEvents is the filter: event types, or "*" for every type.
	EnabledEvents    []string  `bun:"enabled_events,type:text,notnull"`
	Description      *string   `bun:"description"`
	DisabledManually bool      `bun:"disabled_manually,notnull"`
	CreatedAt        time.Time `bun:"created_at,notnull"`
	UpdatedAt        time.Time `bun:"updated_at,notnull"`
}

// Webhook delivery statuses: WebhookPending, WebhookDelivered,
// WebhookFailed, and WebhookNotSent for an endpoint that was disabled when
// the event was emitted.
const WebhookNotSent = "not_sent"

// WebhookDelivery is how an event's delivery to one endpoint goes.
type WebhookDelivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:wd"`

	EventID     string    `bun:"event_id,pk"`
	EndpointID  string    `bun:"endpoint_id,pk"`
	Status      string    `bun:"status,notnull"`
	Attempts    int64     `bun:"attempts,notnull"`
	LastError   *string   `bun:"last_error"`
	DeliveredAt time.Time `bun:"delivered_at,nullzero"`
}

// InsertWebhookEndpoint stores an endpoint.
func InsertWebhookEndpoint(ctx context.Context, db bun.IDB, e *WebhookEndpoint) error {
	_, err := db.NewInsert().Model(e).Exec(ctx)
	return translate(err)
}

// WebhookEndpointByID returns one endpoint.
// Errors: ErrNotFound.
func WebhookEndpointByID(ctx context.Context, db bun.IDB, id string) (*WebhookEndpoint, error) {
	e := new(WebhookEndpoint)
	err := db.NewSelect().Model(e).Where("ep.id = ?", id).Scan(ctx)
	return e, translate(err)
}

// WebhookEndpointsOf returns an app's endpoints of env: the one that
// follows the app's webhook URL first, then the others oldest first.
func WebhookEndpointsOf(ctx context.Context, db bun.IDB, appID int64, env string) ([]WebhookEndpoint, error) {
	es := []WebhookEndpoint{}
	err := db.NewSelect().Model(&es).Where("ep.app_id = ?", appID).Where("ep.environment = ?", env).
		OrderExpr("CASE WHEN ep.url IS NULL THEN 0 ELSE 1 END").Order("ep.created_at", "ep.id").Scan(ctx)
	return es, translate(err)
}

// AppWebhookEndpoints returns an app's endpoints of both environments,
// oldest first.
func AppWebhookEndpoints(ctx context.Context, db bun.IDB, appID int64) ([]WebhookEndpoint, error) {
	es := []WebhookEndpoint{}
	err := db.NewSelect().Model(&es).Where("ep.app_id = ?", appID).Order("ep.created_at", "ep.id").Scan(ctx)
	return es, translate(err)
}

// UpdateWebhookEndpoint writes an endpoint's mutable fields.
// Errors: ErrNotFound.
func UpdateWebhookEndpoint(ctx context.Context, db bun.IDB, e *WebhookEndpoint) error {
	res, err := db.NewUpdate().Model(e).
		Column("url", "secret", "previous_secret", "previous_secret_until", "enabled_events", "description", "disabled_manually", "updated_at").
		WherePK().Exec(ctx)
	return affectedOne(res, err)
}

// DeleteWebhookEndpoint deletes an endpoint and its streak; its deliveries
// stay in the log (their jobs find it gone and stop).
// Errors: ErrNotFound.
func DeleteWebhookEndpoint(ctx context.Context, db bun.IDB, id string) error {
	if _, err := db.NewDelete().Model((*WebhookHealth)(nil)).Where("endpoint_id = ?", id).Exec(ctx); err != nil {
		return translate(err)
	}
	res, err := db.NewDelete().Model((*WebhookEndpoint)(nil)).Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err)
}

// InsertWebhookDeliveries stores an event's deliveries in one statement.
func InsertWebhookDeliveries(ctx context.Context, db bun.IDB, ds []WebhookDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	_, err := db.NewInsert().Model(&ds).Exec(ctx)
	return translate(err)
}

// WebhookDeliveryOf returns the delivery of an event to an endpoint.
// Errors: ErrNotFound.
func WebhookDeliveryOf(ctx context.Context, db bun.IDB, eventID, endpointID string) (*WebhookDelivery, error) {
	d := new(WebhookDelivery)
	err := db.NewSelect().Model(d).Where("wd.event_id = ?", eventID).Where("wd.endpoint_id = ?", endpointID).Scan(ctx)
	return d, translate(err)
}

// WebhookDeliveriesOf returns the deliveries of events, by event id, in one
// statement.
func WebhookDeliveriesOf(ctx context.Context, db bun.IDB, eventIDs []string) (map[string][]WebhookDelivery, error) {
	out := map[string][]WebhookDelivery{}
	if len(eventIDs) == 0 {
		return out, nil
	}
	var ds []WebhookDelivery
	if err := db.NewSelect().Model(&ds).Where("wd.event_id IN (?)", bun.List(eventIDs)).Order("wd.event_id", "wd.endpoint_id").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for _, d := range ds {
		out[d.EventID] = append(out[d.EventID], d)
	}
	return out, nil
}

// UpsertWebhookDelivery makes an event's delivery to an endpoint pending
// again (a redelivery), or starts one.
func UpsertWebhookDelivery(ctx context.Context, db bun.IDB, eventID, endpointID string) error {
	_, err := db.NewRaw(`INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts) VALUES (?, ?, ?, 0)
		ON CONFLICT (event_id, endpoint_id) DO UPDATE SET status = excluded.status`,
		eventID, endpointID, WebhookPending).Exec(ctx)
	return translate(err)
}

// SetWebhookDelivery records where a delivery stands without an attempt
// (not sent, or given up before a request) and refreshes its event.
func SetWebhookDelivery(ctx context.Context, db bun.IDB, eventID, endpointID, status, reason string) error {
	res, err := db.NewUpdate().Model((*WebhookDelivery)(nil)).Set("status = ?", status).Set("last_error = ?", reason).
		Where("event_id = ?", eventID).Where("endpoint_id = ?", endpointID).Exec(ctx)
	if err := affectedOne(res, err); err != nil {
		return err
	}
	return RefreshWebhookEvent(ctx, db, eventID, &reason)
}

// RefreshWebhookEvent sets an event's status and attempt count from its
// deliveries: pending while one is, else failed when one failed or was not
// sent, else delivered; lastError, when not nil, becomes its last error.
// An event without deliveries keeps what it has.
func RefreshWebhookEvent(ctx context.Context, db bun.IDB, eventID string, lastError *string) error {
	q := db.NewUpdate().Model((*WebhookEvent)(nil)).
		Set(`status = CASE
			WHEN EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ? AND d.status = ?) THEN ?
			WHEN EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ? AND d.status IN (?, ?)) THEN ?
			ELSE ? END`, eventID, WebhookPending, WebhookPending, eventID, WebhookFailed, WebhookNotSent, WebhookFailed, WebhookDelivered).
		Set("attempts = (SELECT COALESCE(SUM(d.attempts), 0) FROM webhook_deliveries d WHERE d.event_id = ?)", eventID).
		Set(`delivered_at = CASE WHEN NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ? AND d.status <> ?)
			THEN (SELECT MAX(d.delivered_at) FROM webhook_deliveries d WHERE d.event_id = ?) ELSE NULL END`, eventID, WebhookDelivered, eventID).
		Where("id = ?", eventID).
		Where("EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ?)", eventID)
	if lastError != nil {
		q = q.Set("last_error = ?", *lastError)
	}
	_, err := q.Exec(ctx)
	return translate(err)
}

// FailedWebhookDeliveries returns the ids of the events whose delivery to
// an endpoint failed or was not sent, created after since, oldest first,
// at most limit.
func FailedWebhookDeliveries(ctx context.Context, db bun.IDB, endpointID string, since time.Time, limit int) ([]string, error) {
	var ids []string
	err := db.NewRaw(`SELECT d.event_id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
		WHERE d.endpoint_id = ? AND d.status IN (?, ?) AND e.created_at > ?
		ORDER BY e.created_at, e.id LIMIT ?`, endpointID, WebhookFailed, WebhookNotSent, since.UTC(), limit).Scan(ctx, &ids)
	return ids, translate(err)
}

// WebhookEventFilter selects an app's events of one environment for the
// event log, newest first.
type WebhookEventFilter struct {
	AppID       int64
	Environment string
	Type        string
	OrderID     *int64
	// Since excludes events created at or before it (the log keeps 30 days).
	Since time.Time
	// Before, with BeforeID, continues a page after the event created at
	// Before with id BeforeID.
	Before   time.Time
	BeforeID string
	Limit    int
}

// WebhookEventLog returns the events a filter selects, newest first.
func WebhookEventLog(ctx context.Context, db bun.IDB, f WebhookEventFilter) ([]WebhookEvent, error) {
	events := []WebhookEvent{}
	q := db.NewSelect().Model(&events).Where("we.app_id = ?", f.AppID).Where("we.environment = ?", f.Environment).
		Where("we.created_at > ?", f.Since.UTC())
	if f.Type != "" {
		q = q.Where("we.type = ?", f.Type)
	}
	if f.OrderID != nil {
		q = q.Where("we.order_id = ?", *f.OrderID)
	}
	if !f.Before.IsZero() {
		q = q.Where("(we.created_at < ? OR (we.created_at = ? AND we.id < ?))", f.Before.UTC(), f.Before.UTC(), f.BeforeID)
	}
	err := q.Order("we.created_at DESC", "we.id DESC").Limit(int64(f.Limit)).Scan(ctx)
	return events, translate(err)
}

// LockApp holds the app's row until the transaction ends, so that
// endpoints created at once are counted one after another (an UPDATE, as
// LockAccount explains). An unknown id is ErrNotFound.
func LockApp(ctx context.Context, db bun.IDB, id int64) error {
	res, err := db.NewUpdate().Model((*App)(nil)).Set("updated_at = updated_at").Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err)
}

// RequeueWebhookDeliveries makes the deliveries of events to an endpoint
// pending again, in one statement.
func RequeueWebhookDeliveries(ctx context.Context, db bun.IDB, endpointID string, eventIDs []string) error {
	_, err := db.NewUpdate().Model((*WebhookDelivery)(nil)).Set("status = ?", WebhookPending).
		Where("endpoint_id = ?", endpointID).Where("event_id IN (?)", bun.List(eventIDs)).Exec(ctx)
	return translate(err)
}

// RefreshWebhookEvents marks events pending again after some of their
// deliveries were queued again, in one statement.
func RefreshWebhookEvents(ctx context.Context, db bun.IDB, eventIDs []string) error {
	_, err := db.NewUpdate().Model((*WebhookEvent)(nil)).Set("status = ?", WebhookPending).
		Where("id IN (?)", bun.List(eventIDs)).Exec(ctx)
	return translate(err)
}
