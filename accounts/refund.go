package accounts

import (
	"context"
	"errors"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
)

// PreviewRefund answers what a refund of an order of one of the session's
// apps would do (refunds.Service.Preview), for the order page to confirm.
// Errors: account_pending_approval, account_disabled, not_found (the app
// is not the account's, or the order is not the app's), and Preview's.
func (s *Service) PreviewRefund(ctx context.Context, sess *Session, appID int64, ref string, in *refunds.Input) (*refunds.Preview, error) {
	c, err := s.refundCaller(ctx, sess, appID, ref)
	if err != nil {
		return nil, err
	}
	return s.Refunds.Preview(ctx, c, ref, in)
}

// Refund refunds an order of one of the session's apps, as the app's own
// POST /api/v1/orders/{reference}/refunds would, under key: the order
// page's form carries a key of its own, so sending it twice makes one
// refund. Errors: as PreviewRefund's, and refunds.Service.Create's.
func (s *Service) Refund(ctx context.Context, sess *Session, appID int64, ref, key string, in *refunds.Input) (*checkout.Refund, error) {
	c, err := s.refundCaller(ctx, sess, appID, ref)
	if err != nil {
		return nil, err
	}
	v, _, err := s.Refunds.Create(ctx, c, refunds.Request{Reference: ref, Key: key, Input: in})
	return v, err
}

// refundCaller is the app a portal refund acts as: the session's app,
// in the order's environment.
func (s *Service) refundCaller(ctx context.Context, sess *Session, appID int64, ref string) (checkout.Caller, error) {
	if _, err := s.ownApp(ctx, sess, appID); err != nil {
		return checkout.Caller{}, err
	}
	notFound := apperr.New(apperr.NotFound, "App %d has no such order.", appID)
	if s.Refunds == nil || !store.PlausibleReference(ref) {
		return checkout.Caller{}, notFound
	}
	o, err := store.OrderByReference(ctx, s.DB, ref)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && o.AppID != appID):
		return checkout.Caller{}, notFound
	case err != nil:
		return checkout.Caller{}, err
	}
	return checkout.Caller{AppID: appID, Environment: o.Environment}, nil
}
