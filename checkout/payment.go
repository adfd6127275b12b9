package checkout

import (
	"context"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// ReturnURL is where a payment provider sends the buyer back: the
// service's own page, which shows the outcome once the provider confirms it.
func ReturnURL(base, ref string) string {
	return strings.TrimRight(base, "/") + "/checkout/" + ref + "/return"
}

// createPayment asks a provider outside the database for the payment of a
// live paid order before anything is written, so a provider outage leaves
// nothing behind. A cart that is already sold out (stock read now) is
// refused first, without a provider call.
// Errors: sold_out, payment_gateway_unavailable.
func (s *Service) createPayment(ctx context.Context, req *request, k *cart, o *store.Order) error {
	if err := s.checkStock(ctx, s.DB, req); err != nil {
		return err
	}
	if s.Payments == nil {
		return apperr.New(apperr.PaymentGatewayUnavailable, "No payment provider is configured for live payments.")
	}
	p, err := s.Payments.Create(ctx, s.paymentRequest(req, k, o))
	return s.paid(p, err, o)
}

// createPaymentTx creates the payment of a live paid order with a provider
// that keeps it in the database, in the order's transaction tx: a refusal
// later in it (sold_out) rolls the payment back with the order. No stock is
// read first: the conditional UPDATE decides.
// Errors: payment_gateway_unavailable.
func (s *Service) createPaymentTx(ctx context.Context, tx bun.Tx, p payments.InTx, k *cart, req *request, o *store.Order) error {
	pay, err := p.CreateTx(ctx, tx, s.paymentRequest(req, k, o))
	return s.paid(pay, err, o)
}

func (s *Service) paymentRequest(req *request, k *cart, o *store.Order) payments.Request {
	return payments.Request{
		Reference: o.Reference, Amount: k.total, Currency: k.currency, Email: req.Email,
		CallbackURL: ReturnURL(s.Config.PublicBaseURL, o.Reference),
	}
}

// paid records a created payment on o.
// Errors: payment_gateway_unavailable when the provider failed.
func (s *Service) paid(p *payments.Payment, err error, o *store.Order) error {
	if err != nil {
		return apperr.Unavailable(apperr.PaymentGatewayUnavailable, err,
			"The payment gateway is unavailable; retry shortly.")
	}
	name := s.Payments.Name()
	o.PaymentProvider, o.PaymentReference, o.PaymentURL = &name, &p.Reference, &p.RedirectURL
	return nil
}

// ConfirmPayment applies a payment outcome the provider confirmed (by its
// signed callback or by verification) through the rule of decide: a pending
// order becomes paid (its holds sold, order.paid emitted) or failed (holds
// released, order.failed), or expired when its expires_at has passed. A
// paid payment that cannot make the order paid (it expired, failed or was
// never payable, including when the sweep expires it while this call runs)
// or that is for the wrong amount is recorded and flagged for refund review;
// it is never dropped. A duplicate confirmation changes nothing, and a
// payment still pending at the provider changes nothing yet.
// Errors: order_not_found.
func (s *Service) ConfirmPayment(ctx context.Context, st *payments.Status) (*store.Order, error) {
	if st.State == payments.Pending {
		return s.byReference(ctx, st.Reference)
	}
	to := store.OrderFailed
	if st.State == payments.Paid {
		to = store.OrderPaid
	}
	o, _, err := s.settle(ctx, st.Reference, settlement{status: to, payment: st})
	return o, err
}
