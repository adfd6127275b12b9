package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/tickets"
)

// caller is the authenticated app of the request.
// Errors: unauthorized when the request was not authenticated;
// scanner_key_not_allowed when a door device's key made it.
func caller(ctx context.Context) (checkout.Caller, error) {
	p, err := auth.FromContext(ctx)
	if err != nil {
		return checkout.Caller{}, err
	}
	if p.Scanner() {
		return checkout.Caller{}, apperr.New(apperr.ScannerKeyNotAllowed,
			"A scanner key opens only check-in; use the app's API key here.")
	}
	return checkout.Caller{AppID: p.AppID, Environment: p.Environment, AccountID: p.AccountID}, nil
}

// Order is GET /orders/{reference} and Query.order: an order of the
// calling app.
// Errors: unauthorized, environment_mismatch, order_not_found.
func (r *Resolver) Order(ctx context.Context, reference string) (*model.Order, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	v, err := r.Checkout.OrderView(ctx, c, reference)
	if err != nil {
		return nil, err
	}
	return toOrder(v), nil
}

// CreateCheckoutSession is POST /checkout-sessions and
// Mutation.createCheckoutSession: the checkout of the calling app under
// its idempotency key. in is nil when REST could not read its body as a
// JSON object; problems are what REST's decoding found (GraphQL coerces
// its input before the resolver runs, so it has none). replayed reports
// that the answer, session or refusal, is the one saved for the key.
// Errors: unauthorized, and those of checkout.Service.Create.
func (r *Resolver) CreateCheckoutSession(ctx context.Context, key string, in *model.CheckoutRequest, problems apperr.Details) (sess *model.CheckoutSession, replayed bool, err error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, false, err
	}
	s, replayed, err := r.Checkout.Create(ctx, c, checkout.Request{Key: key, Input: toCheckoutInput(in), Problems: problems})
	return toCheckoutSession(s), replayed, err
}

// toCheckoutInput converts the API's checkout request into checkout's,
// keeping every nil (an absent field, a null item) for validation to name.
func toCheckoutInput(in *model.CheckoutRequest) *checkout.Input {
	if in == nil {
		return nil
	}
	out := &checkout.Input{
		EventID: in.EventID, EventdateID: in.EventdateID,
		SuccessURL: in.SuccessURL, CancelURL: in.CancelURL, Metadata: in.Metadata,
	}
	if in.Items != nil {
		out.Items = make([]*checkout.Item, len(in.Items))
		for i, it := range in.Items {
			if it != nil {
				out.Items[i] = &checkout.Item{TicketID: it.TicketID, Quantity: it.Quantity}
			}
		}
	}
	if in.Customer != nil {
		out.Customer = &checkout.Customer{Name: in.Customer.Name, Email: in.Customer.Email, Phone: in.Customer.Phone}
	}
	return out
}

// toCheckoutSession converts a checkout session into the API's.
func toCheckoutSession(s *checkout.Session) *model.CheckoutSession {
	if s == nil {
		return nil
	}
	return &model.CheckoutSession{
		OrderReference: s.OrderReference, CheckoutURL: s.CheckoutURL, ExpiresAt: s.ExpiresAt,
		Status: s.Status, Environment: s.Environment, RequiresPayment: s.RequiresPayment,
		TotalAmount: s.TotalAmount, PaymentReference: s.PaymentReference, Currency: s.Currency,
	}
}

// toOrder converts checkout's view of an order, the one webhook payloads
// carry, into the API's Order.
func toOrder(v *checkout.OrderView) *model.Order {
	o := &model.Order{
		Reference: v.Reference, Status: v.Status, StatusCode: v.StatusCode, Currency: v.Currency,
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, PaymentReference: v.PaymentReference,
		Environment: v.Environment,
		EventID:     int(v.EventID), EventdateID: int(v.EventdateID), TotalAmount: v.TotalAmount,
		RequiresPayment: v.RequiresPayment, ExpiresAt: v.ExpiresAt, CheckoutURL: v.CheckoutURL,
		Metadata: v.Metadata, TicketsURL: v.TicketsURL,
		Items:        make([]*model.LineItem, len(v.Items)),
		Tickets:      make([]*model.IssuedTicket, len(v.Tickets)),
		TicketsEmail: &model.TicketsEmail{Status: v.TicketsEmail.Status, SentAt: v.TicketsEmail.SentAt},
	}
	for i, it := range v.Items {
		o.Items[i] = &model.LineItem{TicketID: int(it.TicketID), Name: it.Name, Quantity: int(it.Quantity),
			UnitPrice: it.UnitPrice, Amount: it.Amount}
	}
	for i, t := range v.Tickets {
		o.Tickets[i] = toIssuedTicket(t)
	}
	return o
}

// toIssuedTicket converts an issued ticket into the API's.
func toIssuedTicket(t *tickets.View) *model.IssuedTicket {
	return &model.IssuedTicket{
		ID: t.ID, Code: t.Code, OrderReference: t.OrderReference, TicketID: int(t.TicketID), TicketName: t.TicketName,
		EventID: int(t.EventID), EventdateID: int(t.EventdateID), Position: int(t.Position), Status: t.Status,
		CheckedInAt: t.CheckedInAt, Environment: t.Environment,
	}
}
