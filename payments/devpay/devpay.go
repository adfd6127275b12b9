// Package devpay is a payment provider for development: its "hosted page"
// is served by Boxoffice itself (devpaypage) and offers Pay and Decline, so
// the whole live flow (checkout, hosted page, payment, confirmation,
// webhook) can be tried on one machine without a real provider. It is used only when
// PAYMENT_PROVIDER=dev is set explicitly and must never face real buyers:
// anyone who opens its page can mark a live order paid, and no money
// moves. Its payments live in the database (dev_payments), so a pending
// order can still be paid after a restart or through another instance.
package devpay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Warning is what serve logs at start-up while this provider is in use.
const Warning = "PAYMENT_PROVIDER=dev: live payments go to the development payment provider, which is NOT a real " +
	"payment provider: no money moves and anyone who opens its page can mark a live order paid. Never use it in production."

// Provider is the development payment provider.
type Provider struct {
	base string
	db   *store.DB
	now  func() time.Time
	// Confirm receives each outcome, as a real provider's callback would.
	Confirm func(ctx context.Context, st *payments.Status) error
}

// New returns the provider; base is PUBLIC_BASE_URL, and payments are kept
// in db.
func New(base string, db *store.DB, now func() time.Time) *Provider {
	return &Provider{base: strings.TrimRight(base, "/"), db: db, now: now}
}

// Name implements payments.Provider.
func (p *Provider) Name() string { return "dev" }

// Create implements payments.Provider. Errors wrap payments.ErrUnavailable
// when the payment cannot be stored.
func (p *Provider) Create(ctx context.Context, r payments.Request) (*payments.Payment, error) {
	return p.CreateTx(ctx, p.db, r)
}

// CreateTx implements payments.InTx: the payment is a row of the service's
// own database, written in db, the order's transaction.
func (p *Provider) CreateTx(ctx context.Context, db bun.IDB, r payments.Request) (*payments.Payment, error) {
	now := p.now()
	dp := p.row(r, now)
	if err := store.InsertDevPayment(ctx, db, &dp); err != nil {
		return nil, fmt.Errorf("devpay: storing payment %s: %w: %w", r.Reference, payments.ErrUnavailable, err)
	}
	return p.payment(r), nil
}

// CreateAllTx implements payments.InTx: the rows in one statement.
func (p *Provider) CreateAllTx(ctx context.Context, db bun.IDB, rs []payments.Request) ([]*payments.Payment, error) {
	now := p.now()
	rows := make([]store.DevPayment, len(rs))
	out := make([]*payments.Payment, len(rs))
	for i, r := range rs {
		rows[i], out[i] = p.row(r, now), p.payment(r)
	}
	if err := store.InsertDevPayments(ctx, db, rows); err != nil {
		return nil, fmt.Errorf("devpay: storing %d payments: %w: %w", len(rs), payments.ErrUnavailable, err)
	}
	return out, nil
}

func (p *Provider) row(r payments.Request, now time.Time) store.DevPayment {
	return store.DevPayment{Reference: r.Reference, Amount: r.Amount, Currency: r.Currency,
		CallbackURL: r.CallbackURL, State: string(payments.Pending), RefundOutcome: store.DevRefundsSucceed,
		CreatedAt: now, UpdatedAt: now}
}

// payment sends the buyer to the provider's page, which devpaypage serves.
func (p *Provider) payment(r payments.Request) *payments.Payment {
	return &payments.Payment{Reference: r.Reference, RedirectURL: p.base + "/dev-pay/" + r.Reference}
}

// Verify implements payments.Provider.
func (p *Provider) Verify(ctx context.Context, ref string) (*payments.Status, error) {
	dp, err := store.DevPaymentByReference(ctx, p.db, ref)
	if err != nil {
		return nil, fmt.Errorf("devpay: payment %s: %w", ref, err)
	}
	return status(dp), nil
}

func status(dp *store.DevPayment) *payments.Status {
	return &payments.Status{Reference: dp.Reference, State: payments.State(dp.State), Amount: dp.Amount, Currency: dp.Currency}
}

// ParseCallback implements payments.Provider: the development provider
// confirms in process and accepts no callbacks from outside.
func (p *Provider) ParseCallback(http.Header, []byte) (*payments.Status, error) {
	return nil, payments.ErrForged
}

// Payment returns the payment of ref, for its page.
// Errors: store.ErrNotFound.
func (p *Provider) Payment(ctx context.Context, ref string) (*store.DevPayment, error) {
	return store.DevPaymentByReference(ctx, p.db, ref)
}

// Decide applies the buyer's Pay (payments.Paid) or Decline
// (payments.Declined) to the payment of ref once: a later decision, from
// its page or another instance's, changes nothing. A payment that is
// decided is confirmed with Confirm as a provider's callback would, and
// Decide returns it as it stands.
func (p *Provider) Decide(ctx context.Context, ref string, to payments.State) (*store.DevPayment, error) {
	dp, err := store.DecideDevPayment(ctx, p.db, ref, string(to), p.now())
	if err != nil {
		return nil, err
	}
	if p.Confirm != nil && dp.State != string(payments.Pending) {
		if err := p.Confirm(ctx, status(dp)); err != nil {
			return nil, fmt.Errorf("devpay: confirming payment %s: %w", ref, err)
		}
	}
	return dp, nil
}

// FailureReason is why the development provider refuses a refund when its
// page says refunds of the payment fail.
const FailureReason = "The development payment provider was told to fail refunds of this payment."

// Refund implements payments.Refunder: the refund is made at once, or
// refused when the payment's page says refunds fail; asking again for one
// refund returns the first answer, as a real provider keyed by the
// refund's id would. Errors: a refusal for a payment that is not paid,
// errors wrapping payments.ErrUnavailable when the database cannot answer.
func (p *Provider) Refund(ctx context.Context, r payments.RefundRequest) (*payments.RefundResult, error) {
	dp, err := store.DevPaymentByReference(ctx, p.db, r.PaymentReference)
	if errors.Is(err, store.ErrNotFound) || (err == nil && dp.State != store.DevPaymentPaid) {
		return nil, fmt.Errorf("devpay: payment %s was not paid; there is nothing to refund", r.PaymentReference)
	}
	if err != nil {
		return nil, fmt.Errorf("devpay: payment %s: %w: %w", r.PaymentReference, payments.ErrUnavailable, err)
	}
	row := &store.DevRefund{RefundID: r.RefundID, PaymentReference: r.PaymentReference, Amount: r.Amount,
		Currency: r.Currency, State: string(payments.RefundSucceeded), CreatedAt: p.now().UTC()}
	if dp.RefundOutcome == store.DevRefundsFail {
		why := FailureReason
		row.State, row.FailureReason = string(payments.RefundFailed), &why
	}
	got, err := store.InsertDevRefund(ctx, p.db, row)
	if err != nil {
		return nil, fmt.Errorf("devpay: storing refund %s: %w: %w", r.RefundID, payments.ErrUnavailable, err)
	}
	res := refundResult(got)
	return &res, nil
}

// RefundsOf implements payments.Refunder.
func (p *Provider) RefundsOf(ctx context.Context, paymentRef string) ([]payments.RefundResult, error) {
	rows, err := store.DevRefundsOfPayment(ctx, p.db, paymentRef)
	if err != nil {
		return nil, fmt.Errorf("devpay: refunds of %s: %w: %w", paymentRef, payments.ErrUnavailable, err)
	}
	out := make([]payments.RefundResult, len(rows))
	for i := range rows {
		out[i] = refundResult(&rows[i])
	}
	return out, nil
}

func refundResult(r *store.DevRefund) payments.RefundResult {
	res := payments.RefundResult{RefundID: r.RefundID, ProviderID: "dev_" + r.RefundID, State: payments.RefundState(r.State),
		Amount: r.Amount}
	if r.FailureReason != nil {
		res.FailureReason = *r.FailureReason
	}
	return res
}

// FailRefunds sets whether the next refunds of the payment of ref fail
// (the development page's switch). Errors: store.ErrNotFound.
func (p *Provider) FailRefunds(ctx context.Context, ref string, fail bool) error {
	outcome := store.DevRefundsSucceed
	if fail {
		outcome = store.DevRefundsFail
	}
	return store.SetDevRefundOutcome(ctx, p.db, ref, outcome, p.now())
}
