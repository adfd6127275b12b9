package portal

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/go-chi/chi/v5"
)

// webhookView is what the webhook page shows: an environment's endpoints
// and its newest events with each endpoint's delivery.
type webhookView struct {
	AppID      int64
	AppName    string
	Env        string
	Endpoints  []*webhook.Endpoint
	Names      map[string]string // endpoint id → its URL, for the log
	Events     []*webhook.LogEvent
	NextCursor string
	Types      []string
	// SinceDefault is what the recover form offers: a day ago, in UTC.
	SinceDefault string
}

// webhookNotices are what the webhook page says after a change.
var webhookNotices = map[string]string{
	"endpoint-created":  "Endpoint added. Copy its signing secret now: it is shown only this once.",
	"endpoint-enabled":  "Endpoint enabled: deliveries to it start again. Recover the events it missed below.",
	"endpoint-disabled": "Endpoint disabled: its events are recorded as not sent until you enable it.",
	"endpoint-deleted":  "Endpoint deleted; its pending deliveries stop.",
	"secret-rotated":    "New signing secret issued. For 24 hours deliveries carry signatures with the new and the old one.",
	"recovered":         "Events queued again to the endpoint.",
	"redelivered":       "Event queued for redelivery.",
}

func webhooksPath(appID int64, env string) string {
	return appPath(appID) + "/webhooks?env=" + url.QueryEscape(env)
}

// showWebhooks renders the webhook page of the app with status; p carries
// a refusal and the submitted form.
func (h *Handler) showWebhooks(w http.ResponseWriter, r *http.Request, status int, p *page) {
	sess := sessionFrom(r)
	id := appID(r)
	q := r.URL.Query()
	env := cmpOr(chi.URLParam(r, "env"), q.Get("env"))
	data, err := h.Service.WebhookPage(r.Context(), sess, id, env, q.Get("cursor"))
	if err != nil {
		if e := apperr.From(err); e.Code == apperr.ValidationFailed {
			h.message(w, r, e.Status(), "Webhooks", sentence(e.Message))
			return
		}
		h.refuse(w, r, err, p, "webhooks")
		return
	}
	v := &webhookView{AppID: id, AppName: data.App.Name, Env: data.Env, Endpoints: data.Endpoints, Names: map[string]string{},
		Events: data.Events.Events, NextCursor: data.Events.NextCursor, Types: append([]string{"*"}, webhook.Types...),
		SinceDefault: time.Now().UTC().Add(-24 * time.Hour).Format("2006-01-02T15:04")}
	for _, ep := range data.Endpoints {
		v.Names[ep.ID] = ep.URL
	}
	p.Title, p.Nav, p.Session, p.Webhooks = data.App.Name+" · webhooks", "apps", sess, v
	if r.Method == http.MethodGet {
		p.Reveal = h.takeReveal(w, r, id)
		if p.Flash == "" {
			p.Flash = webhookNotices[q.Get("done")]
		}
	}
	h.render(w, r, status, "webhooks", p)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (h *Handler) webhooks(w http.ResponseWriter, r *http.Request) {
	h.showWebhooks(w, r, http.StatusOK, &page{})
}

// webhookFailed shows the webhook page again with the refusal.
func (h *Handler) webhookFailed(w http.ResponseWriter, r *http.Request, err error) {
	e := apperr.From(err)
	if e.Status() >= 500 || e.Code == apperr.NotFound || e.Code == apperr.AccountDisabled || e.Code == apperr.AccountPendingApproval {
		h.refuse(w, r, err, &page{}, "webhooks")
		return
	}
	r.URL.RawQuery = ""
	h.showWebhooks(w, r, e.Status(), &page{Err: e, Form: r.PostForm})
}

// backToWebhooks sends the browser to the webhook page with the notice of done.
func backToWebhooks(w http.ResponseWriter, r *http.Request, done string) {
	http.Redirect(w, r, webhooksPath(appID(r), chi.URLParam(r, "env"))+"&done="+url.QueryEscape(done), http.StatusSeeOther)
}

// revealOnWebhooks shows a new signing secret once on the webhook page
// (the reveal cookie of the app's pages, see revealNext).
func (h *Handler) revealOnWebhooks(w http.ResponseWriter, r *http.Request, done string, ep *webhook.Endpoint) {
	id := appID(r)
	http.SetCookie(w, &http.Cookie{
		Name: revealCookie, Value: seal(sessionFrom(r), id, []secret{{ID: "endpoint-secret", Label: "Signing secret of " + ep.URL, Value: *ep.Secret}}),
		Path: appPath(id), MaxAge: revealTTL, HttpOnly: true, Secure: h.secure(), SameSite: http.SameSiteLaxMode,
	})
	backToWebhooks(w, r, done)
}

func (h *Handler) createEndpoint(w http.ResponseWriter, r *http.Request) {
	u := strings.TrimSpace(r.PostForm.Get("url"))
	in := webhook.EndpointInput{URL: &u, EnabledEvents: r.PostForm["events"]}
	if d := strings.TrimSpace(r.PostForm.Get("description")); d != "" {
		in.Description = &d
	}
	if slicesHasStar(in.EnabledEvents) || len(in.EnabledEvents) == 0 {
		in.EnabledEvents = []string{"*"}
	}
	ep, err := h.Service.CreateEndpoint(r.Context(), sessionFrom(r), appID(r), chi.URLParam(r, "env"), in)
	if err != nil {
		h.webhookFailed(w, r, err)
		return
	}
	h.revealOnWebhooks(w, r, "endpoint-created", ep)
}

func slicesHasStar(xs []string) bool {
	for _, x := range xs {
		if x == "*" {
			return true
		}
	}
	return false
}

func (h *Handler) setEndpointStatus(w http.ResponseWriter, r *http.Request) {
	st := r.PostForm.Get("status")
	_, err := h.Service.UpdateEndpoint(r.Context(), sessionFrom(r), appID(r), chi.URLParam(r, "env"), chi.URLParam(r, "endpoint"),
		webhook.EndpointInput{Status: &st})
	if err != nil {
		h.webhookFailed(w, r, err)
		return
	}
	backToWebhooks(w, r, "endpoint-"+st)
}

func (h *Handler) rotateEndpointSecret(w http.ResponseWriter, r *http.Request) {
	ep, err := h.Service.RotateEndpointSecret(r.Context(), sessionFrom(r), appID(r), chi.URLParam(r, "env"), chi.URLParam(r, "endpoint"))
	if err != nil {
		h.webhookFailed(w, r, err)
		return
	}
	h.revealOnWebhooks(w, r, "secret-rotated", ep)
}

func (h *Handler) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	if err := h.Service.DeleteEndpoint(r.Context(), sessionFrom(r), appID(r), chi.URLParam(r, "env"), chi.URLParam(r, "endpoint")); err != nil {
		h.webhookFailed(w, r, err)
		return
	}
	backToWebhooks(w, r, "endpoint-deleted")
}

// recoverEndpoint reads since as the form's datetime-local, in UTC.
func (h *Handler) recoverEndpoint(w http.ResponseWriter, r *http.Request) {
	raw := strings.TrimSpace(r.PostForm.Get("since"))
	since, err := time.Parse("2006-01-02T15:04", raw)
	if err != nil {
		if since, err = time.Parse(time.RFC3339, raw); err != nil {
			h.webhookFailed(w, r, apperr.Validation(apperr.Details{"since": {"must be a date and time, e.g. 2026-11-28T09:00 (UTC)"}}))
			return
		}
	}
	if _, err := h.Service.RecoverEndpoint(r.Context(), sessionFrom(r), appID(r), chi.URLParam(r, "env"), chi.URLParam(r, "endpoint"), since); err != nil {
		h.webhookFailed(w, r, err)
		return
	}
	backToWebhooks(w, r, "recovered")
}

func (h *Handler) redeliverEvent(w http.ResponseWriter, r *http.Request) {
	err := h.Service.RedeliverEvent(r.Context(), sessionFrom(r), appID(r), chi.URLParam(r, "env"), chi.URLParam(r, "event"),
		r.PostForm.Get("endpoint"))
	if err != nil {
		h.webhookFailed(w, r, err)
		return
	}
	backToWebhooks(w, r, "redelivered")
}
