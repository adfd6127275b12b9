package portal

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/refunds"

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
	// Refund is the refund form: shown while the order can be refunded.
	Refund *refundForm
}

// refundForm is the order page's refund action: a form whose key makes a
// double submit one refund, then the confirmation of what the refund
// will do (Preview), which posts the same choices with step=confirm.
type refundForm struct {
	Key      string
	Reasons  []string
	Tickets  []refundTicket
	Balance  string
	Preview  *refunds.Preview
	Err      *apperr.Error
	What     string
	Amount   string
	Reason   string
	Selected []string
}

// refundTicket is a ticket the form offers to cancel.
type refundTicket struct {
	ID, Label string
	Checked   bool
}

// newRefundForm is the form for the order o, with the choices f posted
// (nil for a fresh form); nil when the order cannot be refunded.
func newRefundForm(o *checkout.Record, posted url.Values) *refundForm {
	if o.Status != store.OrderPaid && o.Status != store.OrderCompleted {
		return nil
	}
	f := &refundForm{Key: "portal-" + strings.ToLower(rand.Text()), Reasons: refunds.Reasons, What: "order",
		Reason: store.RefundRequestedByCustomer, Balance: fmt.Sprintf("%s %s of %s %s", deref(o.Currency), o.RefundedAmount,
			deref(o.Currency), o.TotalAmount)}
	if posted != nil {
		f.Key, f.What, f.Amount, f.Reason, f.Selected = posted.Get("key"), posted.Get("what"), posted.Get("amount"),
			posted.Get("reason"), posted["ticket"]
	}
	for _, t := range o.Tickets {
		if t.Status == store.TicketVoid {
			continue
		}
		label := fmt.Sprintf("%s · %d of %d", t.TicketName, t.Position, len(o.Tickets))
		if t.Status == store.TicketCheckedIn {
			// The rule refuses it while it is inside; after an exit it may go.
			label += " · checked in"
		}
		f.Tickets = append(f.Tickets, refundTicket{ID: t.ID, Label: label, Checked: slices.Contains(f.Selected, t.ID)})
	}
	return f
}

// refundInput reads the refund form's choices as the API's body: the
// whole order, the ticked tickets, or money only, with an amount when
// one is given.
func refundInput(form url.Values) *refunds.Input {
	in := &refunds.Input{Reason: ptr(form.Get("reason"))}
	switch form.Get("what") {
	case "tickets":
		in.Tickets = []*string{}
		for _, id := range form["ticket"] {
			in.Tickets = append(in.Tickets, ptr(id))
		}
	case "money":
		in.Tickets = []*string{}
	}
	if a := strings.TrimSpace(form.Get("amount")); a != "" {
		in.Amount = ptr(a)
	}
	return in
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func newOrderView(app *store.App, r *checkout.Record) *orderView {
	v := &orderView{App: app, Record: r, Created: stamp(r.CreatedAt), Updated: stamp(r.UpdatedAt), Expires: stamp(r.ExpiresAt),
		When:   catalog.DisplayInZone(r.Date.StartAt, r.Event.Timezone),
		Events: eventRows(r.Events, r.Attempts, true), Refund: newRefundForm(r, nil)}
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
	h.showOrder(w, r, http.StatusOK, nil)
}

// showOrder renders the order page with status; form, when set, is the
// refund form as posted, with its preview or its refusal.
func (h *Handler) showOrder(w http.ResponseWriter, r *http.Request, status int, form *refundForm) {
	sess := sessionFrom(r)
	app, rec, err := h.Service.OrderPage(r.Context(), sess, appID(r), chi.URLParam(r, "reference"))
	if err != nil {
		h.refuse(w, r, err, &page{}, "order")
		return
	}
	v := newOrderView(app, rec)
	if form != nil && v.Refund != nil {
		form.Tickets, form.Reasons, form.Balance = v.Refund.Tickets, v.Refund.Reasons, v.Refund.Balance
		v.Refund = form
	}
	p := &page{Title: "Order " + rec.Reference + " · " + app.Name, Nav: "apps", Session: sess, Order: v}
	if r.URL.Query().Get("done") == "refunded" {
		p.Flash = "Refund made. A test order's refund succeeds at once; a live one is pending until the payment provider returns the money."
	}
	h.render(w, r, status, "order", p)
}

// refundOrder is the refund form's post: first the confirmation of what
// the refund will do, then (step=confirm) the refund, made under the
// form's key, and back to the order page.
func (h *Handler) refundOrder(w http.ResponseWriter, r *http.Request) {
	sess, id, ref := sessionFrom(r), appID(r), chi.URLParam(r, "reference")
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, apperr.Validation(apperr.Details{"form": {"could not be read"}}), &page{}, "order")
		return
	}
	in := refundInput(r.PostForm)
	form := &refundForm{Key: r.PostForm.Get("key"), What: r.PostForm.Get("what"), Amount: r.PostForm.Get("amount"),
		Reason: r.PostForm.Get("reason"), Selected: r.PostForm["ticket"]}
	var err error
	if r.PostForm.Get("step") == "confirm" {
		if _, err = h.Service.Refund(r.Context(), sess, id, ref, form.Key, in); err == nil {
			http.Redirect(w, r, fmt.Sprintf("/portal/apps/%d/orders/%s?done=refunded#refunds-title", id, url.PathEscape(ref)),
				http.StatusSeeOther)
			return
		}
	} else {
		form.Preview, err = h.Service.PreviewRefund(r.Context(), sess, id, ref, in)
	}
	if err != nil {
		e := apperr.From(err)
		if e.Code == apperr.NotFound || e.Code == apperr.Internal || e.Status() >= 500 || e.Code == apperr.AccountDisabled ||
			e.Code == apperr.AccountPendingApproval {
			h.refuse(w, r, err, &page{}, "order")
			return
		}
		form.Preview, form.Err = nil, e
		h.showOrder(w, r, e.Status(), form)
		return
	}
	h.showOrder(w, r, http.StatusOK, form)
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
