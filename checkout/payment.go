package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
)

// ReturnURL is where a payment provider sends the buyer back: the
// service's own page, which shows the outcome once the provider confirms it.
func ReturnURL(base, ref string) string {
	return strings.TrimRight(base, "/") + "/checkout/" + ref + "/return"
}

// createPayment asks the provider for the payment of a live paid order
// before anything is written, so a provider outage leaves nothing behind.
// A cart that is already sold out is refused first, without a provider call.
// Errors: sold_out, payment_gateway_unavailable.
func (s *Service) createPayment(ctx context.Context, req *request, k *cart, o *store.Order) error {
	for _, it := range req.Items {
		if catalog.Available(k.tickets[it.TicketID]) < it.Quantity {
			return soldOut(it.TicketID)
		}
	}
	if s.Payments == nil {
		return apperr.New(apperr.PaymentGatewayUnavailable, "No payment provider is configured for live payments.")
	}
	p, err := s.Payments.Create(ctx, payments.Request{
		Reference: o.Reference, Amount: k.total, Currency: k.currency, Email: req.Email,
		CallbackURL: ReturnURL(s.Config.PublicBaseURL, o.Reference),
	})
	if err != nil {
		return apperr.Unavailable(apperr.PaymentGatewayUnavailable, err,
			"The payment gateway is unavailable; retry shortly.")
	}
	name := s.Payments.Name()
	o.PaymentProvider, o.PaymentReference, o.PaymentURL = &name, &p.Reference, &p.RedirectURL
	return nil
}

// ConfirmPayment applies a payment outcome the provider confirmed (by its
// signed callback or by verification): a pending order becomes paid (its
// holds sold, order.paid emitted) or failed (holds released, order.failed).
// Every call is idempotent: a duplicate confirmation changes nothing. A
// payment confirmed for an order that already expired or failed, or for
// the wrong amount, is recorded and flagged for refund review instead.
// Errors: order_not_found.
func (s *Service) ConfirmPayment(ctx context.Context, st *payments.Status) (*store.Order, error) {
	o, err := store.OrderByReference(ctx, s.DB, st.Reference)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.OrderNotFound, "Order %s was not found.", st.Reference)
	}
	if err != nil || st.State == payments.Pending {
		return o, err
	}
	paid := st.State == payments.Paid
	if o.Status == store.OrderPending && !o.ExpiresAt.IsZero() && !s.Now().Before(o.ExpiresAt) {
		// Too late: the order expires (as the sweep would have done) first.
		if o, _, err = s.Settle(ctx, o.Reference, store.OrderExpired); err != nil {
			return nil, err
		}
	}
	wrongAmount := paid && (st.Amount != o.TotalAmount || !strings.EqualFold(st.Currency, o.Currency))
	switch {
	case o.Status == store.OrderPending && !wrongAmount:
		to := store.OrderFailed
		if paid {
			to = store.OrderPaid
		}
		o, _, err = s.Settle(ctx, o.Reference, to)
		return o, err
	case paid && o.Status != store.OrderPaid:
		note := fmt.Sprintf("payment %s confirmed while the order was %s", st.Reference, o.Status)
		if wrongAmount {
			note = fmt.Sprintf("payment %s confirmed for %d %s, the order is %d %s", st.Reference, st.Amount, st.Currency, o.TotalAmount, o.Currency)
		}
		if _, err := store.FlagRefundReview(ctx, s.DB, o.Reference, note, s.Now().UTC()); err != nil {
			return nil, err
		}
		return store.OrderByReference(ctx, s.DB, o.Reference)
	}
	return o, nil
}
