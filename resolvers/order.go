package resolvers

import (
	"cmp"
	"context"
	"errors"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph/model"
)

// caller is the authenticated app of the request.
// Errors: unauthorized when the request was not authenticated;
// scanner_key_not_allowed when a door device's key made it.
func caller(ctx context.Context) (checkout.Caller, error) {
	p, err := auth.FromContext(ctx)
	if err != nil {
		return checkout.Caller{}, err
	}
	if err := p.RequireApp(); err != nil {
		return checkout.Caller{}, err
	}
	return checkout.Caller{AppID: p.AppID, Environment: p.Environment, AccountID: p.AccountID}, nil
}

// Order is GET /orders/{reference} and Query.order: an order of the
// calling app.
// Errors: unauthorized, environment_mismatch, order_not_found.
func (r *Resolver) Order(ctx context.Context, reference string) (*checkout.OrderView, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Checkout.OrderView(ctx, c, reference)
}

// CreateCheckoutSession is POST /checkout-sessions and
// Mutation.createCheckoutSession: the checkout of the calling app under
// its idempotency key. in is nil when REST could not read its body as a
// JSON object; problems are what REST's decoding found (GraphQL coerces
// its input before the resolver runs, so it has none). replayed reports
// that the answer, session or refusal, is the one saved for the key.
// Errors: unauthorized, and those of checkout.Service.Create.
func (r *Resolver) CreateCheckoutSession(ctx context.Context, key string, in *model.CheckoutRequest, problems apperr.Details) (sess *checkout.Session, replayed bool, err error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, false, err
	}
	return r.Checkout.Create(ctx, c, checkout.Request{Key: key, Input: toCheckoutInput(in), Problems: problems})
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

// Orders is GET /api/v1/orders and Query.orders: a page of the calling
// app's orders, newest first, each edge with its cursor.
// Errors: unauthorized, and those of checkout.Service.Orders (with REST's
// parameter names; Query.orders renames them).
func (r *Resolver) Orders(ctx context.Context, req checkout.OrdersRequest) (*model.OrderConnection, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.Checkout.Orders(ctx, c, req)
	if err != nil {
		return nil, err
	}
	conn := &model.OrderConnection{
		Edges:    make([]*model.OrderEdge, len(p.Orders)),
		PageInfo: &model.CursorPageInfo{HasNextPage: p.HasMore, HasPreviousPage: req.Cursor != ""},
		Limit:    p.Limit,
	}
	for i, v := range p.Orders {
		conn.Edges[i] = &model.OrderEdge{Cursor: p.Cursors[i], Node: v}
	}
	if n := len(p.Cursors); n > 0 {
		conn.PageInfo.StartCursor, conn.PageInfo.EndCursor = &p.Cursors[0], &p.Cursors[n-1]
	}
	return conn, nil
}

// OrderChanges is GET /api/v1/order-changes and Query.orderChanges: the
// calling app's orders changed after since, each as it is now.
// Errors: unauthorized, and those of checkout.Service.Changes (with REST's
// parameter names; Query.orderChanges renames them).
func (r *Resolver) OrderChanges(ctx context.Context, req checkout.ChangesRequest) (*model.OrderChangePage, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.Checkout.Changes(ctx, c, req)
	if err != nil {
		return nil, err
	}
	return &model.OrderChangePage{Nodes: p.Orders, NextSince: p.NextSince, HasMore: p.HasMore}, nil
}

// ExpireCheckoutSession is POST /api/v1/checkout-sessions/{reference}/expire
// and Mutation.expireCheckoutSession: the calling app ends a pending
// checkout now.
// Errors: unauthorized, and those of checkout.Service.Expire.
func (r *Resolver) ExpireCheckoutSession(ctx context.Context, reference string) (*checkout.OrderView, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Checkout.Expire(ctx, c, reference)
}

// orderArgs are the GraphQL names of the order list's and the feed's
// parameters, by their REST names.
var orderArgs = map[string]string{
	"status": "filter.status", "event_id": "filter.eventId", "eventdate_id": "filter.eventdateId",
	"limit": "first", "cursor": "after", "since": "since",
}

// orderArgPaths renames the details of a validation error of the order
// list or the feed from REST's parameters to GraphQL's arguments.
func orderArgPaths(err error) error {
	var ae *apperr.Error
	if !errors.As(err, &ae) || len(ae.Details) == 0 {
		return err
	}
	out := *ae
	out.Details = make(apperr.Details, len(ae.Details))
	for name, msgs := range ae.Details {
		out.Details[cmp.Or(orderArgs[name], name)] = msgs
	}
	return &out
}

// ordersRequest is Query.orders' arguments as the order list's request.
func ordersRequest(filter *model.OrderFilter, first *int, after *string) checkout.OrdersRequest {
	req := checkout.OrdersRequest{Limit: first, Cursor: deref(after)}
	if filter != nil {
		req.Status, req.EventID, req.EventdateID = deref(filter.Status), filter.EventID, filter.EventdateID
	}
	return req
}
