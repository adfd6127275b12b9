package model

// Order is spec section 2.5.
type Order struct {
	Reference        string  `json:"reference"`
	Status           string  `json:"status"`
	StatusCode       int     `json:"status_code"`
	Currency         *string `json:"currency"`
	CreatedAt        *string `json:"created_at"`
	UpdatedAt        *string `json:"updated_at"`
	PaymentReference *string `json:"payment_reference"`
	Environment      string  `json:"environment"`
}
