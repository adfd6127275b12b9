// Package payments is the seam between live checkout and a payment
// provider: a Provider creates a payment for an order, verifies it, and
// authenticates the provider's callbacks. Providers are chosen by
// configuration (PAYMENT_PROVIDER): Paystack for production, a development
// provider for trying the whole live flow on one machine.
package payments

import (
	"context"
	"errors"
	"net/http"

	"github.com/uptrace/bun"
)

// State is where a payment stands at the provider.
type State string

// Payment states.
const (
	Pending  State = "pending"
	Paid     State = "paid"
	Declined State = "declined"
)

// Request asks a provider to create a payment for an order.
type Request struct {
	// Reference is the order reference; providers use it as theirs too.
	Reference string
	// Amount is in minor units of Currency.
	Amount   int64
	Currency string
	Email    string
	// CallbackURL is where the provider returns the buyer: the service's
	// own return page.
	CallbackURL string
}

// Payment is a created payment.
type Payment struct {
	// Reference is the provider's reference (payment_reference).
	Reference string
	// RedirectURL is where the buyer pays.
	RedirectURL string
}

// Status is a verified payment.
type Status struct {
	Reference string
	State     State
	Amount    int64
	Currency  string
}

// Provider is a payment provider.
type Provider interface {
	// Name identifies the provider in logs and routes ("paystack", "dev").
	Name() string
	// Create creates a payment. Errors wrapping ErrUnavailable mean the
	// provider could not be reached or failed; others are refusals.
	Create(ctx context.Context, r Request) (*Payment, error)
	// Verify asks the provider where a payment stands.
	Verify(ctx context.Context, reference string) (*Status, error)
	// ParseCallback authenticates a callback (webhook) from the provider
	// and returns the payment it reports. Errors wrapping ErrForged mean
	// the callback is not authentic. A callback about something other than
	// a payment's outcome returns (nil, nil).
	ParseCallback(h http.Header, body []byte) (*Status, error)
}

// InTx is a Provider that keeps its payments in the service's own database
// (the development provider). Checkout creates such a payment inside the
// order's transaction, so one commit writes both and a refused order
// leaves no payment behind; it calls Create, outside any transaction,
// only for providers that are not InTx, since a real provider's HTTP call
// cannot be rolled back.
type InTx interface {
	CreateTx(ctx context.Context, db bun.IDB, r Request) (*Payment, error)
	// CreateAllTx is CreateTx for several requests at once (a batch of
	// checkout creates, in one transaction): the payments in rs's order.
	CreateAllTx(ctx context.Context, db bun.IDB, rs []Request) ([]*Payment, error)
}

// Errors of providers.
var (
	ErrUnavailable = errors.New("payments: provider unavailable")
	ErrForged      = errors.New("payments: callback signature does not match")
)

// RefundState is where a refund stands at the provider.
type RefundState string

// Refund states.
const (
	RefundPending   RefundState = "pending"
	RefundSucceeded RefundState = "succeeded"
	RefundFailed    RefundState = "failed"
)

// RefundRequest asks a provider to return money of a payment.
type RefundRequest struct {
	// RefundID is the service's refund id (rfd_…); the provider keeps it
	// with the refund, so its list of refunds names it.
	RefundID string
	// PaymentReference is the payment's reference at the provider.
	PaymentReference string
	// Amount is in minor units of Currency.
	Amount   int64
	Currency string
}

// RefundResult is a refund as the provider reports it.
type RefundResult struct {
	// RefundID is the service's refund id the provider kept ("" for a
	// refund made elsewhere, such as the provider's dashboard).
	RefundID string
	// ProviderID is the provider's own id of the refund.
	ProviderID string
	State      RefundState
	Amount     int64
	// FailureReason says why a failed refund failed, in the provider's
	// words.
	FailureReason string
}

// Refunder is a Provider that returns money.
type Refunder interface {
	// Refund asks the provider to return money. Errors wrapping
	// ErrUnavailable mean the outcome is unknown (the provider could not
	// be reached, timed out or failed): the refund may or may not exist
	// there. Other errors are refusals: no refund was made.
	Refund(ctx context.Context, r RefundRequest) (*RefundResult, error)
	// RefundsOf lists the refunds of a payment, so that a refund whose
	// request's outcome was lost is found before it is asked for again.
	RefundsOf(ctx context.Context, paymentReference string) ([]RefundResult, error)
}

// RefundNotice is a provider's callback about a refund: which order's
// payment has refunds that changed. The callback is only a prompt; the
// service asks the provider's list (RefundsOf) for the truth.
type RefundNotice struct {
	// OrderReference is the order whose payment it is (providers take the
	// order's reference as the payment's, or encode it in theirs).
	OrderReference string
}

// RefundCallbacks is a Provider whose callbacks also report refunds.
type RefundCallbacks interface {
	// ParseRefundCallback authenticates a callback and returns the refund
	// notice it carries, or (nil, nil) for a callback about something
	// else. Errors wrapping ErrForged mean the callback is not authentic.
	ParseRefundCallback(h http.Header, body []byte) (*RefundNotice, error)
}
