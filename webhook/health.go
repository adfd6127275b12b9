package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// An endpoint's health: every failed delivery to an app's webhook URL adds
// to its failure streak (store.WebhookHealth) and a success ends it. A
// streak that lasts DisabledAfter, with at least disableMinFailures
// failures, disables the endpoint, as Stripe and Svix do after days of
// failures: events are still recorded, but marked failed without being
// sent, and the partner is told in the portal until they resume
// deliveries or set another URL.

// DefaultDisableAfter is DisableAfter by default (WEBHOOK_DISABLE_AFTER):
// three days, as Stripe gives a failing endpoint before disabling it.
const DefaultDisableAfter = 72 * time.Hour

// disableMinFailures is the fewest failures in a row that disable an
// endpoint: a quiet endpoint that failed twice, days apart, keeps its
// deliveries.
const disableMinFailures = 10

// countFailure adds a failed delivery to the app's streak in tx and, when
// the streak has lasted DisableAfter and counts disableMinFailures, stops
// deliveries to the URL. It returns the streak when this failure disabled
// it, nil otherwise.
func (s *Service) countFailure(ctx context.Context, tx bun.Tx, app *store.App, errText string) (*store.WebhookHealth, error) {
	now := s.Now().UTC()
	h, err := store.RecordWebhookFailure(ctx, tx, app.ID, app.WebhookURL, errText, now)
	if err != nil || !h.DisabledAt.IsZero() || h.Failures < disableMinFailures || now.Sub(h.FailingSince) < s.DisabledAfter() {
		return nil, err
	}
	did, err := store.DisableWebhookEndpoint(ctx, tx, app.ID, now)
	if err != nil || !did {
		return nil, err
	}
	return h, nil
}

// health returns the app's failure streak, nil when it has none.
func (s *Service) health(ctx context.Context, db bun.IDB, appID int64) (*store.WebhookHealth, error) {
	h, err := store.WebhookHealthOf(ctx, db, appID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return h, err
}

// notSent marks an event failed, with no attempt, because deliveries to
// its app's URL are disabled, and returns an error wrapping ErrGiveUp.
func (s *Service) notSent(ctx context.Context, ev *store.WebhookEvent, h *store.WebhookHealth) error {
	reason := "not sent: " + disabledReason(h)
	if err := store.FailWebhookEvent(ctx, s.DB, ev.ID, reason); err != nil {
		return err
	}
	if s.Observe != nil {
		s.Observe("failed")
	}
	s.Log.Info("webhook delivery", "event_id", ev.ID, "type", ev.Type, "app_id", ev.AppID,
		"attempt", 0, "outcome", store.WebhookFailed, "error", reason)
	return fmt.Errorf("%w: %s", ErrGiveUp, reason)
}

// disabledReason says why deliveries to an endpoint are stopped.
func disabledReason(h *store.WebhookHealth) string {
	return fmt.Sprintf("deliveries to the webhook URL are disabled since %s, after %d failed deliveries in a row since %s",
		h.DisabledAt.UTC().Format(time.RFC3339), h.Failures, h.FailingSince.UTC().Format(time.RFC3339))
}

// refuseDisabled refuses doing something that would deliver to the app's
// URL while deliveries to it are disabled.
// Errors: validation_failed.
func (s *Service) refuseDisabled(ctx context.Context, db bun.IDB, app *store.App, doing string) error {
	h, err := s.health(ctx, db, app.ID)
	if err != nil || !h.Disabled(app.WebhookURL) {
		return err
	}
	return apperr.New(apperr.ValidationFailed, "%s: resume deliveries (or set another webhook URL) before %s",
		capitalize(disabledReason(h)), doing)
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// Health returns the failure streak of an app's webhook endpoint: nil when
// its last delivery succeeded or none has failed. A streak of another URL
// than the app's (it was changed since) is not returned.
// Errors: not_found.
func (s *Service) Health(ctx context.Context, appID int64) (*store.WebhookHealth, error) {
	app, err := s.app(ctx, s.DB, appID)
	if err != nil {
		return nil, err
	}
	h, err := s.health(ctx, s.DB, appID)
	if err != nil || h == nil || h.URL != app.WebhookURL {
		return nil, err
	}
	return h, nil
}

// DisabledAfter is how long an endpoint may fail before deliveries to it
// stop: DisableAfter, or DefaultDisableAfter.
func (s *Service) DisabledAfter() time.Duration {
	if s.DisableAfter > 0 {
		return s.DisableAfter
	}
	return DefaultDisableAfter
}

// Resume starts deliveries to an app's webhook URL again after they were
// disabled, and audits it; events that failed meanwhile can be redelivered.
// Errors: not_found, validation_failed (deliveries are not disabled).
func (s *Service) Resume(ctx context.Context, appID int64) error {
	return s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, appID)
		if err != nil {
			return err
		}
		h, err := s.health(ctx, tx, appID)
		if err != nil {
			return err
		}
		if !h.Disabled(app.WebhookURL) {
			return apperr.New(apperr.ValidationFailed, "Deliveries to the webhook URL of app %d are not disabled.", appID)
		}
		if _, err := store.ResetWebhookHealth(ctx, tx, appID); err != nil {
			return err
		}
		return audit.Record(ctx, tx, s.Now(), audit.Entry{AccountID: app.AccountID, AppID: appID, Action: audit.WebhookResume,
			Detail: fmt.Sprintf("after %d failed deliveries in a row since %s", h.Failures, h.FailingSince.UTC().Format(time.RFC3339))})
	})
}
