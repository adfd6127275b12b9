// Package webhook emits signed events to partner apps and delivers them.
// An event row and its delivery job are written in the transaction of the
// change that causes them, so nothing is lost on a crash; delivery runs as a
// durable job that retries non-2xx answers and timeouts with exponential
// backoff, at most MaxAttempts times, recording every attempt.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Event types (spec section 6; spec/fulfilment.md section 4 for the
// tickets'; spec/refunds.md section 4 for the refunds').
const (
	OrderPaid       = "order.paid"
	OrderCompleted  = "order.completed"
	OrderFailed     = "order.failed"
	OrderExpired    = "order.expired"
	TicketCheckedIn = "ticket.checked_in"
	TicketVoided    = "ticket.voided"
	RefundCreated   = "refund.created"
	RefundSucceeded = "refund.succeeded"
	RefundFailed    = "refund.failed"
	Test            = "webhook.test"
)

// MaxAttempts is how many times a delivery is tried (spec section 8).
const MaxAttempts = 10

// DefaultRetryBase is the first retry delay (WEBHOOK_RETRY_BASE).
const DefaultRetryBase = 30 * time.Second

// Service emits and delivers webhook events.
type Service struct {
	DB  *store.DB
	Now func() time.Time
	Log *slog.Logger
	// Client sends deliveries; NewClient builds the safe default.
	Client *http.Client
	// AllowPrivate accepts http:// URLs and private targets (development).
	AllowPrivate bool
	// Enqueue schedules the delivery job of an event inside tx; behind is
	// true when the event's app is backlogged (Slots.Backlogged), and its
	// job is to be worked after other apps' waiting jobs.
	Enqueue func(ctx context.Context, tx bun.Tx, eventID string, behind bool) error
	// Observe, when set, learns each attempt's outcome: delivered, retry or failed.
	Observe func(outcome string)
	// Slots, when set, shares this instance's delivery workers among apps
	// (see Slots): a delivery whose app has its share answers ErrAppBusy.
	Slots *Slots
	// DisableAfter is how long deliveries to an endpoint may fail, without
	// one success, before they stop (zero: DefaultDisableAfter).
	DisableAfter time.Duration
}

// Event is what Emit records.
type Event struct {
	AppID       int64
	Environment string
	Type        string
	// OrderID and Sequence identify order events; Sequence grows per order.
	OrderID  *int64
	Sequence int64
	Data     any
}

// body is the JSON every delivery carries (docs/webhooks.md, "The body").
type body struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	CreatedAt   string `json:"created_at"`
	Environment string `json:"environment"`
	Sequence    int64  `json:"sequence"`
	Data        any    `json:"data"`
}

// Emit records an event and schedules its delivery in tx, the transaction
// of the change it reports. It returns the event id.
func (s *Service) Emit(ctx context.Context, tx bun.Tx, e Event) (string, error) {
	return s.EmitWith(ctx, tx, e, func(row *store.WebhookEvent) error { return store.InsertWebhookEvent(ctx, tx, row) })
}

// EmitWith is Emit for a change that writes its own row in the same
// statement as the event's: insert writes the event's row, built here,
// and whatever goes with it (store.InsertCheckIn). The delivery is
// scheduled after it.
func (s *Service) EmitWith(ctx context.Context, tx bun.Tx, e Event, insert func(*store.WebhookEvent) error) (string, error) {
	now := s.Now().UTC()
	id := newEventID()
	payload, err := json.Marshal(body{ID: id, Type: e.Type, CreatedAt: now.Format(time.RFC3339),
		Environment: e.Environment, Sequence: e.Sequence, Data: e.Data})
	if err != nil {
		return "", fmt.Errorf("webhook: encode %s: %w", e.Type, err)
	}
	row := &store.WebhookEvent{ID: id, AppID: e.AppID, Environment: e.Environment, Type: e.Type,
		OrderID: e.OrderID, Sequence: e.Sequence, Payload: string(payload), Status: store.WebhookPending, CreatedAt: now}
	if err := insert(row); err != nil {
		return "", err
	}
	if err := s.Enqueue(ctx, tx, id, s.backlogged(e.AppID)); err != nil {
		return "", fmt.Errorf("webhook: enqueue %s: %w", id, err)
	}
	return id, nil
}

// backlogged reports whether an app's new deliveries go behind other apps'.
func (s *Service) backlogged(app int64) bool { return s.Slots != nil && s.Slots.Backlogged(app) }

// ErrDeliveryPending is what Enqueue returns, wrapped with where that
// delivery stands, when the event already has a delivery that has not
// finished: an event has one delivery chain at a time.
var ErrDeliveryPending = errors.New("a delivery of the event is still under way")

// Redeliver schedules another round of delivery (up to MaxAttempts
// attempts) of an event whose delivery has ended, delivered or failed, and
// audits it for the event's account. An
// event whose delivery is still under way (queued, running or waiting to
// retry) is refused with an error wrapping ErrDeliveryPending, rather than
// given a second, concurrent delivery chain; so is every event while
// deliveries to the app's URL are disabled (validation_failed: resume
// them first).
func (s *Service) Redeliver(ctx context.Context, id string) error {
	for wait := 0; ; wait++ {
		ended := false
		err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			ev, err := store.WebhookEventByID(ctx, tx, id)
			if errors.Is(err, store.ErrNotFound) {
				return apperr.New(apperr.NotFound, "webhook event %s does not exist", id)
			}
			if err != nil {
				return err
			}
			app, err := store.AppByID(ctx, tx, ev.AppID)
			if err != nil {
				return err
			}
			if err := s.refuseDisabled(ctx, tx, app, "redelivering an event"); err != nil {
				return err
			}
			ended = ev.Status != store.WebhookPending
			if err := store.SetWebhookEventStatus(ctx, tx, id, store.WebhookPending); err != nil {
				return err
			}
			if err := s.Enqueue(ctx, tx, id, s.backlogged(app.ID)); err != nil {
				return err
			}
			return audit.Record(ctx, tx, s.Now(), audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: audit.WebhookRedeliver,
				Detail: ev.Type + " event " + id + " (" + ev.Environment + ")"})
		})
		if !errors.Is(err, ErrDeliveryPending) {
			return err
		}
		// An event whose last attempt is recorded has a job that River marks
		// finished a moment later (it records job ends in batches, every
		// 50 ms): wait for that rather than refuse an operator who acted on
		// the recorded outcome.
		if !ended || wait == finishWaits {
			// A refusal the operator or partner can act on, not a failure.
			return &apperr.Error{Code: apperr.ValidationFailed, Cause: err,
				Message: fmt.Sprintf("event %s was not queued again: %v; redeliver it once that delivery has ended", id, err)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// finishWaits bounds Redeliver's wait for a finished delivery's job to be
// marked finished: 40 waits of 50 ms.
const finishWaits = 40

// ErrGiveUp marks a delivery that retrying cannot fix (no URL, unsafe URL).
var ErrGiveUp = errors.New("webhook: delivery cannot succeed")

// errNoURL gives up the delivery of an app without a webhook URL.
var errNoURL = fmt.Errorf("%w: the app has no webhook URL", ErrGiveUp)

// Deliver makes one delivery attempt of an event and records it. It returns
// nil on a 2xx answer, an error to be retried otherwise; when last is true
// (the job's final attempt), or for an error wrapping ErrGiveUp, the event
// is marked failed. It makes no attempt, and records none, when the app
// already has its share of the workers (an error wrapping ErrAppBusy: try
// again later) or when deliveries to the app's URL are disabled (the event
// is marked failed with the reason, and the error wraps ErrGiveUp).
func (s *Service) Deliver(ctx context.Context, eventID string, last bool) error {
	ev, err := store.WebhookEventByID(ctx, s.DB, eventID)
	if err != nil {
		return err
	}
	if ev.Status == store.WebhookDelivered {
		return nil // a redelivery raced with a success
	}
	app, err := store.AppByID(ctx, s.DB, ev.AppID)
	if err != nil {
		return err
	}
	seen := untried
	if s.Slots != nil {
		done, ok := s.Slots.take(app.AccountID, app.ID)
		if !ok {
			return fmt.Errorf("%w (app %d of account %d)", ErrAppBusy, app.ID, app.AccountID)
		}
		defer func() { done(seen) }()
	}
	health, err := s.health(ctx, s.DB, app.ID)
	if err != nil {
		return err
	}
	if health.Disabled(app.WebhookURL) {
		return s.notSent(ctx, ev, health)
	}
	attempt := ev.Attempts + 1 // counted across redeliveries
	start := s.Now()
	status, derr := s.send(ctx, app, ev)
	latency := s.Now().Sub(start)
	rec := &store.WebhookAttempt{EventID: ev.ID, Attempt: int64(attempt), URL: app.WebhookURL,
		LatencyMS: latency.Milliseconds(), CreatedAt: s.Now().UTC()}
	if status > 0 {
		code := int64(status)
		rec.StatusCode = &code
	}
	if derr == nil && (status < 200 || status > 299) {
		derr = fmt.Errorf("receiver answered %d", status)
	}
	outcome := store.WebhookDelivered
	if derr != nil {
		msg := derr.Error()
		rec.Error = &msg
		outcome = store.WebhookPending
		if last || errors.Is(derr, ErrGiveUp) {
			outcome = store.WebhookFailed
		}
	}
	// What the receiver showed, for Slots and the endpoint's streak: nothing
	// when no request could be made (no or unsafe URL) or this instance is
	// stopping.
	switch {
	case errors.Is(derr, ErrGiveUp) || ctx.Err() != nil:
	case derr == nil && latency <= SlowAnswer:
		seen = healthy
	default:
		seen = struggling
	}
	var disabled *store.WebhookHealth
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := store.RecordWebhookAttempt(ctx, tx, rec, outcome, s.Now().UTC()); err != nil {
			return err
		}
		var err error
		switch {
		case seen == untried:
		case derr == nil:
			if health != nil { // a success ends the streak
				_, err = store.ResetWebhookHealth(ctx, tx, app.ID)
			}
		default:
			disabled, err = s.countFailure(ctx, tx, app, *rec.Error)
		}
		return err
	})
	if err != nil {
		return err
	}
	if s.Observe != nil {
		label := map[string]string{store.WebhookDelivered: "delivered", store.WebhookPending: "retry", store.WebhookFailed: "failed"}[outcome]
		if errors.Is(derr, errNoURL) {
			// Nothing to post to: its events reach boxoffice listen alone,
			// which is no failure to alert on.
			label = "listen_only"
		}
		s.Observe(label)
	}
	s.Log.Info("webhook delivery", "event_id", ev.ID, "type", ev.Type, "app_id", ev.AppID,
		"attempt", attempt, "status", status, "latency_ms", rec.LatencyMS, "outcome", outcome, "error", rec.Error)
	if disabled != nil {
		s.Log.Warn("webhook endpoint disabled", "app_id", app.ID, "failures", disabled.Failures,
			"failing_since", disabled.FailingSince.UTC().Format(time.RFC3339))
	}
	return derr
}

// send signs and posts an event; it returns the HTTP status (0 when none).
func (s *Service) send(ctx context.Context, app *store.App, ev *store.WebhookEvent) (int, error) {
	if app.WebhookURL == "" {
		return 0, errNoURL
	}
	u, err := url.Parse(app.WebhookURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(s.AllowPrivate && u.Scheme == "http")) {
		return 0, fmt.Errorf("%w: the webhook URL must be https://", ErrGiveUp)
	}
	req, err := NewDeliveryRequest(ctx, app.WebhookURL, app.WebhookSecret, ev.ID, ev.Type, []byte(ev.Payload), s.Now())
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrGiveUp, err)
	}
	res, err := s.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, nil
}

func newEventID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "evt_" + hex.EncodeToString(b)
}

// EmitTest emits a webhook.test event for an app, so a partner can check
// their endpoint and signature code.
// Errors: validation_failed (env; webhook-url when the app has none; while
// deliveries to its URL are disabled), not_found.
func (s *Service) EmitTest(ctx context.Context, appID int64, env string) (string, error) {
	if err := auth.CheckEnv(env); err != nil {
		return "", err
	}
	var id string
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, appID)
		if err != nil {
			return err
		}
		if app.WebhookURL == "" {
			return apperr.Invalid("webhook-url", "is not set for app %d: set one before sending a test event", appID)
		}
		if err := s.refuseDisabled(ctx, tx, app, "sending a test event"); err != nil {
			return err
		}
		id, err = s.Emit(ctx, tx, Event{AppID: appID, Environment: env, Type: Test,
			Data: map[string]any{"message": "This is a test event from Boxoffice."}})
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, s.Now(), audit.Entry{AccountID: app.AccountID, AppID: appID, Action: audit.WebhookTest,
			Detail: Test + " event " + id + " (" + env + ")"})
	})
	return id, err
}

// Recent returns an app's newest events, at most limit (1 to 100), with
// their delivery attempts.
// Errors: not_found.
func (s *Service) Recent(ctx context.Context, appID int64, limit int) ([]store.WebhookEvent, map[string][]store.WebhookAttempt, error) {
	if _, err := s.app(ctx, s.DB, appID); err != nil {
		return nil, nil, err
	}
	return store.RecentWebhookEvents(ctx, s.DB, appID, min(max(limit, 1), 100))
}

func (s *Service) app(ctx context.Context, db bun.IDB, id int64) (*store.App, error) {
	app, err := store.AppByID(ctx, db, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.NotFound, "app %d does not exist", id)
	}
	return app, err
}
