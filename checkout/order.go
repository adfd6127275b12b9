package checkout

import (
	"context"
	"errors"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
)

// statusCodes are the numeric order statuses of DESIGN.md.
var statusCodes = map[string]int{
	store.OrderUnknown: 0, store.OrderPending: 1, store.OrderPaid: 2,
	store.OrderCompleted: 3, store.OrderFailed: 4, store.OrderExpired: 5,
}

// StatusCode returns the numeric code of an order status (0 for unknown).
func StatusCode(status string) int { return statusCodes[status] }

// ReferenceEnvironment tells an order's environment from its reference:
// test for sbx_…, live for ord_…, "" for anything that cannot be a
// reference (another prefix, or not store.PlausibleReference), which
// therefore names no order.
func ReferenceEnvironment(ref string) string {
	if !store.PlausibleReference(ref) {
		return ""
	}
	switch {
	case strings.HasPrefix(ref, SandboxPrefix):
		return store.EnvTest
	case strings.HasPrefix(ref, LivePrefix):
		return store.EnvLive
	}
	return ""
}

// Order returns an order of the calling app.
// Errors: environment_mismatch when the reference belongs to the other
// environment; order_not_found when it is not the caller's order.
func (s *Service) Order(ctx context.Context, c Caller, ref string) (*store.Order, error) {
	env := ReferenceEnvironment(ref)
	if env != "" && env != c.Environment {
		return nil, apperr.New(apperr.EnvironmentMismatch,
			"Order %s belongs to the %s environment; use a %s key to read it.", ref, env, env)
	}
	notFound := apperr.New(apperr.OrderNotFound, "Order %s was not found for this app.", ref)
	if env == "" {
		return nil, notFound
	}
	o, err := store.OrderByReference(ctx, s.DB, ref)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (o.AppID != c.AppID || o.Environment != c.Environment)) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// OrderView is spec section 2.5, the Order webhook payloads show; both APIs
// show it as graph/model's Order, converted from this one.
type OrderView struct {
	Reference        string  `json:"reference"`
	Status           string  `json:"status"`
	StatusCode       int     `json:"status_code"`
	Currency         *string `json:"currency"`
	CreatedAt        *string `json:"created_at"`
	UpdatedAt        *string `json:"updated_at"`
	PaymentReference *string `json:"payment_reference"`
	Environment      string  `json:"environment"`
}

// View converts a stored order into the API's Order.
func View(o *store.Order) *OrderView {
	created, updated := catalog.FormatStamp(o.CreatedAt), catalog.FormatStamp(o.UpdatedAt)
	currency := o.Currency
	return &OrderView{
		Reference: o.Reference, Status: o.Status, StatusCode: StatusCode(o.Status),
		Currency: &currency, CreatedAt: &created, UpdatedAt: &updated,
		PaymentReference: o.PaymentReference, Environment: o.Environment,
	}
}
