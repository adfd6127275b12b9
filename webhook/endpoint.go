package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Endpoint statuses and why one is disabled (spec/webhook-endpoints.md
// section 1).
const (
	StatusEnabled   = "enabled"
	StatusDisabled  = "disabled"
	DisabledFailing = "failing"
	DisabledManual  = "manual"
)

// MaxEndpoints is how many endpoints an app may have per environment.
const MaxEndpoints = 16

// MaxDescription is the longest endpoint description, in characters.
const MaxDescription = 200

// SecretOverlap is how long deliveries after a rotation are also signed
// with the secret it replaced.
const SecretOverlap = 24 * time.Hour

// Endpoint is the Webhook endpoint object of the API
// (spec/webhook-endpoints.md section 1), which REST and GraphQL both
// serialize.
type Endpoint struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Environment    string   `json:"environment"`
	EnabledEvents  []string `json:"enabled_events"`
	Description    *string  `json:"description"`
	Status         string   `json:"status"`
	DisabledReason *string  `json:"disabled_reason"`
	// Secret is set only in the answer that created or rotated it.
	Secret    *string `json:"secret,omitempty"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

// EndpointInput creates or changes an endpoint; nil fields are absent
// (a change leaves them as they are). Description set to an empty string
// on a change clears it.
type EndpointInput struct {
	URL           *string
	EnabledEvents []string
	Description   *string
	Status        *string
}

// NewEndpointID returns a fresh endpoint id: "we_" and 24 hex digits.
func NewEndpointID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "we_" + hex.EncodeToString(b)
}

// AppEndpoints returns the two endpoints that follow a new app's webhook
// URL and secret (test and live, every event type), for the app's
// creation to insert.
func AppEndpoints(appID int64, now time.Time) []*store.WebhookEndpoint {
	var out []*store.WebhookEndpoint
	for _, env := range []string{store.EnvTest, store.EnvLive} {
		out = append(out, &store.WebhookEndpoint{ID: NewEndpointID(), AppID: appID, Environment: env,
			EnabledEvents: []string{"*"}, CreatedAt: now, UpdatedAt: now})
	}
	return out
}

func (t *target) view() *Endpoint {
	status, why := t.status()
	events := t.EnabledEvents
	if events == nil {
		events = []string{}
	}
	return &Endpoint{ID: t.ID, URL: t.url, Environment: t.Environment, EnabledEvents: events, Description: t.Description,
		Status: status, DisabledReason: why, CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339)}
}

// invalid is a validation_failed answer naming one field.
func invalid(field, format string, args ...any) *apperr.Error {
	msg := fmt.Sprintf(format, args...)
	return &apperr.Error{Code: apperr.ValidationFailed, Message: "The request has invalid fields: " + field + " " + msg + ".",
		Details: apperr.Details{field: {msg}}}
}

// checkEvents refuses a filter that is empty, names an unknown type, or
// mixes "*" with types.
func checkEvents(events []string) error {
	if len(events) == 0 {
		return invalid("enabled_events", "must name at least one event type, or \"*\" for every type")
	}
	for _, e := range events {
		if e == "*" {
			if len(events) > 1 {
				return invalid("enabled_events", "\"*\" already takes every type; send it alone")
			}
			continue
		}
		if !slices.Contains(Types, e) {
			return invalid("enabled_events", "%q is not an event type (%s)", clip(e), strings.Join(Types, ", "))
		}
	}
	return nil
}

// clip shortens hostile input quoted back in a message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func (s *Service) checkURL(raw string) error {
	if raw == "" {
		return invalid("url", "is required")
	}
	if s.CheckURL == nil {
		return nil
	}
	err := s.CheckURL(raw)
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Code == apperr.ValidationFailed {
		msg := strings.Join(ae.Details["webhook-url"], "; ")
		return invalid("url", "%s", msg)
	}
	return err
}

func checkDescription(d *string) error {
	if d != nil && utf8.RuneCountInString(*d) > MaxDescription {
		return invalid("description", "must be at most %d characters", MaxDescription)
	}
	if d != nil && !utf8.ValidString(*d) {
		return invalid("description", "must be valid text")
	}
	return nil
}

// endpoint returns the app's endpoint id of env, as the caller may see it.
// Errors: webhook_endpoint_not_found, environment_mismatch.
func (s *Service) endpoint(ctx context.Context, db bun.IDB, appID int64, env, id string) (*target, error) {
	if err := auth.CheckEnv(env); err != nil {
		return nil, err
	}
	notFound := apperr.New(apperr.WebhookEndpointNotFound, "Webhook endpoint %s was not found for this app.", clip(id))
	if !strings.HasPrefix(id, "we_") || len(id) > 64 {
		return nil, notFound
	}
	ep, err := store.WebhookEndpointByID(ctx, db, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ep.AppID != appID) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	ts, err := s.targets(ctx, db, appID, ep.Environment)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(ts, func(t *target) bool { return t.ID == id })
	if i < 0 || !ts[i].visible() {
		return nil, notFound
	}
	if ep.Environment != env {
		return nil, apperr.New(apperr.EnvironmentMismatch,
			"Webhook endpoint %s belongs to the %s environment; use a %s key to manage it.", id, ep.Environment, ep.Environment)
	}
	return ts[i], nil
}

// Endpoints returns an app's endpoints of env, oldest first (no secrets).
func (s *Service) Endpoints(ctx context.Context, appID int64, env string) ([]*Endpoint, error) {
	if err := auth.CheckEnv(env); err != nil {
		return nil, err
	}
	ts, err := s.targets(ctx, s.DB, appID, env)
	if err != nil {
		return nil, err
	}
	out := []*Endpoint{}
	for _, t := range ts {
		if t.visible() {
			out = append(out, t.view())
		}
	}
	return out, nil
}

// Endpoint returns one endpoint of the app (no secret).
// Errors: webhook_endpoint_not_found, environment_mismatch.
func (s *Service) Endpoint(ctx context.Context, appID int64, env, id string) (*Endpoint, error) {
	t, err := s.endpoint(ctx, s.DB, appID, env, id)
	if err != nil {
		return nil, err
	}
	return t.view(), nil
}

// CreateEndpoint adds an endpoint to an app's environment and returns it
// with its secret, shown this once.
// Errors: validation_failed (url, enabled_events, description; the 17th
// endpoint of an environment).
func (s *Service) CreateEndpoint(ctx context.Context, appID int64, env string, in EndpointInput) (*Endpoint, error) {
	if err := auth.CheckEnv(env); err != nil {
		return nil, err
	}
	url := ""
	if in.URL != nil {
		url = *in.URL
	}
	if err := s.checkURL(url); err != nil {
		return nil, err
	}
	if in.EnabledEvents == nil {
		in.EnabledEvents = []string{"*"}
	}
	if err := checkEvents(in.EnabledEvents); err != nil {
		return nil, err
	}
	if err := checkDescription(in.Description); err != nil {
		return nil, err
	}
	if in.Status != nil {
		return nil, invalid("status", "is set with an update, once the endpoint exists")
	}
	now := s.Now().UTC()
	secret := NewSecret()
	var out *Endpoint
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := store.LockApp(ctx, tx, appID); err != nil {
			return err
		}
		ts, err := s.targets(ctx, tx, appID, env)
		if err != nil {
			return err
		}
		if n := countVisible(ts); n >= MaxEndpoints {
			return &apperr.Error{Code: apperr.ValidationFailed,
				Message: fmt.Sprintf("This app already has %d webhook endpoints in the %s environment, the most it may have.", n, env),
				Details: apperr.Details{"url": {fmt.Sprintf("the app already has %d endpoints in the %s environment, the most it may have", n, env)}}}
		}
		ep := &store.WebhookEndpoint{ID: NewEndpointID(), AppID: appID, Environment: env, URL: &url, Secret: &secret,
			EnabledEvents: in.EnabledEvents, Description: nonEmpty(in.Description), CreatedAt: now, UpdatedAt: now}
		if err := store.InsertWebhookEndpoint(ctx, tx, ep); err != nil {
			return err
		}
		out = (&target{WebhookEndpoint: *ep, url: url, secret: secret}).view()
		out.Secret = &secret
		return s.audit(ctx, tx, appID, audit.WebhookEndpoint, fmt.Sprintf("created %s (%s) to %s", ep.ID, env, hostOf(url)))
	})
	return out, err
}

func countVisible(ts []*target) int {
	n := 0
	for _, t := range ts {
		if t.visible() {
			n++
		}
	}
	return n
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// UpdateEndpoint changes an endpoint's URL, filter, description or
// status: enabled resumes one disabled for failing or by hand, disabled
// stops its deliveries. An endpoint that followed the app's webhook URL
// and is given a URL of its own no longer follows it.
// Errors: webhook_endpoint_not_found, environment_mismatch,
// validation_failed (url, enabled_events, description, status).
func (s *Service) UpdateEndpoint(ctx context.Context, appID int64, env, id string, in EndpointInput) (*Endpoint, error) {
	if in.URL != nil {
		if err := s.checkURL(*in.URL); err != nil {
			return nil, err
		}
	}
	if in.EnabledEvents != nil {
		if err := checkEvents(in.EnabledEvents); err != nil {
			return nil, err
		}
	}
	if err := checkDescription(in.Description); err != nil {
		return nil, err
	}
	if in.Status != nil && *in.Status != StatusEnabled && *in.Status != StatusDisabled {
		return nil, invalid("status", "must be enabled or disabled")
	}
	var out *Endpoint
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		t, err := s.endpoint(ctx, tx, appID, env, id)
		if err != nil {
			return err
		}
		var did []string
		if in.URL != nil && *in.URL != t.url {
			t.WebhookEndpoint.URL, t.url = in.URL, *in.URL
			if t.WebhookEndpoint.Secret == nil {
				t.WebhookEndpoint.Secret = &t.secret // its own from now on, as its URL
			}
			did = append(did, "url set to "+hostOf(t.url))
		}
		if in.EnabledEvents != nil {
			t.EnabledEvents = in.EnabledEvents
			did = append(did, "events "+strings.Join(in.EnabledEvents, ","))
		}
		if in.Description != nil {
			t.Description = nonEmpty(in.Description)
			did = append(did, "description")
		}
		if in.Status != nil {
			switch *in.Status {
			case StatusEnabled:
				t.DisabledManually = false
				if t.health != nil {
					if _, err := store.ResetWebhookHealth(ctx, tx, t.ID); err != nil {
						return err
					}
					t.health = nil
				}
			case StatusDisabled:
				t.DisabledManually = true
			}
			did = append(did, "status "+*in.Status)
		}
		t.UpdatedAt = s.Now().UTC()
		if err := store.UpdateWebhookEndpoint(ctx, tx, &t.WebhookEndpoint); err != nil {
			return err
		}
		out = t.view()
		return s.audit(ctx, tx, appID, audit.WebhookEndpoint, fmt.Sprintf("updated %s (%s): %s", id, env, strings.Join(did, "; ")))
	})
	return out, err
}

// DeleteEndpoint deletes an endpoint; its pending deliveries stop (their
// jobs find it gone), its deliveries stay in the event log.
// Errors: webhook_endpoint_not_found, environment_mismatch.
func (s *Service) DeleteEndpoint(ctx context.Context, appID int64, env, id string) error {
	return s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := s.endpoint(ctx, tx, appID, env, id); err != nil {
			return err
		}
		if err := store.DeleteWebhookEndpoint(ctx, tx, id); err != nil {
			return err
		}
		return s.audit(ctx, tx, appID, audit.WebhookEndpoint, fmt.Sprintf("deleted %s (%s)", id, env))
	})
}

// RotateEndpointSecret gives an endpoint a new secret, returned this once;
// deliveries for the next SecretOverlap are signed with both.
// Errors: webhook_endpoint_not_found, environment_mismatch.
func (s *Service) RotateEndpointSecret(ctx context.Context, appID int64, env, id string) (*Endpoint, error) {
	var out *Endpoint
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		t, err := s.endpoint(ctx, tx, appID, env, id)
		if err != nil {
			return err
		}
		now := s.Now().UTC()
		old, secret := t.secret, NewSecret()
		t.PreviousSecret, t.PreviousSecretUntil = &old, now.Add(SecretOverlap)
		t.WebhookEndpoint.Secret, t.secret = &secret, secret
		t.UpdatedAt = now
		if err := store.UpdateWebhookEndpoint(ctx, tx, &t.WebhookEndpoint); err != nil {
			return err
		}
		out = t.view()
		out.Secret = &secret
		return s.audit(ctx, tx, appID, audit.WebhookEndpoint, fmt.Sprintf("rotated the secret of %s (%s)", id, env))
	})
	return out, err
}

// EndpointOwner returns the app and environment of an endpoint, for an
// operator who names it by id alone.
// Errors: webhook_endpoint_not_found.
func (s *Service) EndpointOwner(ctx context.Context, id string) (int64, string, error) {
	ep, err := store.WebhookEndpointByID(ctx, s.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return 0, "", apperr.New(apperr.WebhookEndpointNotFound, "Webhook endpoint %s does not exist.", clip(id))
	}
	if err != nil {
		return 0, "", err
	}
	return ep.AppID, ep.Environment, nil
}

// audit records a change of an app's endpoints for its account.
func (s *Service) audit(ctx context.Context, tx bun.Tx, appID int64, action, detail string) error {
	app, err := s.app(ctx, tx, appID)
	if err != nil {
		return err
	}
	return audit.Record(ctx, tx, s.Now(), audit.Entry{AccountID: app.AccountID, AppID: appID, Action: action, Detail: detail})
}

// hostOf names a URL by scheme and host only: a path or query may carry
// the receiver's own secret.
func hostOf(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "a URL"
	}
	host, _, _ := strings.Cut(rest, "/")
	return scheme + "://" + host + "/…"
}
