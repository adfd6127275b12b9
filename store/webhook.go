package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Webhook event statuses.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
)

// WebhookEvent is one event for an app: its exact signed body and how its
// delivery went.
type WebhookEvent struct {
	bun.BaseModel `bun:"table:webhook_events,alias:we"`

	ID          string    `bun:"id,pk"`
	AppID       int64     `bun:"app_id,notnull"`
	Environment string    `bun:"environment,notnull"`
	Type        string    `bun:"type,notnull"`
	OrderID     *int64    `bun:"order_id"`
	Sequence    int64     `bun:"sequence,notnull"`
	Payload     string    `bun:"payload,notnull"`
	Status      string    `bun:"status,notnull"`
	Attempts    int64     `bun:"attempts,notnull"`
	LastError   *string   `bun:"last_error"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
	DeliveredAt time.Time `bun:"delivered_at,nullzero"`
	// StreamedAt is when the event was first sent down an event stream to
	// `boxoffice listen`; zero when no listener got it.
	StreamedAt time.Time `bun:"streamed_at,nullzero"`
}

// WebhookAttempt is one delivery attempt of an event.
type WebhookAttempt struct {
	bun.BaseModel `bun:"table:webhook_attempts,alias:wa"`

	ID      int64  `bun:"id,pk,autoincrement"`
	EventID string `bun:"event_id,notnull"`
	// EndpointID is the endpoint the attempt went to ("" before endpoints).
	EndpointID string    `bun:"endpoint_id,nullzero"`
	Attempt    int64     `bun:"attempt,notnull"`
	URL        string    `bun:"url,notnull"`
	StatusCode *int64    `bun:"status_code"`
	LatencyMS  int64     `bun:"latency_ms,notnull"`
	Error      *string   `bun:"error"`
	CreatedAt  time.Time `bun:"created_at,notnull"`
}

// InsertWebhookEvent stores an event.
func InsertWebhookEvent(ctx context.Context, db bun.IDB, e *WebhookEvent) error {
	_, err := db.NewInsert().Model(e).Exec(ctx)
	return translate(err)
}

// WebhookEventByID returns one event.
func WebhookEventByID(ctx context.Context, db bun.IDB, id string) (*WebhookEvent, error) {
	e := new(WebhookEvent)
	err := db.NewSelect().Model(e).Where("we.id = ?", id).Scan(ctx)
	return e, translate(err)
}

// RecordWebhookAttempt stores an attempt and updates its delivery
// (status, attempt count, last error) and its event (from all its
// deliveries, RefreshWebhookEvent). An event without a delivery to the
// attempt's endpoint (recorded before endpoints) is updated directly.
func RecordWebhookAttempt(ctx context.Context, db bun.IDB, a *WebhookAttempt, status string, now time.Time) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(a).Returning("id").Exec(ctx); err != nil {
			return translate(err)
		}
		d := tx.NewUpdate().Model((*WebhookDelivery)(nil)).
			Set("attempts = ?", a.Attempt).Set("status = ?", status).Set("last_error = ?", a.Error).
			Where("event_id = ?", a.EventID).Where("endpoint_id = ?", a.EndpointID)
		if status == WebhookDelivered {
			d = d.Set("delivered_at = ?", now)
		}
		res, err := d.Exec(ctx)
		if err != nil {
			return translate(err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			msg := ""
			if a.Error != nil {
				msg = *a.Error
			}
			if err := RefreshWebhookEvent(ctx, tx, a.EventID, &msg); err != nil {
				return err
			}
			if a.Error == nil {
				_, err = tx.NewUpdate().Model((*WebhookEvent)(nil)).Set("last_error = NULL").Where("id = ?", a.EventID).Exec(ctx)
			}
			return translate(err)
		}
		q := tx.NewUpdate().Model((*WebhookEvent)(nil)).
			Set("attempts = ?", a.Attempt).Set("status = ?", status).Set("last_error = ?", a.Error).
			Where("id = ?", a.EventID)
		if status == WebhookDelivered {
			q = q.Set("delivered_at = ?", now)
		}
		_, err = q.Exec(ctx)
		return translate(err)
	})
}

// SetWebhookEventStatus changes an event's status (redelivery resets it to pending).
func SetWebhookEventStatus(ctx context.Context, db bun.IDB, id, status string) error {
	res, err := db.NewUpdate().Model((*WebhookEvent)(nil)).Set("status = ?", status).Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err)
}

// RecentWebhookEvents returns an app's newest events, newest first
// (created_at, then id, descending), with their attempts: up to limit of
// them, after the event created at before with id beforeID when before is
// set. One range of webhook_events_app_log_idx, then one statement for the
// attempts.
func RecentWebhookEvents(ctx context.Context, db bun.IDB, appID int64, before time.Time, beforeID string, limit int) ([]WebhookEvent, map[string][]WebhookAttempt, error) {
	events := []WebhookEvent{}
	q := db.NewSelect().Model(&events).Where("we.app_id = ?", appID)
	if !before.IsZero() {
		q = q.Where("(we.created_at, we.id) < (?, ?)", before.UTC(), beforeID)
	}
	err := q.Order("we.created_at DESC", "we.id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, nil, translate(err)
	}
	return withAttempts(ctx, db, events)
}

// OrderWebhookEvents returns the events of one order (its status changes
// and its tickets' check-ins and voids), oldest first, with their
// attempts: two statements, whatever the number of events.
func OrderWebhookEvents(ctx context.Context, db bun.IDB, orderID int64) ([]WebhookEvent, map[string][]WebhookAttempt, error) {
	events := []WebhookEvent{}
	err := db.NewSelect().Model(&events).Where("we.order_id = ?", orderID).
		Order("we.created_at", "we.sequence", "we.id").Scan(ctx)
	if err != nil {
		return nil, nil, translate(err)
	}
	return withAttempts(ctx, db, events)
}

// withAttempts loads the attempts of events in one statement.
func withAttempts(ctx context.Context, db bun.IDB, events []WebhookEvent) ([]WebhookEvent, map[string][]WebhookAttempt, error) {
	attempts := map[string][]WebhookAttempt{}
	if len(events) == 0 {
		return events, attempts, nil
	}
	ids := make([]string, len(events))
	for i := range events {
		ids[i] = events[i].ID
	}
	var as []WebhookAttempt
	err := db.NewSelect().Model(&as).Where("wa.event_id IN (?)", bun.List(ids)).Order("wa.event_id", "wa.attempt").Scan(ctx)
	for _, a := range as {
		attempts[a.EventID] = append(attempts[a.EventID], a)
	}
	return events, attempts, translate(err)
}

// MarkWebhookEventsStreamed records that the events were sent down an
// event stream at now; an event keeps the first time it was.
func MarkWebhookEventsStreamed(ctx context.Context, db bun.IDB, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := db.NewUpdate().Model((*WebhookEvent)(nil)).Set("streamed_at = ?", now.UTC()).
		Where("id IN (?)", bun.List(ids)).Where("streamed_at IS NULL").Exec(ctx)
	return translate(err)
}

// WebhookEventsWithAttempts loads the attempts of events in one statement.
func WebhookEventsWithAttempts(ctx context.Context, db bun.IDB, events []WebhookEvent) ([]WebhookEvent, map[string][]WebhookAttempt, error) {
	return withAttempts(ctx, db, events)
}
