package portal

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
	"github.com/go-chi/chi/v5"
)

// orderView is an order's page as the template shows it.
type orderView struct {
	App *store.App
	*checkout.Record
	When, Venue, Created, Updated, Expires string
	Metadata                               string
	Events                                 []eventRow
}

func newOrderView(app *store.App, r *checkout.Record) *orderView {
	v := &orderView{App: app, Record: r, Created: stamp(r.CreatedAt), Updated: stamp(r.UpdatedAt), Expires: stamp(r.ExpiresAt),
		When:   catalog.DisplayInZone(r.Date.StartAt, r.Event.Timezone),
		Events: eventRows(r.Events, r.Attempts, true)}
	if len(r.Metadata) > 0 {
		b, _ := json.MarshalIndent(r.Metadata, "", "  ")
		v.Metadata = string(b)
	}
	return v
}

// stamp prints one of the API's instants (RFC 3339) as the portal prints
// instants; "" when there is none.
func stamp(s *string) string {
	if s == nil {
		return ""
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return *s
	}
	return when(t)
}

// order shows an order of the app: /portal/apps/{app}/orders/{reference}.
func (h *Handler) order(w http.ResponseWriter, r *http.Request) {
	sess := sessionFrom(r)
	app, rec, err := h.Service.OrderPage(r.Context(), sess, appID(r), chi.URLParam(r, "reference"))
	if err != nil {
		h.refuse(w, r, err, &page{}, "order")
		return
	}
	h.render(w, r, http.StatusOK, "order", &page{Title: "Order " + rec.Reference + " · " + app.Name, Nav: "apps", Session: sess,
		Order: newOrderView(app, rec)})
}

// eventRow is one webhook event of a delivery log.
type eventRow struct {
	ID, Type, Env, Created string
	// Status is what the badge says, Badge its style: the stored status,
	// or "sent to listen" (listen) and "not sent" (notsent) for an event
	// that had no webhook URL to go to.
	Status, Badge string
	Attempts      int64
	// Code, Latency and Error describe the last attempt.
	Code, Latency, Error string
	// Listen is when `boxoffice listen` got the event; "" when no
	// listener did.
	Listen string
	// Log is every attempt, oldest first (the order page shows them).
	Log []attemptRow
}

type attemptRow struct {
	N                             int64
	At, URL, Code, Latency, Error string
}

// eventRows converts events and their attempts for a delivery log; log
// keeps every attempt of each.
//
// An app without a webhook URL has every delivery given up at once ("the
// app has no webhook URL"). That is no failure of the partner's receiver:
// such an event shows as sent to `boxoffice listen` when a listener got
// it, and as not sent otherwise, never as a red failure.
func eventRows(events []store.WebhookEvent, attempts map[string][]store.WebhookAttempt, log bool) []eventRow {
	var rows []eventRow
	for _, e := range events {
		row := eventRow{ID: e.ID, Type: e.Type, Env: e.Environment, Status: e.Status, Badge: e.Status, Attempts: e.Attempts,
			Code: "—", Created: when(e.CreatedAt)}
		if !e.StreamedAt.IsZero() {
			row.Listen = when(e.StreamedAt)
		}
		as := attempts[e.ID]
		noURL := false
		if len(as) > 0 {
			last := as[len(as)-1]
			if last.StatusCode != nil {
				row.Code = "HTTP " + strconv.FormatInt(*last.StatusCode, 10)
			}
			row.Latency = strconv.FormatInt(last.LatencyMS, 10) + " ms"
			if last.Error != nil && last.StatusCode == nil {
				row.Code, row.Error = "no answer", deliveryProblem(*last.Error)
				noURL = strings.Contains(*last.Error, "no webhook URL")
			}
		} else if e.Status == store.WebhookFailed && e.LastError != nil {
			// Given up without an attempt: deliveries to the URL were disabled.
			row.Code, row.Error = "not sent", deliveryProblem(*e.LastError)
		}
		switch {
		case noURL && row.Listen != "":
			row.Status, row.Badge, row.Code, row.Latency, row.Error = "sent to listen", "listen", "boxoffice listen", "", ""
		case noURL:
			row.Status, row.Badge, row.Code, row.Latency = "not sent", "notsent", "no webhook URL", ""
			row.Error = "set a webhook URL, or run boxoffice listen to get events on your machine"
		}
		if log {
			for _, a := range as {
				ar := attemptRow{N: a.Attempt, At: when(a.CreatedAt), URL: a.URL, Code: "no answer",
					Latency: strconv.FormatInt(a.LatencyMS, 10) + " ms"}
				if a.StatusCode != nil {
					ar.Code = "HTTP " + strconv.FormatInt(*a.StatusCode, 10)
				}
				if a.Error != nil && a.StatusCode == nil {
					ar.Error = deliveryProblem(*a.Error)
				}
				if a.URL == "" {
					ar.URL, ar.Code, ar.Latency = "—", "not sent", ""
				}
				row.Log = append(row.Log, ar)
			}
		}
		rows = append(rows, row)
	}
	return rows
}
