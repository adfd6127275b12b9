package model

import "github.com/boxoffice/boxoffice/checkout"

// Money is an amount with its currency.
type Money struct {
	// Amount is a decimal string with two fraction digits ("150.00").
	Amount string `json:"amount"`
	// Currency is an ISO 4217 code.
	Currency string `json:"currency"`
}

// NewMoney returns the Money of a decimal amount, or nil for a nil amount.
func NewMoney(amount *string, currency string) *Money {
	if amount == nil {
		return nil
	}
	return &Money{Amount: *amount, Currency: currency}
}

// CreateCheckoutSessionInput is the mutation's input: the checkout request
// REST takes as its body, and the key REST takes as the Idempotency-Key
// header.
type CreateCheckoutSessionInput struct {
	IdempotencyKey string `json:"-"`
	CheckoutRequest
}

// CheckoutRequest is a checkout request without its idempotency key: the
// JSON body of POST /api/v1/checkout-sessions. Every field is optional here
// so that a missing one is reported by validation, with its field path,
// rather than as a decoding failure.
type CheckoutRequest struct {
	EventID     *int                 `json:"event_id"`
	EventdateID *int                 `json:"eventdate_id"`
	Items       []*CheckoutItemInput `json:"items"`
	Customer    *CustomerInput       `json:"customer"`
	SuccessURL  *string              `json:"success_url"`
	CancelURL   *string              `json:"cancel_url"`
	// Metadata is any JSON value, so that one that is not an object is a
	// validation error (422) on both APIs, not a coercion error.
	Metadata any `json:"metadata"`
}

// CheckoutItemInput is one requested ticket type and quantity.
type CheckoutItemInput struct {
	TicketID *int `json:"ticket_id"`
	Quantity *int `json:"quantity"`
}

// CustomerInput is the buyer.
type CustomerInput struct {
	Name  *string `json:"name"`
	Email *string `json:"email"`
	Phone *string `json:"phone"`
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

// OrderConnection is a page of the order list (GET /api/v1/orders and
// Query.orders).
type OrderConnection struct {
	Edges    []*OrderEdge
	PageInfo *CursorPageInfo
	// Limit is the page size used: REST's meta.limit.
	Limit int
}

// OrderEdge is one order of an OrderConnection with its cursor.
type OrderEdge struct {
	Cursor string
	Node   *checkout.OrderView
}
