package refunds

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// ErrAtProvider is Send's news that the provider accepted the refund and
// has not finished it: its callback, or a later Send, settles it.
var ErrAtProvider = errors.New("refunds: the provider is still processing the refund")

// Send returns a pending refund's money through the provider that took
// the payment: the job of the outbox, run until it ends without error. It
// never asks the provider twice for one refund: each request is recorded
// (and committed) before it is made, and once one has been made, the
// provider's list of the payment's refunds is read first; only a refund
// the provider does not have is asked for again. A settled refund is left
// alone. Errors: ErrAtProvider (ask again later), errors wrapping
// payments.ErrUnavailable (the provider could not answer: retry), and the
// database's.
func (s *Service) Send(ctx context.Context, refundID int64) error {
	r, err := store.RefundByID(ctx, s.DB, refundID)
	if err != nil || r.Status != store.RefundPending {
		return err
	}
	o, err := store.OrderByID(ctx, s.DB, r.OrderID)
	if err != nil {
		return err
	}
	p, why := s.refunder(r, o)
	if p == nil {
		_, err := s.Settle(ctx, r.ID, payments.RefundResult{State: payments.RefundFailed, FailureReason: why})
		return err
	}
	if !r.SentAt.IsZero() || r.ProviderRefundID != nil {
		// A request was made before; its outcome may have been lost.
		known, err := s.known(ctx, p, r, *o.PaymentReference)
		if err != nil || known != nil {
			return s.apply(ctx, r, known, err)
		}
	}
	ok, err := store.MarkRefundSent(ctx, s.DB, r.ID, s.Now().UTC())
	if err != nil || !ok {
		return err
	}
	res, err := p.Refund(ctx, payments.RefundRequest{RefundID: r.PublicID, PaymentReference: *o.PaymentReference,
		Amount: r.Amount, Currency: r.Currency})
	switch {
	case errors.Is(err, payments.ErrUnavailable):
		return err
	case err != nil:
		// A refusal: the provider made no refund.
		res = &payments.RefundResult{State: payments.RefundFailed, FailureReason: err.Error()}
	}
	return s.apply(ctx, r, res, nil)
}

// refunder returns the provider that returns a refund's money, or why
// there is none.
func (s *Service) refunder(r *store.Refund, o *store.Order) (payments.Refunder, string) {
	switch {
	case o.PaymentReference == nil:
		return nil, "The order has no payment to refund."
	case s.Payments == nil || r.Provider == nil || s.Payments.Name() != *r.Provider:
		name := "unknown"
		if r.Provider != nil {
			name = *r.Provider
		}
		return nil, fmt.Sprintf("The payment provider that took the payment (%s) is not configured on this server; return the money in its dashboard.", name)
	}
	p, ok := s.Payments.(payments.Refunder)
	if !ok {
		return nil, fmt.Sprintf("The payment provider %s cannot refund through Boxoffice; return the money in its dashboard.", s.Payments.Name())
	}
	return p, ""
}

// known returns the provider's record of refund r, nil when it has none.
func (s *Service) known(ctx context.Context, p payments.Refunder, r *store.Refund, paymentRef string) (*payments.RefundResult, error) {
	list, err := p.RefundsOf(ctx, paymentRef)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].RefundID == r.PublicID || (r.ProviderRefundID != nil && list[i].ProviderID == *r.ProviderRefundID) {
			return &list[i], nil
		}
	}
	return nil, nil
}

// apply records what the provider said of a refund: settled, or still
// being processed (ErrAtProvider).
func (s *Service) apply(ctx context.Context, r *store.Refund, res *payments.RefundResult, err error) error {
	if err != nil {
		return err
	}
	if res.State == payments.RefundPending {
		if res.ProviderID != "" {
			if err := store.SetProviderRefundID(ctx, s.DB, r.ID, res.ProviderID, s.Now().UTC()); err != nil {
				return err
			}
		}
		return ErrAtProvider
	}
	_, err = s.Settle(ctx, r.ID, *res)
	return err
}

// Settle records a refund's outcome at the provider, once: a success adds
// its amount to the order's refunded_amount, a failure gives it back to
// the refundable balance (its tickets stay void), and refund.succeeded or
// refund.failed is emitted with the order's next sequence, all in one
// transaction. It reports whether this call settled the refund; a refund
// settled already is left as it is.
func (s *Service) Settle(ctx context.Context, refundID int64, res payments.RefundResult) (bool, error) {
	status, typ := store.RefundSucceeded, webhook.RefundSucceeded
	var failure *string
	if res.State == payments.RefundFailed {
		status, typ = store.RefundFailed, webhook.RefundFailed
		why := res.FailureReason
		if why == "" {
			why = "The payment provider refused the refund without saying why."
		}
		failure = &why
	}
	var providerID *string
	if res.ProviderID != "" {
		providerID = &res.ProviderID
	}
	settled := false
	err := s.DB.RunInTxNotifyAfter(ctx, func(ctx context.Context, tx bun.Tx) error {
		r, err := store.RefundByID(ctx, tx, refundID)
		if err != nil {
			return err
		}
		if settled, err = store.SettleRefund(ctx, tx, r, status, failure, providerID, s.Now().UTC()); err != nil || !settled {
			return err
		}
		o, err := store.OrderByID(ctx, tx, r.OrderID)
		if err != nil {
			return err
		}
		view, order, err := s.views(ctx, tx, o.ID, r)
		if err != nil {
			return err
		}
		return s.emit(ctx, tx, o, typ, refundData(view, order))
	})
	if settled && err == nil {
		s.observe(status)
	}
	return settled, err
}

// Reconcile settles the pending refunds of a payment as the provider's
// list reports them: what a provider's refund callback prompts.
func (s *Service) Reconcile(ctx context.Context, n payments.RefundNotice) error {
	o, err := store.OrderByReference(ctx, s.DB, n.OrderReference)
	if errors.Is(err, store.ErrNotFound) || (err == nil && o.PaymentReference == nil) {
		return nil
	}
	if err != nil {
		return err
	}
	pending, err := store.PendingRefundsOfOrder(ctx, s.DB, o.ID)
	if err != nil || len(pending) == 0 {
		return err
	}
	p, _ := s.refunder(&pending[0], o)
	if p == nil {
		return nil
	}
	list, err := p.RefundsOf(ctx, *o.PaymentReference)
	if err != nil {
		return err
	}
	for i := range pending {
		r := &pending[i]
		for _, res := range list {
			if res.RefundID == r.PublicID && res.State != payments.RefundPending {
				if _, err := s.Settle(ctx, r.ID, res); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
