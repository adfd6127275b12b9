package model

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
	CheckoutSession *CheckoutSession
	Replayed        bool
	UserErrors      []*UserError
}

// UserError is a business or validation refusal of a mutation.
type UserError struct {
	Code    string
	Field   []string
	Message string
}

// CheckoutSession is spec section 2.4: the answer to a checkout request.
type CheckoutSession struct {
	OrderReference   string  `json:"order_reference"`
	CheckoutURL      *string `json:"checkout_url"`
	ExpiresAt        *string `json:"expires_at"`
	Status           string  `json:"status"`
	Environment      string  `json:"environment"`
	RequiresPayment  bool    `json:"requires_payment"`
	TotalAmount      *string `json:"total_amount"`
	PaymentReference *string `json:"payment_reference"`
	// Currency is the ISO 4217 code of TotalAmount; the contract's session
	// does not show it, GraphQL's totalMoney does.
	Currency string `json:"-"`
}

// TotalMoney is CheckoutSession.totalMoney: TotalAmount with its currency.
func (s *CheckoutSession) TotalMoney() *Money { return money(s.TotalAmount, s.Currency) }

// Order is spec section 2.5 with fulfilment.md's additions, the order both
// APIs show; its JSON is the webhooks' data.order, key for key.
type Order struct {
	Reference        string  `json:"reference"`
	Status           string  `json:"status"`
	StatusCode       int     `json:"status_code"`
	Currency         *string `json:"currency"`
	CreatedAt        *string `json:"created_at"`
	UpdatedAt        *string `json:"updated_at"`
	PaymentReference *string `json:"payment_reference"`
	Environment      string  `json:"environment"`

	EventID         int             `json:"event_id"`
	EventdateID     int             `json:"eventdate_id"`
	TotalAmount     string          `json:"total_amount"`
	RequiresPayment bool            `json:"requires_payment"`
	ExpiresAt       *string         `json:"expires_at"`
	CheckoutURL     *string         `json:"checkout_url"`
	Metadata        any             `json:"metadata"`
	Items           []*LineItem     `json:"items"`
	Tickets         []*IssuedTicket `json:"tickets"`
	TicketsURL      *string         `json:"tickets_url"`
	TicketsEmail    *TicketsEmail   `json:"tickets_email"`
}

// LineItem is one line of an order.
type LineItem struct {
	TicketID  int    `json:"ticket_id"`
	Name      string `json:"name"`
	Quantity  int    `json:"quantity"`
	UnitPrice string `json:"unit_price"`
	Amount    string `json:"amount"`
}

// IssuedTicket is one admission of a paid order.
type IssuedTicket struct {
	ID             string  `json:"id"`
	Code           string  `json:"code"`
	OrderReference string  `json:"order_reference"`
	TicketID       int     `json:"ticket_id"`
	TicketName     string  `json:"ticket_name"`
	EventID        int     `json:"event_id"`
	EventdateID    int     `json:"eventdate_id"`
	Position       int     `json:"position"`
	TicketsInOrder int     `json:"tickets_in_order"`
	Status         string  `json:"status"`
	CheckedInAt    *string `json:"checked_in_at"`
	Environment    string  `json:"environment"`
}

// TicketsEmail is where an order's ticket email stands.
type TicketsEmail struct {
	Status string  `json:"status"`
	SentAt *string `json:"sent_at"`
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
	Node   *Order
}
