package portal

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/go-chi/chi/v5"
)

// appView is an app's page as the template shows it.
type appView struct {
	*store.App
	Suspended bool
	// Webhook is the failure streak of the webhook URL; nil when healthy.
	Webhook   *healthView
	Keys      []keyRow
	Events    []eventRow
	Orders    []orderRow
	Env       string
	Reference string
	Email     string
	// Review is set when only orders flagged for refund review are listed.
	Review bool
	// OlderEvents and NewestEvents are the links to the delivery log's
	// next page and back to its first; "" when there is none.
	OlderEvents, NewestEvents string
}

type keyRow struct {
	Env, Masked, Created string
	Active               bool
}

// orderRow is one order of the recent orders; Review marks one whose
// payment is flagged for a refund review.
type orderRow struct {
	Reference, Status, Total, Created, Updated string
	Review                                     bool
}

// healthView is what the app page says of a webhook URL whose deliveries
// fail: since when, how many in a row, why the last one failed, and when
// deliveries stop (Until) or stopped (DisabledAt).
type healthView struct {
	Disabled                               bool
	Failures                               int64
	Since, Until, DisabledAt, For, Problem string
}

func newHealthView(h *store.WebhookHealth, after time.Duration) *healthView {
	if h == nil {
		return nil
	}
	return &healthView{Disabled: !h.DisabledAt.IsZero(), Failures: h.Failures, Since: when(h.FailingSince),
		Until: when(h.FailingSince.Add(after)), DisabledAt: when(h.DisabledAt), For: days(after),
		Problem: lastProblem(h.LastError)}
}

// lastProblem says why a failed delivery failed: the receiver's status, or
// why there was no answer.
func lastProblem(err string) string {
	if code, ok := strings.CutPrefix(err, "receiver answered "); ok {
		return "HTTP " + code
	}
	return deliveryProblem(err)
}

// days says a duration in whole days, or hours when shorter.
func days(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", int(d.Hours())/24)
	}
	return fmt.Sprintf("%d hours", max(int(d.Hours()), 1))
}

// newAppView converts what AppPage read for the template; query is the
// page's own, which the log's links keep (the orders shown stay).
func newAppView(p *accounts.AppPage, query url.Values) *appView {
	v := &appView{App: p.App, Suspended: p.App.Status == store.AppSuspended, Env: p.Query.Env, Reference: p.Query.Reference,
		Email: p.Query.Email, Review: p.Query.Review, Webhook: newHealthView(p.Health, p.DisableAfter),
		Events: eventRows(p.Events, p.Attempts, false)}
	logPage := func(cursor string) string {
		q := url.Values{}
		for k, vs := range query {
			if k != "events" && k != "done" {
				q[k] = vs
			}
		}
		if cursor != "" {
			q.Set("events", cursor)
		}
		if len(q) == 0 {
			return appPath(p.App.ID) + "#deliveries-title"
		}
		return appPath(p.App.ID) + "?" + q.Encode() + "#deliveries-title"
	}
	if p.NextEvents != "" {
		v.OlderEvents = logPage(p.NextEvents)
	}
	if p.Query.Events != "" {
		v.NewestEvents = logPage("")
	}
	for _, env := range []string{store.EnvTest, store.EnvLive} {
		row := keyRow{Env: env}
		if k := p.Keys[env]; k != nil {
			row.Active, row.Masked, row.Created = true, auth.Prefix(env)+"…"+k.Hint, when(k.CreatedAt)
		}
		v.Keys = append(v.Keys, row)
	}
	for _, o := range p.Orders {
		v.Orders = append(v.Orders, orderRow{Reference: o.Reference, Status: o.Status,
			Total:   o.Currency + " " + catalog.FormatAmount(o.TotalAmount),
			Created: when(o.CreatedAt), Updated: when(o.UpdatedAt), Review: o.RefundReview})
	}
	return v
}

// deliveryProblem says why a delivery got no answer, in words that name
// nothing of the service's own network (resolvers, addresses).
func deliveryProblem(err string) string {
	for _, p := range []struct{ in, say string }{
		{"are disabled", "deliveries to the webhook URL were disabled"},
		{"no webhook URL", "the app has no webhook URL"},
		{"must be https", "the webhook URL must be https://"},
		{"not a public address", "the URL leads to an address that is not public"},
		{"no such host", "the host name does not resolve"},
		{"connection refused", "the connection was refused"},
		{"Client.Timeout", "no answer within 10 s"},
		{"deadline exceeded", "no answer within 10 s"},
		{"certificate", "the receiver's TLS certificate was not accepted"},
	} {
		if strings.Contains(err, p.in) {
			return p.say
		}
	}
	return "the connection failed"
}

// notices are what an app page says after a change (?done=…).
var notices = map[string]string{
	"key-revoked":      "Key revoked. Requests with it now answer 401 invalid_api_key.",
	"redirect-added":   "Redirect host added.",
	"redirect-removed": "Redirect host removed.",
	"webhook-saved":    "Webhook URL saved.",
	"test-sent":        "Test event queued. It appears in the delivery log below; reload to follow its delivery.",
	"redelivered":      "Event queued for redelivery.",
	"webhook-resumed":  "Deliveries resumed. Redeliver from the log below the events that failed while they were disabled.",
	"emails-on":        "Ticket emails are on: buyers of live orders paid from now on get their tickets by email.",
	"emails-off":       "Ticket emails are off: deliver tickets to your buyers from each order's tickets or tickets_url.",
	"created":          "App created with a test key, a live key and a webhook signing secret.",
	"key-rotated-test": "New test key issued. The old one is revoked: requests with it now answer 401 invalid_api_key.",
	"key-rotated-live": "New live key issued. The old one is revoked: requests with it now answer 401 invalid_api_key.",
	"secret-rotated":   "New webhook signing secret issued; deliveries from now on are signed with it.",
}

// shownOnce are the notices of changes that made a key or secret, which
// the page after the change shows once (revealNext).
var shownOnce = map[string]bool{"created": true, "key-rotated-test": true, "key-rotated-live": true, "secret-rotated": true}

// goneNotice is what the page says instead when it is reloaded.
const goneNotice = "Keys and secrets are shown only once, right after they are made; this page no longer shows them. " +
	"If you did not copy them, rotate the key or the webhook secret below for a new one."

func appID(r *http.Request) int64 {
	id, err := strconv.ParseInt(chi.URLParam(r, "app"), 10, 64)
	if err != nil || id < 1 {
		return 0 // no app has id 0: not_found
	}
	return id
}

// showApp renders an app's page with status; p carries what the request
// adds (a refusal, revealed secrets, the submitted form).
func (h *Handler) showApp(w http.ResponseWriter, r *http.Request, id int64, status int, p *page) {
	sess := sessionFrom(r)
	q := r.URL.Query()
	data, err := h.Service.AppPage(r.Context(), sess, id, accounts.OrderQuery{Env: q.Get("env"), Reference: q.Get("reference"),
		Email: q.Get("email"), Review: q.Get("review") != "", Events: q.Get("events")})
	shown := q // the query of what the page shows
	if err != nil && apperr.CodeOf(err) == apperr.ValidationFailed {
		// A bad search or log cursor: show the page with it refused.
		p.Err, p.Form = apperr.From(err), q
		status = http.StatusUnprocessableEntity
		shown = url.Values{}
		data, err = h.Service.AppPage(r.Context(), sess, id, accounts.OrderQuery{})
	}
	if err != nil {
		h.refuse(w, r, err, p, "app")
		return
	}
	p.Title, p.Nav, p.Session, p.App = data.App.Name, "apps", sess, newAppView(data, shown)
	p.Defaults = map[string]string{"webhook-url": data.App.WebhookURL, "reference": data.Query.Reference, "email": data.Query.Email}
	done := q.Get("done")
	if r.Method == http.MethodGet {
		p.Reveal = h.takeReveal(w, r, id)
	}
	switch {
	case p.Flash != "":
	case shownOnce[done] && p.Reveal == nil:
		p.Flash = goneNotice
	default:
		p.Flash = notices[done]
	}
	h.render(w, r, status, "app", p)
}

func (h *Handler) app(w http.ResponseWriter, r *http.Request) {
	h.showApp(w, r, appID(r), http.StatusOK, &page{})
}

// actionFailed shows the app's page again with the refusal: fields keep
// what was typed.
func (h *Handler) actionFailed(w http.ResponseWriter, r *http.Request, err error) {
	e := apperr.From(err)
	switch e.Code {
	case apperr.ValidationFailed:
	case apperr.RateLimitExceeded:
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	default:
		h.refuse(w, r, err, &page{}, "app")
		return
	}
	r.URL.RawQuery = "" // a post's page shows the default orders
	h.showApp(w, r, appID(r), e.Status(), &page{Err: e, Form: r.PostForm})
}

func (h *Handler) apps(w http.ResponseWriter, r *http.Request) {
	sess := sessionFrom(r)
	apps, err := h.Service.Apps(r.Context(), sess)
	if err != nil {
		h.refuse(w, r, err, &page{}, "apps")
		return
	}
	h.render(w, r, http.StatusOK, "apps", &page{Title: "Your apps", Nav: "apps", Session: sess, Apps: apps})
}

// createApp creates an app and sends the browser to its page, which shows
// the keys and secret this once (revealNext): reloading that page creates
// nothing.
func (h *Handler) createApp(w http.ResponseWriter, r *http.Request) {
	sess := sessionFrom(r)
	app, err := h.Service.CreateApp(r.Context(), sess, r.PostForm.Get("name"))
	if err != nil {
		apps, _ := h.Service.Apps(r.Context(), sess)
		h.refuse(w, r, err, &page{Title: "Your apps", Nav: "apps", Apps: apps, Form: r.PostForm}, "apps")
		return
	}
	h.revealNext(w, r, app.App.ID, "created", []secret{
		{ID: "test-key", Label: "Test key (sandbox)", Value: app.TestKey},
		{ID: "live-key", Label: "Live key", Value: app.LiveKey},
		{ID: "webhook-secret", Label: "Webhook signing secret", Value: app.WebhookSecret},
	})
}

func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request) {
	env := chi.URLParam(r, "env")
	key, err := h.Service.RotateKey(r.Context(), sessionFrom(r), appID(r), env)
	if err != nil {
		h.actionFailed(w, r, err)
		return
	}
	h.revealNext(w, r, appID(r), "key-rotated-"+env, []secret{{ID: env + "-key", Label: "New " + env + " key", Value: key}})
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request) {
	id := appID(r)
	if err := h.Service.RevokeKey(r.Context(), sessionFrom(r), id, chi.URLParam(r, "env")); err != nil {
		h.actionFailed(w, r, err)
		return
	}
	back(w, r, id, "key-revoked")
}

func (h *Handler) addRedirectDomain(w http.ResponseWriter, r *http.Request) {
	id := appID(r)
	if err := h.Service.AddRedirectDomain(r.Context(), sessionFrom(r), id, r.PostForm.Get("redirect-domain")); err != nil {
		h.actionFailed(w, r, err)
		return
	}
	back(w, r, id, "redirect-added")
}

func (h *Handler) removeRedirectDomain(w http.ResponseWriter, r *http.Request) {
	id := appID(r)
	if err := h.Service.RemoveRedirectDomain(r.Context(), sessionFrom(r), id, r.PostForm.Get("redirect-domain")); err != nil {
		h.actionFailed(w, r, err)
		return
	}
	back(w, r, id, "redirect-removed")
}

func (h *Handler) setWebhookURL(w http.ResponseWriter, r *http.Request) {
	id := appID(r)
	if err := h.Service.SetWebhookURL(r.Context(), sessionFrom(r), id, r.PostForm.Get("webhook-url")); err != nil {
		h.actionFailed(w, r, err)
		return
	}
	back(w, r, id, "webhook-saved")
}

func (h *Handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	secretValue, err := h.Service.RotateWebhookSecret(r.Context(), sessionFrom(r), appID(r))
	if err != nil {
		h.actionFailed(w, r, err)
		return
	}
	h.revealNext(w, r, appID(r), "secret-rotated", []secret{{ID: "webhook-secret", Label: "Webhook signing secret", Value: secretValue}})
}

func (h *Handler) sendTestEvent(w http.ResponseWriter, r *http.Request) {
	id := appID(r)
	if _, err := h.Service.SendTestEvent(r.Context(), sessionFrom(r), id, strings.TrimSpace(r.PostForm.Get("env"))); err != nil {
		h.actionFailed(w, r, err)
		return
	}
	back(w, r, id, "test-sent")
}

func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) {
	id := appID(r)
	if err := h.Service.Redeliver(r.Context(), sessionFrom(r), id, chi.URLParam(r, "event")); err != nil {
		h.actionFailed(w, r, err)
		return
	}
	back(w, r, id, "redelivered")
}

func (h *Handler) resumeWebhooks(w http.ResponseWriter, r *http.Request) {
	id := appID(r)
	if err := h.Service.ResumeWebhooks(r.Context(), sessionFrom(r), id); err != nil {
		h.actionFailed(w, r, err)
		return
	}
	back(w, r, id, "webhook-resumed")
}

// setTicketEmails switches the app's ticket emails on or off.
func (h *Handler) setTicketEmails(w http.ResponseWriter, r *http.Request) {
	id := appID(r)
	on := r.PostFormValue("ticket-emails")
	if on != "on" && on != "off" {
		h.actionFailed(w, r, apperr.Validation(apperr.Details{"ticket-emails": {"must be on or off"}}))
		return
	}
	if err := h.Service.SetTicketEmails(r.Context(), sessionFrom(r), id, on == "on"); err != nil {
		h.actionFailed(w, r, err)
		return
	}
	back(w, r, id, "emails-"+on)
}
