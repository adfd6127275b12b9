package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/live"
)

// OrderUpdated is Subscription.orderUpdated: an order of the calling app,
// now and whenever it changes, until ctx ends.
// Errors: unauthorized, environment_mismatch, order_not_found,
// subscription_limit_reached.
func (r *Resolver) OrderUpdated(ctx context.Context, reference string) (<-chan *checkout.OrderView, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := r.Checkout.Order(ctx, c, reference); err != nil {
		return nil, err
	}
	// Only the order's own app and environment get this far, so the first
	// subscriber's read serves every subscriber of the topic.
	return live.Subscribe(ctx, r.Live, live.TenantOf(c.AccountID, c.AppID, c.Environment), live.OrderTopic(reference),
		func(ctx context.Context) (*checkout.OrderView, error) {
			return r.Checkout.OrderView(ctx, c, reference)
		})
}

// AvailabilityChanged is Subscription.availabilityChanged: the live
// availability of a visible date's tickets, now and whenever it moves,
// until ctx ends.
// Errors: unauthorized, event_date_not_found, subscription_limit_reached.
func (r *Resolver) AvailabilityChanged(ctx context.Context, dateID int64) (<-chan *model.DateAvailability, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, _, err := r.Catalog.EventDate(ctx, dateID); err != nil {
		return nil, err
	}
	return live.Subscribe(ctx, r.Live, live.TenantOf(c.AccountID, c.AppID, c.Environment), live.StockTopic(dateID),
		func(ctx context.Context) (*model.DateAvailability, error) {
			stock, err := r.Catalog.Stock(ctx, []int64{dateID})
			if err != nil {
				return nil, err
			}
			return toAvailability(dateID, stock[dateID]), nil
		})
}
