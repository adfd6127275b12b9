package webhook

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// KeptFor is how long the event log keeps events readable and
// recoverable.
const KeptFor = 30 * 24 * time.Hour

// MaxRecover bounds the events one recover queues again, so one request
// has a bounded cost; a partner with more asks again with a later since.
const MaxRecover = 10000

// LogEvent is an event of the event log (spec/webhook-endpoints.md
// section 2): its body (only when read alone) and, per endpoint, where
// its delivery stands.
type LogEvent struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	Environment string          `json:"environment"`
	CreatedAt   string          `json:"created_at"`
	Status      string          `json:"status"`
	Body        json.RawMessage `json:"body,omitempty"`
	Deliveries  []*LogDelivery  `json:"deliveries"`
}

// LogDelivery is an event's delivery to one endpoint; its attempts are
// listed when the event is read alone.
type LogDelivery struct {
	EndpointID     string        `json:"endpoint_id"`
	Status         string        `json:"status"`
	Attempts       int64         `json:"attempts"`
	LastError      *string       `json:"last_error"`
	AttemptHistory []*LogAttempt `json:"attempt_history,omitempty"`
}

// LogAttempt is one delivery attempt.
type LogAttempt struct {
	Attempt     int64   `json:"attempt"`
	AttemptedAt string  `json:"attempted_at"`
	HTTPStatus  *int64  `json:"http_status"`
	Error       *string `json:"error"`
	LatencyMS   int64   `json:"latency_ms"`
}

// EventFilter is the event log's query.
type EventFilter struct {
	Type           string
	OrderReference string
	// Limit is 1 to 100; 0 is 20.
	Limit  int
	Cursor string
}

// EventPage is a page of the event log, newest first; NextCursor is "" on
// the last page.
type EventPage struct {
	Events []*LogEvent
	// Cursors are the events' cursors: one passed as EventFilter.Cursor
	// continues after its event.
	Cursors    []string
	NextCursor string
}

// Events returns a page of an app's events of env, newest first, kept
// KeptFor: two statements per page (events, their deliveries).
// Errors: validation_failed (type, limit, cursor).
func (s *Service) Events(ctx context.Context, appID int64, env string, f EventFilter) (*EventPage, error) {
	if f.Type != "" && !slices.Contains(Types, f.Type) {
		return nil, invalid("type", "%q is not an event type (%s)", clip(f.Type), strings.Join(Types, ", "))
	}
	if f.Limit == 0 {
		f.Limit = 20
	}
	if f.Limit < 1 || f.Limit > 100 {
		return nil, invalid("limit", "must be between 1 and 100")
	}
	q := store.WebhookEventFilter{AppID: appID, Environment: env, Type: f.Type, Since: s.Now().Add(-KeptFor), Limit: f.Limit + 1}
	if f.Cursor != "" {
		at, id, ok := parseCursor(f.Cursor)
		if !ok {
			return nil, invalid("cursor", "is not a cursor this list gave")
		}
		q.Before, q.BeforeID = at, id
	}
	if f.OrderReference != "" {
		o, err := store.OrderByReference(ctx, s.DB, f.OrderReference)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (o.AppID != appID || o.Environment != env)) {
			return &EventPage{Events: []*LogEvent{}, Cursors: []string{}}, nil
		}
		if err != nil {
			return nil, err
		}
		q.OrderID = &o.ID
	}
	evs, err := store.WebhookEventLog(ctx, s.DB, q)
	if err != nil {
		return nil, err
	}
	page := &EventPage{}
	if len(evs) > f.Limit {
		evs = evs[:f.Limit]
		last := evs[len(evs)-1]
		page.NextCursor = cursorOf(last.CreatedAt, last.ID)
	}
	ids := make([]string, len(evs))
	for i := range evs {
		ids[i] = evs[i].ID
	}
	ds, err := store.WebhookDeliveriesOf(ctx, s.DB, ids)
	if err != nil {
		return nil, err
	}
	page.Events, page.Cursors = make([]*LogEvent, len(evs)), make([]string, len(evs))
	for i := range evs {
		page.Events[i] = logEvent(&evs[i], ds[evs[i].ID], nil, false)
		page.Cursors[i] = cursorOf(evs[i].CreatedAt, evs[i].ID)
	}
	return page, nil
}

func logEvent(ev *store.WebhookEvent, ds []store.WebhookDelivery, attempts []store.WebhookAttempt, full bool) *LogEvent {
	out := &LogEvent{ID: ev.ID, Type: ev.Type, Environment: ev.Environment, CreatedAt: ev.CreatedAt.UTC().Format(time.RFC3339),
		Status: ev.Status, Deliveries: []*LogDelivery{}}
	if full {
		out.Body = json.RawMessage(ev.Payload)
	}
	for _, d := range ds {
		ld := &LogDelivery{EndpointID: d.EndpointID, Status: d.Status, Attempts: d.Attempts, LastError: d.LastError}
		if full {
			ld.AttemptHistory = []*LogAttempt{}
			for _, a := range attempts {
				if a.EndpointID == d.EndpointID {
					ld.AttemptHistory = append(ld.AttemptHistory, &LogAttempt{Attempt: a.Attempt, AttemptedAt: a.CreatedAt.UTC().Format(time.RFC3339),
						HTTPStatus: a.StatusCode, Error: a.Error, LatencyMS: a.LatencyMS})
				}
			}
		}
		out.Deliveries = append(out.Deliveries, ld)
	}
	return out
}

func cursorOf(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixMicro(), 10) + ":" + id))
}

func parseCursor(c string) (time.Time, string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", false
	}
	us, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(id, "evt_") {
		return time.Time{}, "", false
	}
	return time.UnixMicro(n).UTC(), id, true
}

// event returns an app's event id of env, kept KeptFor.
// Errors: webhook_event_not_found, environment_mismatch.
func (s *Service) event(ctx context.Context, db bun.IDB, appID int64, env, id string) (*store.WebhookEvent, error) {
	notFound := apperr.New(apperr.WebhookEventNotFound, "Webhook event %s was not found for this app.", clip(id))
	if !strings.HasPrefix(id, "evt_") || len(id) > 64 {
		return nil, notFound
	}
	ev, err := store.WebhookEventByID(ctx, db, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (ev.AppID != appID || s.Now().Sub(ev.CreatedAt) > KeptFor)) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if ev.Environment != env {
		return nil, apperr.New(apperr.EnvironmentMismatch,
			"Webhook event %s belongs to the %s environment; use a %s key to read it.", id, ev.Environment, ev.Environment)
	}
	return ev, nil
}

// Event returns one event of the app with its body and, per endpoint,
// its delivery and attempts.
// Errors: webhook_event_not_found, environment_mismatch.
func (s *Service) Event(ctx context.Context, appID int64, env, id string) (*LogEvent, error) {
	ev, err := s.event(ctx, s.DB, appID, env, id)
	if err != nil {
		return nil, err
	}
	ds, err := store.WebhookDeliveriesOf(ctx, s.DB, []string{id})
	if err != nil {
		return nil, err
	}
	_, attempts, err := store.WebhookEventsWithAttempts(ctx, s.DB, []store.WebhookEvent{*ev})
	if err != nil {
		return nil, err
	}
	return logEvent(ev, ds[id], attempts[id], true), nil
}

// RedeliverEvent starts a new round of delivery of an app's event to one
// of its endpoints (endpointID), or to every enabled endpoint that takes
// it ("" ), and returns the event.
// Errors: webhook_event_not_found, webhook_endpoint_not_found,
// environment_mismatch, validation_failed (a delivery still under way, a
// disabled endpoint, one that does not take the event's type).
func (s *Service) RedeliverEvent(ctx context.Context, appID int64, env, id, endpointID string) (*LogEvent, error) {
	if _, err := s.event(ctx, s.DB, appID, env, id); err != nil {
		return nil, err
	}
	if endpointID != "" {
		if _, err := s.endpoint(ctx, s.DB, appID, env, endpointID); err != nil {
			return nil, err
		}
	}
	if err := s.RedeliverTo(ctx, id, endpointID); err != nil {
		return nil, err
	}
	return s.Event(ctx, appID, env, id)
}

// Recover queues again, to one endpoint, every event of the last KeptFor
// after since whose delivery to it failed or was not sent (at most
// MaxRecover, oldest first), and returns how many. The endpoint must be
// enabled. Deliveries still under way are left to finish.
// Errors: webhook_endpoint_not_found, environment_mismatch,
// validation_failed (since; a disabled endpoint).
func (s *Service) Recover(ctx context.Context, appID int64, env, endpointID string, since time.Time) (int, error) {
	now := s.Now().UTC()
	if since.IsZero() {
		return 0, invalid("since", "is required: an RFC 3339 time within the last 30 days")
	}
	if since.After(now) {
		return 0, invalid("since", "must not be in the future")
	}
	if floor := now.Add(-KeptFor); since.Before(floor) {
		since = floor
	}
	n := 0
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		t, err := s.endpoint(ctx, tx, appID, env, endpointID)
		if err != nil {
			return err
		}
		if reason := t.disabledReason(); reason != "" {
			return apperr.New(apperr.ValidationFailed, "%s: enable the endpoint before recovering its events", capitalize(reason))
		}
		ids, err := store.FailedWebhookDeliveries(ctx, tx, endpointID, since, MaxRecover)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if err := store.RequeueWebhookDeliveries(ctx, tx, endpointID, ids); err != nil {
			return err
		}
		jobs := make([]Delivery, len(ids))
		for i, id := range ids {
			jobs[i] = Delivery{EventID: id, EndpointID: endpointID, Behind: true}
		}
		if err := s.Enqueue(ctx, tx, jobs); err != nil {
			return err
		}
		if err := store.RefreshWebhookEvents(ctx, tx, ids); err != nil {
			return err
		}
		n = len(ids)
		return s.audit(ctx, tx, appID, audit.WebhookRecover,
			fmt.Sprintf("%d events to %s (%s) since %s", n, endpointID, env, since.Format(time.RFC3339)))
	})
	return n, err
}
