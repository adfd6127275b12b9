package accounts

import (
	"context"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
)

// OrderPage returns an order of one of the session's apps whole, as
// `boxoffice orders show` prints it (checkout.Service.Inspect): items,
// tickets, buyer, payment and its refund review, and every webhook event
// of the order with its deliveries.
// Errors: account_pending_approval, account_disabled, not_found (the app
// is not the account's, or the order is not the app's).
func (s *Service) OrderPage(ctx context.Context, sess *Session, appID int64, ref string) (*store.App, *checkout.Record, error) {
	app, err := s.ownApp(ctx, sess, appID)
	if err != nil {
		return nil, nil, err
	}
	notFound := apperr.New(apperr.NotFound, "App %d has no such order.", appID)
	if s.Checkout == nil {
		return nil, nil, notFound
	}
	r, err := s.Checkout.Inspect(ctx, ref)
	switch {
	case apperr.CodeOf(err) == apperr.OrderNotFound || (err == nil && r.AppID != appID):
		return nil, nil, notFound
	case err != nil:
		return nil, nil, err
	}
	return app, r, nil
}
