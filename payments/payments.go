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
