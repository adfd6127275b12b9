// Package webhook emits signed events to partner apps and delivers them to
// the apps' webhook endpoints. An event row, one delivery row per endpoint
// that takes it and their jobs are written in the transaction of the
// change that causes them, so nothing is lost on a crash; each delivery
// runs as a durable job of its own that retries non-2xx answers and
// timeouts with exponential backoff, at most MaxAttempts times, recording
// every attempt, so no endpoint waits for another.
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
	"slices"
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
	// Enqueue schedules delivery jobs inside tx, one per delivery, in one
	// batch (jobs.Runner.EnqueueDeliveries). A delivery that already has an
	// unfinished job is refused with an error wrapping ErrDeliveryPending.
	Enqueue func(ctx context.Context, tx bun.Tx, ds []Delivery) error
	// Observe, when set, learns each attempt's outcome: delivered, retry or failed.
	Observe func(outcome string)
	// Slots, when set, shares this instance's delivery workers among
	// endpoints (see Slots): a delivery whose endpoint has its share
	// answers ErrAppBusy.
	Slots *Slots
	// DisableAfter is how long deliveries to an endpoint may fail, without
	// one success, before they stop (zero: DefaultDisableAfter).
	DisableAfter time.Duration
	// CheckURL refuses an endpoint URL deliveries could not safely use
	// (provision.Service.CheckWebhookURL: today's webhook URL rules); its
	// details name the field webhook-url.
	CheckURL func(string) error
	// NotifyDisabled, when set, schedules inside tx the email telling the
	// account's owner that deliveries to an endpoint stopped
	// (jobs.Runner.EnqueueEndpointDisabledNotice).
	NotifyDisabled func(ctx context.Context, tx bun.Tx, endpointID string) error
}

// Delivery names one delivery job: an event to one endpoint. Behind is
// true when the endpoint is backlogged (Slots.Backlogged): its job is to
// be worked after other endpoints' waiting jobs.
type Delivery struct {
	EventID    string
	EndpointID string
	Behind     bool
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

// Emit records an event and schedules its deliveries in tx, the
// transaction of the change it reports. It returns the event id.
func (s *Service) Emit(ctx context.Context, tx bun.Tx, e Event) (string, error) {
	return s.EmitWith(ctx, tx, e, func(row *store.WebhookEvent) error { return store.InsertWebhookEvent(ctx, tx, row) })
}

// EmitWith is Emit for a change that writes its own row in the same
// statement as the event's: insert writes the event's row, built here,
// and whatever goes with it (store.InsertCheckIn). The event gets one
// delivery per endpoint of its app and environment whose filter takes
// its type: pending (and a job) for an enabled endpoint, not sent for a
// disabled one; the deliveries are one statement and their jobs one
// batch, however many endpoints there are.
func (s *Service) EmitWith(ctx context.Context, tx bun.Tx, e Event, insert func(*store.WebhookEvent) error) (string, error) {
	now := s.Now().UTC()
	id := newEventID()
	payload, err := json.Marshal(body{ID: id, Type: e.Type, CreatedAt: now.Format(time.RFC3339),
		Environment: e.Environment, Sequence: e.Sequence, Data: e.Data})
	if err != nil {
		return "", fmt.Errorf("webhook: encode %s: %w", e.Type, err)
	}
	targets, err := s.targets(ctx, tx, e.AppID, e.Environment)
	if err != nil {
		return "", err
	}
	row := &store.WebhookEvent{ID: id, AppID: e.AppID, Environment: e.Environment, Type: e.Type,
		OrderID: e.OrderID, Sequence: e.Sequence, Payload: string(payload), Status: store.WebhookPending, CreatedAt: now}
	var (
		ds   []store.WebhookDelivery
		jobs []Delivery
	)
	for _, t := range route(targets, e.Type) {
		d := store.WebhookDelivery{EventID: id, EndpointID: t.ID, Status: store.WebhookPending}
		if reason := t.disabledReason(); reason != "" {
			msg := "not sent: " + reason
			d.Status, d.LastError = store.WebhookNotSent, &msg
			row.LastError = &msg
		} else {
			jobs = append(jobs, Delivery{EventID: id, EndpointID: t.ID, Behind: s.backlogged(t.ID)})
		}
		ds = append(ds, d)
	}
	if len(jobs) == 0 {
		row.Status = store.WebhookFailed
		if len(ds) == 0 {
			msg := fmt.Sprintf("not sent: no webhook endpoint of the %s environment takes %s events", e.Environment, e.Type)
			row.LastError = &msg
		}
	}
	if err := insert(row); err != nil {
		return "", err
	}
	if err := store.InsertWebhookDeliveries(ctx, tx, ds); err != nil {
		return "", err
	}
	if len(jobs) > 0 {
		if err := s.Enqueue(ctx, tx, jobs); err != nil {
			return "", fmt.Errorf("webhook: enqueue %s: %w", id, err)
		}
	}
	return id, nil
}

// backlogged reports whether an endpoint's new deliveries go behind others'.
func (s *Service) backlogged(endpoint string) bool {
	return s.Slots != nil && s.Slots.Backlogged(endpoint)
}

// ErrDeliveryPending is what Enqueue returns, wrapped with where that
// delivery stands, when the event already has a delivery to the endpoint
// that has not finished: an event has one delivery chain per endpoint at
// a time.
var ErrDeliveryPending = errors.New("a delivery of the event is still under way")

// Redeliver schedules another round of delivery of an event to every
// enabled endpoint whose filter takes it; see RedeliverTo.
func (s *Service) Redeliver(ctx context.Context, id string) error {
	return s.RedeliverTo(ctx, id, "")
}

// RedeliverTo schedules another round of delivery (up to MaxAttempts
// attempts) of an event to one endpoint of its app and environment, or,
// when endpointID is "", to every enabled endpoint whose filter takes it,
// and audits it for the event's account. An event whose delivery to one
// of them is still under way (queued, running or waiting to retry) is
// refused with an error wrapping ErrDeliveryPending, rather than given a
// second, concurrent delivery chain; so is a disabled endpoint
// (validation_failed: resume it first).
// Errors: not_found (event, endpoint), validation_failed.
func (s *Service) RedeliverTo(ctx context.Context, id, endpointID string) error {
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
			targets, err := s.targets(ctx, tx, ev.AppID, ev.Environment)
			if err != nil {
				return err
			}
			var to []*target
			if endpointID != "" {
				i := slices.IndexFunc(targets, func(t *target) bool { return t.ID == endpointID })
				if i < 0 {
					return apperr.New(apperr.NotFound, "webhook endpoint %s of the %s environment of app %d does not exist", endpointID, ev.Environment, ev.AppID)
				}
				if !targets[i].takes(ev.Type) {
					return apperr.New(apperr.ValidationFailed, "webhook endpoint %s does not take %s events", endpointID, ev.Type)
				}
				to = targets[i : i+1]
			} else {
				to = route(targets, ev.Type)
			}
			enabled := slices.DeleteFunc(slices.Clone(to), func(t *target) bool { return t.disabledReason() != "" })
			if len(enabled) == 0 {
				if len(to) > 0 {
					return apperr.New(apperr.ValidationFailed, "%s: %s before redelivering an event", capitalize(to[0].disabledReason()), to[0].resumeHint())
				}
				return apperr.New(apperr.ValidationFailed, "no webhook endpoint of the %s environment takes %s events", ev.Environment, ev.Type)
			}
			ended = ev.Status != store.WebhookPending
			jobs := make([]Delivery, len(enabled))
			for i, t := range enabled {
				if err := store.UpsertWebhookDelivery(ctx, tx, id, t.ID); err != nil {
					return err
				}
				jobs[i] = Delivery{EventID: id, EndpointID: t.ID, Behind: s.backlogged(t.ID)}
			}
			if err := store.RefreshWebhookEvent(ctx, tx, id, nil); err != nil {
				return err
			}
			if err := s.Enqueue(ctx, tx, jobs); err != nil {
				return err
			}
			detail := ev.Type + " event " + id + " (" + ev.Environment + ")"
			if endpointID != "" {
				detail += " to " + endpointID
			}
			return audit.Record(ctx, tx, s.Now(), audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: audit.WebhookRedeliver, Detail: detail})
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

// ErrGiveUp marks a delivery that retrying cannot fix (no URL, unsafe URL,
// a disabled or deleted endpoint).
var ErrGiveUp = errors.New("webhook: delivery cannot succeed")

// errNoURL gives up the delivery of an app without a webhook URL.
var errNoURL = fmt.Errorf("%w: the app has no webhook URL", ErrGiveUp)

// Deliver makes one delivery attempt of an event to one endpoint
// (endpointID "" is the endpoint that follows the app's webhook URL in
// the event's environment: jobs queued before endpoints existed) and
// records it. It returns nil on a 2xx answer, an error to be retried
// otherwise; when last is true (the job's final attempt), or for an error
// wrapping ErrGiveUp, the delivery is marked failed. It makes no attempt,
// and records none, when the endpoint already has its share of the
// workers (an error wrapping ErrAppBusy: try again later), when it is
// disabled (the delivery is marked not sent with the reason) or deleted
// (marked failed); those errors wrap ErrGiveUp.
func (s *Service) Deliver(ctx context.Context, eventID, endpointID string, last bool) error {
	ev, err := store.WebhookEventByID(ctx, s.DB, eventID)
	if err != nil {
		return err
	}
	app, err := store.AppByID(ctx, s.DB, ev.AppID)
	if err != nil {
		return err
	}
	t, err := s.targetOf(ctx, ev, app, endpointID)
	if err != nil {
		return err
	}
	d, err := store.WebhookDeliveryOf(ctx, s.DB, ev.ID, t.ID)
	if err != nil {
		return err
	}
	switch d.Status {
	case store.WebhookDelivered:
		return nil // a redelivery raced with a success
	case store.WebhookNotSent:
		return fmt.Errorf("%w: %s", ErrGiveUp, *d.LastError)
	}
	seen := untried
	if s.Slots != nil {
		done, ok := s.Slots.take(t.ID, t.ID)
		if !ok {
			return fmt.Errorf("%w (endpoint %s of app %d)", ErrAppBusy, t.ID, app.ID)
		}
		defer func() { done(seen) }()
	}
	if reason := t.disabledReason(); reason != "" {
		return s.notSent(ctx, ev, t, reason)
	}
	attempt := d.Attempts + 1 // counted across redeliveries
	start := s.Now()
	status, derr := s.send(ctx, t, ev)
	latency := s.Now().Sub(start)
	rec := &store.WebhookAttempt{EventID: ev.ID, EndpointID: t.ID, Attempt: attempt, URL: t.url,
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
			if t.health != nil { // a success ends the streak
				_, err = store.ResetWebhookHealth(ctx, tx, t.ID)
			}
		default:
			disabled, err = s.countFailure(ctx, tx, t, *rec.Error)
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
	s.Log.Info("webhook delivery", "event_id", ev.ID, "type", ev.Type, "app_id", ev.AppID, "endpoint_id", t.ID,
		"attempt", attempt, "status", status, "latency_ms", rec.LatencyMS, "outcome", outcome, "error", rec.Error)
	if disabled != nil {
		s.Log.Warn("webhook endpoint disabled", "app_id", app.ID, "endpoint_id", t.ID, "failures", disabled.Failures,
			"failing_since", disabled.FailingSince.UTC().Format(time.RFC3339))
	}
	return derr
}

// targetOf returns the endpoint a delivery job names; one deleted since
// marks the delivery failed and answers an error wrapping ErrGiveUp.
func (s *Service) targetOf(ctx context.Context, ev *store.WebhookEvent, app *store.App, endpointID string) (*target, error) {
	targets, err := s.targets(ctx, s.DB, ev.AppID, ev.Environment)
	if err != nil {
		return nil, err
	}
	for _, t := range targets {
		if t.ID == endpointID || (endpointID == "" && t.followsApp()) {
			if endpointID == "" {
				// A job queued before endpoints: its delivery row is made now.
				if err := store.UpsertWebhookDelivery(ctx, s.DB, ev.ID, t.ID); err != nil {
					return nil, err
				}
			}
			return t, nil
		}
	}
	reason := "not sent: the webhook endpoint was deleted"
	if endpointID != "" {
		if err := store.SetWebhookDelivery(ctx, s.DB, ev.ID, endpointID, store.WebhookFailed, reason); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrGiveUp, reason)
}

// send signs and posts an event to an endpoint; it returns the HTTP status
// (0 when none).
func (s *Service) send(ctx context.Context, t *target, ev *store.WebhookEvent) (int, error) {
	if t.url == "" {
		return 0, errNoURL
	}
	u, err := url.Parse(t.url)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(s.AllowPrivate && u.Scheme == "http")) {
		return 0, fmt.Errorf("%w: the webhook URL must be https://", ErrGiveUp)
	}
	req, err := newDeliveryRequest(ctx, t.url, t.secrets(s.Now()), ev.ID, ev.Type, []byte(ev.Payload), s.Now())
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
// their endpoints and signature code: it goes to every enabled endpoint of
// env whose filter takes webhook.test.
// Errors: validation_failed (env; webhook-url when the app has no
// endpoint in env; when every endpoint that would take it is disabled, or
// none takes it), not_found.
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
		targets, err := s.targets(ctx, tx, appID, env)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(targets, (*target).visible) {
			return apperr.Invalid("webhook-url", "is not set for app %d: set one before sending a test event", appID)
		}
		to := route(targets, Test)
		if len(to) == 0 {
			return apperr.New(apperr.ValidationFailed, "no webhook endpoint of the %s environment of app %d takes %s events", env, appID, Test)
		}
		if !slices.ContainsFunc(to, func(t *target) bool { return t.disabledReason() == "" }) {
			return apperr.New(apperr.ValidationFailed, "%s: %s before sending a test event", capitalize(to[0].disabledReason()), to[0].resumeHint())
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
	p, err := s.RecentPage(ctx, appID, limit, "")
	if err != nil {
		return nil, nil, err
	}
	return p.Events, p.Attempts, nil
}

// RecentEvents is a page of an app's events of both environments, newest
// first, with their attempts; NextCursor continues after its last event,
// "" on the last page.
type RecentEvents struct {
	Events     []store.WebhookEvent
	Attempts   map[string][]store.WebhookAttempt
	NextCursor string
}

// RecentPage returns up to limit (1 to 100) of an app's newest events of
// both environments, after the event cursor names ("" for the newest),
// with their attempts: two statements whatever the page.
// Errors: not_found (the app), validation_failed (events: a cursor no
// page gave).
func (s *Service) RecentPage(ctx context.Context, appID int64, limit int, cursor string) (*RecentEvents, error) {
	if _, err := s.app(ctx, s.DB, appID); err != nil {
		return nil, err
	}
	var before time.Time
	var beforeID string
	if cursor != "" {
		var ok bool
		if before, beforeID, ok = parseCursor(cursor); !ok {
			return nil, apperr.Invalid("events", "is not a page of this log: open the log from its first page")
		}
	}
	limit = min(max(limit, 1), 100)
	events, attempts, err := store.RecentWebhookEvents(ctx, s.DB, appID, before, beforeID, limit+1)
	if err != nil {
		return nil, err
	}
	p := &RecentEvents{Events: events, Attempts: attempts}
	if len(events) > limit {
		p.Events = events[:limit]
		delete(attempts, events[limit].ID)
		last := p.Events[limit-1]
		p.NextCursor = cursorOf(last.CreatedAt, last.ID)
	}
	return p, nil
}

func (s *Service) app(ctx context.Context, db bun.IDB, id int64) (*store.App, error) {
	app, err := store.AppByID(ctx, db, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.NotFound, "app %d does not exist", id)
	}
	return app, err
}
