package webhook

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// target is an endpoint as deliveries see it: its URL and secret resolved
// (from the app's where it follows the app's webhook URL) and its failure
// streak.
type target struct {
	store.WebhookEndpoint
	url       string
	secret    string
	appSecret string
	health    *store.WebhookHealth
}

// followsApp reports whether the endpoint's URL is the app's webhook URL.
func (t *target) followsApp() bool { return t.WebhookEndpoint.URL == nil }

// visible reports whether the endpoint is one the partner has: an
// endpoint that follows an app without a webhook URL is not.
func (t *target) visible() bool { return t.url != "" || !t.followsApp() }

// takes reports whether the endpoint's filter takes events of typ.
func (t *target) takes(typ string) bool {
	return slices.Contains(t.EnabledEvents, "*") || slices.Contains(t.EnabledEvents, typ)
}

// disabledReason says why deliveries to the endpoint are stopped; "" when
// they are not.
func (t *target) disabledReason() string {
	switch {
	case t.DisabledManually:
		return fmt.Sprintf("webhook endpoint %s is disabled", t.ID)
	case t.health.Disabled(t.url):
		h := t.health
		what := "the webhook URL"
		if !t.followsApp() {
			what = "webhook endpoint " + t.ID
		}
		return fmt.Sprintf("deliveries to %s are disabled since %s, after %d failed deliveries in a row since %s", what,
			h.DisabledAt.UTC().Format(time.RFC3339), h.Failures, h.FailingSince.UTC().Format(time.RFC3339))
	}
	return ""
}

// resumeHint says what a partner does about a disabled endpoint.
func (t *target) resumeHint() string {
	if t.followsApp() && !t.DisabledManually {
		return "resume deliveries (or set another webhook URL)"
	}
	return "enable the endpoint"
}

// status is the endpoint's status and, when disabled, why: manual or
// failing.
func (t *target) status() (string, *string) {
	var why string
	switch {
	case t.DisabledManually:
		why = DisabledManual
	case t.health.Disabled(t.url):
		why = DisabledFailing
	default:
		return StatusEnabled, nil
	}
	return StatusDisabled, &why
}

// secrets are the secrets a delivery at now is signed with: the current
// one, and the one before a rotation during the overlap.
func (t *target) secrets(now time.Time) []string {
	out := []string{t.secret}
	if t.PreviousSecret != nil && now.Before(t.PreviousSecretUntil) {
		out = append(out, *t.PreviousSecret)
	}
	return out
}

// targets returns an app's endpoints of env with their streaks, oldest
// first: three statements, whatever the number of endpoints.
func (s *Service) targets(ctx context.Context, db bun.IDB, appID int64, env string) ([]*target, error) {
	eps, err := store.WebhookEndpointsOf(ctx, db, appID, env)
	if err != nil || len(eps) == 0 {
		return nil, err
	}
	app, err := store.AppByID(ctx, db, appID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(eps))
	for i := range eps {
		ids[i] = eps[i].ID
	}
	hs, err := store.WebhookHealthOfEndpoints(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*target, len(eps))
	for i := range eps {
		t := &target{WebhookEndpoint: eps[i], url: app.WebhookURL, secret: app.WebhookSecret, appSecret: app.WebhookSecret, health: hs[eps[i].ID]}
		if eps[i].URL != nil {
			t.url = *eps[i].URL
		}
		if eps[i].Secret != nil {
			t.secret = *eps[i].Secret
		}
		out[i] = t
	}
	return out, nil
}

// route picks the endpoints an event of typ goes to: every visible
// endpoint whose filter takes it. An app with no visible endpoint in the
// environment (no webhook URL, no endpoint made) still records where the
// event would have gone: the endpoint that follows the app's (absent)
// URL, whose delivery gives up at once saying there is no webhook URL.
func route(ts []*target, typ string) []*target {
	var out []*target
	visible := false
	for _, t := range ts {
		if !t.visible() {
			continue
		}
		visible = true
		if t.takes(typ) {
			out = append(out, t)
		}
	}
	if !visible {
		for _, t := range ts {
			if t.followsApp() && t.takes(typ) {
				return []*target{t}
			}
		}
	}
	return out
}
