package checkout

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
)

// Limits of an operator's order search (boxoffice orders list).
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 1000
)

// Search is an operator's or support's order search across apps; the zero
// value of a filter keeps everything.
type Search struct {
	AppID       int64
	Environment string
	Status      string
	// RefundReview keeps only orders whose payment is flagged for a
	// refund review (confirmed late, or for the wrong amount).
	RefundReview bool
	// RefundFailed keeps only orders with a refund whose money the
	// provider did not return.
	RefundFailed bool
	// Limit is 1 to MaxSearchLimit; 0 means DefaultSearchLimit.
	Limit int
}

// Record is an order as operators, support and the partner's own portal
// see it: the API's Order, and what the service keeps besides it.
type Record struct {
	// Order is the API's Order, items and tickets included.
	*OrderView
	AppID   int64
	Buyer   Buyer
	Payment Payment
	// Event and Date are what was bought; Events are the order's webhook
	// events, oldest first, with their delivery Attempts. Only Inspect
	// loads them (a search leaves them nil).
	Event    *store.Event
	Date     *store.EventDate
	Events   []store.WebhookEvent
	Attempts map[string][]store.WebhookAttempt
}

// Buyer is the customer as the checkout request named them.
type Buyer struct {
	Name, Email, Phone string
}

// Payment is how an order is paid and whether the payment waits for a
// refund review.
type Payment struct {
	Required bool
	// Provider and Reference name the live payment; "" when there is none.
	Provider  string
	Reference string
	// RefundReview is set when a payment was confirmed for an order that
	// could not take it (expired, failed, already settled) or for the
	// wrong amount; ReviewNote says which. The money is the buyer's until
	// someone refunds it.
	RefundReview bool
	ReviewNote   string
}

// record converts a stored order, with its API view, into a Record.
func record(o *store.Order, v *OrderView) *Record {
	r := &Record{OrderView: v, AppID: o.AppID,
		Buyer:   Buyer{Name: o.CustomerName, Email: o.CustomerEmail, Phone: o.CustomerPhone},
		Payment: Payment{Required: o.RequiresPayment, RefundReview: o.RefundReview}}
	if o.PaymentProvider != nil {
		r.Payment.Provider = *o.PaymentProvider
	}
	if o.PaymentReference != nil {
		r.Payment.Reference = *o.PaymentReference
	}
	if o.ReviewNote != nil {
		r.Payment.ReviewNote = *o.ReviewNote
	}
	return r
}

// SearchOrders returns the orders of q across apps, newest first (created_at,
// then reference, descending), with their items and tickets, read now. The
// number of statements is bounded whatever the number of orders
// (store.SearchOrders, then one batch of items and tickets).
// Errors: validation_failed (app, env, status, limit); not_found when
// q.AppID names no app.
func (s *Service) SearchOrders(ctx context.Context, q Search) ([]*Record, error) {
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	switch {
	case q.AppID < 0:
		return nil, apperr.Invalid("app", "%d is not a positive integer id", q.AppID)
	case q.Environment != "" && auth.CheckEnv(q.Environment) != nil:
		return nil, auth.CheckEnv(q.Environment)
	case q.Status != "" && !slices.Contains(listedStatuses, q.Status):
		return nil, apperr.Invalid("status", "%q is not one of pending, paid, completed, failed, expired", q.Status)
	case q.Limit < 1 || q.Limit > MaxSearchLimit:
		return nil, apperr.Invalid("limit", "%d is not between 1 and %d", q.Limit, MaxSearchLimit)
	}
	if q.AppID != 0 {
		if _, err := store.AppByID(ctx, s.DB, q.AppID); errors.Is(err, store.ErrNotFound) {
			return nil, apperr.New(apperr.NotFound, "app %d does not exist", q.AppID)
		} else if err != nil {
			return nil, err
		}
	}
	orders, err := store.SearchOrders(ctx, s.DB, store.OrderSearch{AppID: q.AppID, Environment: q.Environment,
		Status: q.Status, RefundReview: q.RefundReview, RefundFailed: q.RefundFailed, Limit: q.Limit})
	if err != nil {
		return nil, err
	}
	views, err := s.Views(ctx, s.DB, orders)
	if err != nil {
		return nil, err
	}
	out := make([]*Record, len(orders))
	for i, o := range orders {
		out[i] = record(o, views[i])
	}
	return out, nil
}

// Inspect returns one order whole, whichever app's it is: the API's Order
// with its items and tickets, the buyer, the payment and its refund
// review, what was bought, and every webhook event of the order with its
// delivery attempts, read now in a fixed number of statements. Callers
// that act for one app check Record.AppID.
// Errors: order_not_found.
func (s *Service) Inspect(ctx context.Context, ref string) (*Record, error) {
	o, err := s.byReference(ctx, ref)
	if err != nil {
		return nil, err
	}
	views, err := s.Views(ctx, s.DB, []*store.Order{o})
	if err != nil {
		return nil, err
	}
	r := record(o, views[0])
	if r.Event, err = store.EventByID(ctx, s.DB, o.EventID); err != nil {
		return nil, fmt.Errorf("order %s: event %d: %w", ref, o.EventID, err)
	}
	if r.Date, err = store.EventDateOfEvent(ctx, s.DB, o.EventDateID, o.EventID); err != nil {
		return nil, fmt.Errorf("order %s: date %d: %w", ref, o.EventDateID, err)
	}
	if r.Events, r.Attempts, err = store.OrderWebhookEvents(ctx, s.DB, o.ID); err != nil {
		return nil, err
	}
	return r, nil
}

// ExpireOrder is Expire for an operator or support, who act for whichever
// app the order belongs to: the same rule, the same event, the same
// answers.
// Errors: order_not_found; order_not_pending (as Expire).
func (s *Service) ExpireOrder(ctx context.Context, ref string) (*OrderView, error) {
	o, err := s.byReference(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.Expire(ctx, Caller{AppID: o.AppID, Environment: o.Environment}, ref)
}
