package model

import "github.com/boxoffice/boxoffice/checkout"

// Money is an amount with its currency.
type Money struct {
	// Amount is a decimal string with two fraction digits ("150.00").
	Amount string `json:"amount"`
	// Currency is an ISO 4217 code.
	Currency string `json:"currency"`
}

// money returns the Money of a decimal amount, or nil for a nil amount.
func money(amount *string, currency string) *Money {
	if amount == nil {
		return nil
	}
	return &Money{Amount: *amount, Currency: currency}
}

// CreateCheckoutSessionInput is the mutation's input: the checkout request
// REST takes as its body, and the key REST takes as the Idempotency-Key
// header.
type CreateCheckoutSessionInput struct {
	IdempotencyKey string
	checkout.Input
}

// CreateCheckoutSessionPayload is what createCheckoutSession answers when it
// ran: the session, or the refusals as user errors.
type CreateCheckoutSessionPayload struct {
	CheckoutSession *checkout.Session
	Replayed        bool
	UserErrors      []*UserError
}

// UserError is a business or validation refusal of a mutation.
type UserError struct {
	Code    string
	Field   []string
	Message string
}
