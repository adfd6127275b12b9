package checkout

import (
	"context"
	"errors"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// statusCodes are the numeric order statuses of DESIGN.md.
var statusCodes = map[string]int{
	store.OrderUnknown: 0, store.OrderPending: 1, store.OrderPaid: 2,
	store.OrderCompleted: 3, store.OrderFailed: 4, store.OrderExpired: 5,
}

// StatusCode returns the numeric code of an order status (0 for unknown).
func StatusCode(status string) int { return statusCodes[status] }

// referenceEnvironment tells an order's environment from its reference.
func referenceEnvironment(ref string) string {
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
	env := referenceEnvironment(ref)
	if env != "" && env != c.Environment {
		return nil, apperr.New(apperr.EnvironmentMismatch,
			"Order %s belongs to the %s environment; use a %s key to read it.", ref, env, env)
	}
	notFound := apperr.New(apperr.OrderNotFound, "Order %s was not found for this app.", ref)
	if env == "" || len(ref) > 64 {
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
