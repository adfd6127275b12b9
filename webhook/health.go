package webhook

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// An endpoint's health: every failed delivery to an endpoint adds to its
// failure streak (store.WebhookHealth) and a success ends it. A streak that
// lasts DisabledAfter, with at least disableMinFailures failures, disables
// the endpoint, as Stripe and Svix do after days of failures: events are
// still recorded, but as not sent to it, the account's owner is emailed,
// and the partner is told in the portal until they resume deliveries or
// set another URL. Each endpoint has its own streak: a failing staging
// receiver disables nothing else.

// DefaultDisableAfter is DisableAfter by default (WEBHOOK_DISABLE_AFTER):
// three days, as Stripe gives a failing endpoint before disabling it.
const DefaultDisableAfter = 72 * time.Hour

// disableMinFailures is the fewest failures in a row that disable an
// endpoint: a quiet endpoint that failed twice, days apart, keeps its
// deliveries.
const disableMinFailures = 10

// countFailure adds a failed delivery to the endpoint's streak in tx and,
// when the streak has lasted DisableAfter and counts disableMinFailures,
// stops deliveries to its URL and schedules the owner's email. It returns
// the streak when this failure disabled it, nil otherwise.
func (s *Service) countFailure(ctx context.Context, tx bun.Tx, t *target, errText string) (*store.WebhookHealth, error) {
	now := s.Now().UTC()
	h, err := store.RecordWebhookFailure(ctx, tx, t.ID, t.url, errText, now)
	if err != nil || !h.DisabledAt.IsZero() || h.Failures < disableMinFailures || now.Sub(h.FailingSince) < s.DisabledAfter() {
		return nil, err
	}
	did, err := store.DisableWebhookEndpoint(ctx, tx, t.ID, now)
	if err != nil || !did {
		return nil, err
	}
	if s.NotifyDisabled != nil {
		if err := s.NotifyDisabled(ctx, tx, t.ID); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// notSent marks a delivery not sent, with no attempt, because its endpoint
// is disabled, and returns an error wrapping ErrGiveUp.
func (s *Service) notSent(ctx context.Context, ev *store.WebhookEvent, t *target, why string) error {
	reason := "not sent: " + why
	if err := store.SetWebhookDelivery(ctx, s.DB, ev.ID, t.ID, store.WebhookNotSent, reason); err != nil {
		return err
	}
	if s.Observe != nil {
		s.Observe("failed")
	}
	s.Log.Info("webhook delivery", "event_id", ev.ID, "type", ev.Type, "app_id", ev.AppID, "endpoint_id", t.ID,
		"attempt", 0, "outcome", store.WebhookNotSent, "error", reason)
	return fmt.Errorf("%w: %s", ErrGiveUp, reason)
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// Health returns the failure streak of an app's webhook URL: of the
// endpoints that follow it, a disabled one, else the one with the most
// failures; nil when none is failing. A streak of another URL than the
// app's (it was changed since) is not returned.
// Errors: not_found.
func (s *Service) Health(ctx context.Context, appID int64) (*store.WebhookHealth, error) {
	app, err := s.app(ctx, s.DB, appID)
	if err != nil {
		return nil, err
	}
	var worst *store.WebhookHealth
	for _, env := range []string{store.EnvTest, store.EnvLive} {
		ts, err := s.targets(ctx, s.DB, appID, env)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			h := t.health
			if !t.followsApp() || h == nil || h.URL != app.WebhookURL {
				continue
			}
			if worst == nil || (h.Disabled(app.WebhookURL) && !worst.Disabled(app.WebhookURL)) ||
				(h.Disabled(app.WebhookURL) == worst.Disabled(app.WebhookURL) && h.Failures > worst.Failures) {
				worst = h
			}
		}
	}
	return worst, nil
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
// disabled (every endpoint that follows it and was disabled for failing),
// and audits it; events that failed meanwhile can be redelivered.
// Errors: not_found, validation_failed (deliveries are not disabled).
func (s *Service) Resume(ctx context.Context, appID int64) error {
	return s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		app, err := s.app(ctx, tx, appID)
		if err != nil {
			return err
		}
		var resumed *store.WebhookHealth
		for _, env := range []string{store.EnvTest, store.EnvLive} {
			ts, err := s.targets(ctx, tx, appID, env)
			if err != nil {
				return err
			}
			for _, t := range ts {
				if !t.followsApp() || !t.health.Disabled(app.WebhookURL) {
					continue
				}
				if _, err := store.ResetWebhookHealth(ctx, tx, t.ID); err != nil {
					return err
				}
				if resumed == nil || t.health.Failures > resumed.Failures {
					resumed = t.health
				}
			}
		}
		if resumed == nil {
			return apperr.New(apperr.ValidationFailed, "Deliveries to the webhook URL of app %d are not disabled.", appID)
		}
		return audit.Record(ctx, tx, s.Now(), audit.Entry{AccountID: app.AccountID, AppID: appID, Action: audit.WebhookResume,
			Detail: fmt.Sprintf("after %d failed deliveries in a row since %s", resumed.Failures, resumed.FailingSince.UTC().Format(time.RFC3339))})
	})
}
