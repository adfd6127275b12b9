package refunds

import (
	"context"
	"errors"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// ByOperator is an operator's refund (`boxoffice orders refund`): of any
// app's order, named by its reference, under the key the operator's
// command made for it. On an order whose payment waits for a refund review
// (it arrived for an order that expired or failed, or for the wrong
// amount), it returns that payment, cancelling no ticket, and clears the
// flag while the review's note stays on the order; a failed return flags
// the order again. Any other order is refunded exactly as its app would
// refund it (Create). Errors: order_not_found, and those of Create; for a
// review, validation_failed when tickets are named and
// refund_exceeds_balance for an amount above the payment.
func (s *Service) ByOperator(ctx context.Context, ref, key string, in *Input) (*checkout.Refund, error) {
	o, err := store.OrderByReference(ctx, s.DB, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.OrderNotFound, "There is no order %s.", ref)
	}
	if err != nil {
		return nil, err
	}
	if o.RefundReview && o.Status != store.OrderPaid && o.Status != store.OrderCompleted {
		v, err := s.review(ctx, o, in)
		return v, asRefundError(err)
	}
	v, _, err := s.Create(ctx, checkout.Caller{AppID: o.AppID, Environment: o.Environment},
		Request{Reference: ref, Key: key, Input: in})
	return v, err
}

// review returns the payment of an order flagged for refund review. The
// flag is cleared by a conditional write in the refund's transaction, so
// two operators settling one review make one refund.
func (s *Service) review(ctx context.Context, o *store.Order, in *Input) (*checkout.Refund, error) {
	req, err := validate(in, nil)
	if err != nil {
		return nil, err
	}
	if len(req.tickets) > 0 {
		return nil, apperr.Validation(apperr.Details{"tickets": {
			"must be empty: order " + o.Reference + " was never paid, so the refund of its review returns the payment and cancels no ticket"}})
	}
	if err := checkout.CheckMetadata(req.metadata, o.CustomerName, o.CustomerPhone); err != nil {
		return nil, err
	}
	paid, currency := o.TotalAmount, o.Currency
	if o.ReviewAmount != nil && o.ReviewCurrency != nil {
		paid, currency = *o.ReviewAmount, *o.ReviewCurrency
	}
	amount := paid
	if req.hasAmount {
		if req.amount > paid {
			return nil, apperr.New(apperr.RefundExceedsBalance, "The refund of %s is more than the payment under review, %s.",
				formatMoney(req.amount, currency), formatMoney(paid, currency))
		}
		amount = req.amount
	}
	if amount == 0 {
		return nil, errNothing()
	}
	var v *checkout.Refund
	err = s.DB.RunInTxNotifyAfter(ctx, func(ctx context.Context, tx bun.Tx) error {
		locked, err := store.LockOrder(ctx, tx, o.ID)
		if err != nil {
			return err
		}
		if !locked.RefundReview || locked.Status == store.OrderPaid || locked.Status == store.OrderCompleted {
			return apperr.New(apperr.OrderNotRefundable, "Order %s has no refund review waiting any more.", o.Reference)
		}
		v, err = s.write(ctx, tx, locked, &plan{amount: amount, reason: req.reason, metadata: req.metadata,
			review: true, currency: currency})
		return err
	})
	if err == nil {
		s.observe(string(v.Status))
	}
	return v, err
}
