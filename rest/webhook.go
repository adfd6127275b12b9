package rest

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/go-chi/chi/v5"
)

// maxEndpointBody bounds an endpoint request body: a URL, sixteen-odd
// event types and a 200-character description fit many times over.
const maxEndpointBody = 16 << 10

// createWebhookEndpoint is POST /api/v1/webhook-endpoints.
func (h *Handler) createWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	in, problems := decodeEndpointBody(w, r)
	v, err := h.Resolver.CreateWebhookEndpoint(r.Context(), in, problems)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, dataOf(v))
}

// listWebhookEndpoints is GET /api/v1/webhook-endpoints.
func (h *Handler) listWebhookEndpoints(w http.ResponseWriter, r *http.Request) {
	vs, err := h.Resolver.WebhookEndpoints(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, dataOf(vs))
}

// getWebhookEndpoint is GET /api/v1/webhook-endpoints/{id}.
func (h *Handler) getWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	v, err := h.Resolver.WebhookEndpoint(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, dataOf(v))
}

// updateWebhookEndpoint is PATCH /api/v1/webhook-endpoints/{id}.
func (h *Handler) updateWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	in, problems := decodeEndpointBody(w, r)
	v, err := h.Resolver.UpdateWebhookEndpoint(r.Context(), chi.URLParam(r, "id"), in, problems)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, dataOf(v))
}

// deleteWebhookEndpoint is DELETE /api/v1/webhook-endpoints/{id}: 204.
func (h *Handler) deleteWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	if err := h.Resolver.DeleteWebhookEndpoint(r.Context(), chi.URLParam(r, "id")); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// rotateWebhookEndpointSecret is POST /api/v1/webhook-endpoints/{id}/rotate-secret.
func (h *Handler) rotateWebhookEndpointSecret(w http.ResponseWriter, r *http.Request) {
	v, err := h.Resolver.RotateWebhookEndpointSecret(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, dataOf(v))
}

// recoverWebhookEndpoint is POST /api/v1/webhook-endpoints/{id}/recover
// with {since}: 202 and how many events were queued again.
func (h *Handler) recoverWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	since := ""
	obj, problems := decodeJSON(w, r, maxEndpointBody, decodeObjectPtr)
	if obj != nil {
		if s := jsonString(problems, *obj, "since", "since"); s != nil {
			since = *s
		}
	}
	n, err := h.Resolver.RecoverWebhookEndpoint(r.Context(), chi.URLParam(r, "id"), since, problems)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, dataOf(struct {
		EndpointID string `json:"endpoint_id"`
		Since      string `json:"since"`
		Recovering int    `json:"recovering"`
	}{chi.URLParam(r, "id"), since, n}))
}

// listWebhookEvents is GET /api/v1/webhook-events.
func (h *Handler) listWebhookEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	problems := apperr.Details{}
	f := webhook.EventFilter{Type: q.Get("type"), OrderReference: q.Get("order_reference"), Cursor: q.Get("cursor")}
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 100 {
			problems.Add("limit", "must be an integer between 1 and 100")
		}
		f.Limit = n
	}
	page, err := h.Resolver.WebhookEvents(r.Context(), f, problems)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var next *string
	if page.NextCursor != "" {
		next = &page.NextCursor
	}
	writeJSON(w, http.StatusOK, struct {
		Data []*webhook.LogEvent `json:"data"`
		Meta struct {
			NextCursor *string `json:"next_cursor"`
		} `json:"meta"`
	}{Data: page.Events, Meta: struct {
		NextCursor *string `json:"next_cursor"`
	}{next}})
}

// getWebhookEvent is GET /api/v1/webhook-events/{id}.
func (h *Handler) getWebhookEvent(w http.ResponseWriter, r *http.Request) {
	v, err := h.Resolver.ReadWebhookEvent(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, dataOf(v))
}

// redeliverWebhookEvent is POST /api/v1/webhook-events/{id}/redeliver
// with an optional {endpoint_id}: 202 and the event.
func (h *Handler) redeliverWebhookEvent(w http.ResponseWriter, r *http.Request) {
	endpoint := ""
	problems := apperr.Details{}
	if r.ContentLength != 0 {
		var obj *map[string]any
		obj, problems = decodeJSON(w, r, maxEndpointBody, decodeOptionalObject)
		if obj != nil {
			if s := jsonString(problems, *obj, "endpoint_id", "endpoint_id"); s != nil {
				endpoint = *s
			}
		}
	}
	v, err := h.Resolver.RedeliverWebhookEvent(r.Context(), chi.URLParam(r, "id"), endpoint, problems)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, dataOf(v))
}

// dataOf wraps an answer as {"data": …}.
func dataOf[T any](v T) struct {
	Data T `json:"data"`
} {
	return struct {
		Data T `json:"data"`
	}{v}
}

func decodeObjectPtr(body io.Reader) (*map[string]any, apperr.Details) {
	obj, d := decodeObject(body)
	if obj == nil {
		return nil, d
	}
	return &obj, d
}

// decodeOptionalObject is decodeObjectPtr for a body that may be empty.
func decodeOptionalObject(body io.Reader) (*map[string]any, apperr.Details) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, apperr.Details{"body": {bodyProblem(err)}}
	}
	if strings.TrimSpace(string(raw)) == "" {
		return &map[string]any{}, apperr.Details{}
	}
	return decodeObjectPtr(strings.NewReader(string(raw)))
}

// decodeEndpointBody reads an endpoint's JSON body: url, enabled_events,
// description (null clears it) and status, with the problems found keyed
// by field.
func decodeEndpointBody(w http.ResponseWriter, r *http.Request) (webhook.EndpointInput, apperr.Details) {
	obj, d := decodeJSON(w, r, maxEndpointBody, decodeObjectPtr)
	var in webhook.EndpointInput
	if obj == nil {
		return in, d
	}
	in.URL = jsonString(d, *obj, "url", "url")
	in.Status = jsonString(d, *obj, "status", "status")
	if raw, ok := (*obj)["description"]; ok {
		if raw == nil {
			empty := ""
			in.Description = &empty
		} else {
			in.Description = jsonString(d, *obj, "description", "description")
		}
	}
	if raw, ok := (*obj)["enabled_events"]; ok {
		list, ok := raw.([]any)
		if !ok {
			d.Add("enabled_events", "must be an array of event types, or [\"*\"]")
		} else {
			in.EnabledEvents = make([]string, 0, len(list))
			for i, x := range list {
				s, ok := x.(string)
				if !ok {
					d.Add("enabled_events."+strconv.Itoa(i), "must be an event type")
					continue
				}
				in.EnabledEvents = append(in.EnabledEvents, s)
			}
		}
	}
	for k := range *obj {
		switch k {
		case "url", "enabled_events", "description", "status":
		default:
			d.Add(k, "is not a field of a webhook endpoint (url, enabled_events, description, status)")
		}
	}
	return in, d
}
