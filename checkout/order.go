package checkout

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/uptrace/bun"
)

// statusCodes are the numeric order statuses, an order's status_code
// (docs/api.md, "Orders and their states").
var statusCodes = map[string]int{
	store.OrderUnknown: 0, store.OrderPending: 1, store.OrderPaid: 2,
	store.OrderCompleted: 3, store.OrderFailed: 4, store.OrderExpired: 5,
}

// StatusCode returns the numeric code of an order status (0 for unknown).
func StatusCode(status string) int { return statusCodes[status] }

// ReferenceEnvironment tells an order's environment from its reference:
// test for sbx_…, live for ord_…, "" for anything that cannot be a
// reference (another prefix, or not store.PlausibleReference), which
// therefore names no order.
func ReferenceEnvironment(ref string) string {
	if !store.PlausibleReference(ref) {
		return ""
	}
	switch {
	case strings.HasPrefix(ref, SandboxPrefix):
		return store.EnvTest
	case strings.HasPrefix(ref, LivePrefix):
		return store.EnvLive
	}
	return ""
}

// Order returns an order of the calling app.
// Errors: environment_mismatch when the reference belongs to the other
// environment; order_not_found when it is not the caller's order.
func (s *Service) Order(ctx context.Context, c Caller, ref string) (*store.Order, error) {
	env := ReferenceEnvironment(ref)
	if env != "" && env != c.Environment {
		return nil, apperr.New(apperr.EnvironmentMismatch,
			"Order %s belongs to the %s environment; use a %s key to read it.", ref, env, env)
	}
	notFound := apperr.New(apperr.OrderNotFound, "Order %s was not found for this app.", ref)
	if env == "" {
		return nil, notFound
	}
	o, err := store.OrderByReference(ctx, s.DB, ref)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (o.AppID != c.AppID || o.Environment != c.Environment)) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// OrderView returns an order of the calling app as the API shows it, with
// its items and tickets, read now (never from a cache).
// Errors: those of Order.
func (s *Service) OrderView(ctx context.Context, c Caller, ref string) (*OrderView, error) {
	o, err := s.Order(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	vs, err := s.Views(ctx, s.DB, []*store.Order{o})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// OrderView is the Order of spec section 2.5 with fulfilment.md's
// additions: what both APIs and every order webhook show. REST and the
// webhooks write its JSON and GraphQL's Order is bound to it (gqlgen.yml),
// so a new field is written once, here (and named in schema.graphql for
// GraphQL to show it).
type OrderView struct {
	Reference        string  `json:"reference"`
	Status           string  `json:"status"`
	StatusCode       int     `json:"status_code"`
	Currency         *string `json:"currency"`
	CreatedAt        *string `json:"created_at"`
	UpdatedAt        *string `json:"updated_at"`
	PaymentReference *string `json:"payment_reference"`
	Environment      string  `json:"environment"`

	EventID         int64           `json:"event_id"`
	EventdateID     int64           `json:"eventdate_id"`
	TotalAmount     string          `json:"total_amount"`
	RequiresPayment bool            `json:"requires_payment"`
	ExpiresAt       *string         `json:"expires_at"`
	CheckoutURL     *string         `json:"checkout_url"`
	Metadata        map[string]any  `json:"metadata"`
	Items           []LineItem      `json:"items"`
	Tickets         []*tickets.View `json:"tickets"`
	TicketsURL      *string         `json:"tickets_url"`
	TicketsEmail    TicketsEmail    `json:"tickets_email"`
	// RefundedAmount is what the order's succeeded refunds returned;
	// RefundStatus is none, partial or full (RefundStatus); Refunds are
	// the order's refunds, oldest first.
	RefundedAmount string    `json:"refunded_amount"`
	RefundStatus   string    `json:"refund_status"`
	Refunds        []*Refund `json:"refunds"`
}

// LineItem is one line of an order: the ticket type bought, under the name
// it had then, and the price charged.
type LineItem struct {
	TicketID  int64  `json:"ticket_id"`
	Name      string `json:"name"`
	Quantity  int64  `json:"quantity"`
	UnitPrice string `json:"unit_price"`
	Amount    string `json:"amount"`
}

// TicketsEmail is where the ticket email of an order stands: not_sent,
// queued, sent (with SentAt) or failed.
type TicketsEmail struct {
	Status string  `json:"status"`
	SentAt *string `json:"sent_at"`
}

// View converts a stored order, with its items and tickets, into the API's
// Order. d may be nil for an order with neither.
func (s *Service) View(o *store.Order, d *store.OrderDetail) *OrderView {
	created, updated := catalog.FormatStamp(o.CreatedAt), catalog.FormatStamp(o.UpdatedAt)
	currency := o.Currency
	v := &OrderView{
		Reference: o.Reference, Status: o.Status, StatusCode: StatusCode(o.Status),
		Currency: &currency, CreatedAt: &created, UpdatedAt: &updated,
		PaymentReference: o.PaymentReference, Environment: o.Environment,
		EventID: o.EventID, EventdateID: o.EventDateID, TotalAmount: catalog.FormatAmount(o.TotalAmount),
		RequiresPayment: o.RequiresPayment, Metadata: o.Metadata,
		Items: []LineItem{}, Tickets: []*tickets.View{},
		RefundedAmount: catalog.FormatAmount(o.RefundedAmount), RefundStatus: RefundStatusNone, Refunds: []*Refund{},
		TicketsEmail: TicketsEmail{Status: cmp.Or(o.TicketsEmailStatus, store.TicketsEmailNotSent)},
	}
	if v.Metadata == nil {
		v.Metadata = map[string]any{}
	}
	if o.Status == store.OrderPending {
		u := CheckoutURL(s.Config.PublicBaseURL, o.Environment, o.Reference)
		v.CheckoutURL = &u
		if !o.ExpiresAt.IsZero() {
			e := catalog.FormatStamp(o.ExpiresAt)
			v.ExpiresAt = &e
		}
	}
	if o.TicketsToken != nil {
		u := tickets.URL(s.Config.PublicBaseURL, *o.TicketsToken)
		v.TicketsURL = &u
	}
	if !o.TicketsEmailSentAt.IsZero() {
		at := catalog.FormatStamp(o.TicketsEmailSentAt)
		v.TicketsEmail.SentAt = &at
	}
	if d == nil {
		return v
	}
	for _, it := range d.Items {
		v.Items = append(v.Items, LineItem{TicketID: it.TicketID, Name: it.Name, Quantity: it.Quantity,
			UnitPrice: catalog.FormatAmount(it.UnitPrice), Amount: catalog.FormatAmount(it.UnitPrice * it.Quantity)})
	}
	for i := range d.Tickets {
		v.Tickets = append(v.Tickets, tickets.NewView(&d.Tickets[i], o.Reference))
	}
	for i := range d.Refunds {
		v.Refunds = append(v.Refunds, NewRefund(&d.Refunds[i], o.Reference, d.Tickets))
	}
	v.RefundStatus = RefundStatus(o, d.Tickets, d.Refunds)
	return v
}

// Views converts stored orders into the API's Orders, loading their items
// and tickets in one batch.
func (s *Service) Views(ctx context.Context, db bun.IDB, orders []*store.Order) ([]*OrderView, error) {
	ids := make([]int64, len(orders))
	for i, o := range orders {
		ids[i] = o.ID
	}
	details, err := store.OrderDetails(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*OrderView, len(orders))
	for i, o := range orders {
		out[i] = s.View(o, details[o.ID])
	}
	return out, nil
}
