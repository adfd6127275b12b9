package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkout"
)

// caller is the authenticated app of the request.
// Errors: unauthorized when the request was not authenticated.
func caller(ctx context.Context) (checkout.Caller, error) {
	p, err := auth.FromContext(ctx)
	if err != nil {
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
	o, err := r.Checkout.Order(ctx, c, reference)
	if err != nil {
		return nil, err
	}
	return checkout.View(o), nil
}

// CreateCheckoutSession is POST /checkout-sessions and
// Mutation.createCheckoutSession: the checkout of the calling app under
// its idempotency key, the body read from in once the key has passed.
// Errors: those of checkout.Service.Create.
func (r *Resolver) CreateCheckoutSession(ctx context.Context, key string, in checkout.Source) (*checkout.Session, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Checkout.Create(ctx, c, key, in)
}
