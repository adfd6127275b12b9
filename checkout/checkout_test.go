package checkout_test

import (
	"context"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func validInput() *checkout.Input {
	return &checkout.Input{
		EventID: ptr(1), EventdateID: ptr(1),
		Items:      []*checkout.Item{{TicketID: ptr(1), Quantity: ptr(1)}},
		Customer:   &checkout.Customer{Name: ptr("Ama"), Email: ptr("ama@example.com"), Phone: ptr("0241234567")},
		SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
	}
}

func TestCreate_ErrCheckoutUnavailable(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t, "sqlite")
	now := func() time.Time { return time.Now().UTC() }
	svc := &checkout.Service{DB: db, Idempotency: &idempotency.Service{DB: db, Now: now}, Now: now, Config: checkout.DefaultConfig()}
	require.NoError(t, db.Close()) // the database goes away

	_, _, err := svc.Create(context.Background(), checkout.Caller{AppID: 1, Environment: store.EnvTest}, checkout.Request{Key: "k", Input: validInput()})
	ae := apperr.From(err)
	require.Equal(t, apperr.CheckoutUnavailable, ae.Code)
	require.Equal(t, 503, ae.Status())
	require.Equal(t, "Checkout is temporarily unavailable; retry shortly, then contact support.", ae.Message)
	require.Error(t, ae.Cause, "the cause is kept for the logs")

	_, _, err = svc.Create(context.Background(), checkout.Caller{AppID: 1, Environment: store.EnvTest}, checkout.Request{Input: validInput()})
	require.Equal(t, apperr.MissingIdempotencyKey, apperr.CodeOf(err), "header errors come first, database or not")
}

func TestStatusCode(t *testing.T) {
	t.Parallel()
	for status, code := range map[string]int{"unknown": 0, "pending": 1, "paid": 2, "completed": 3, "failed": 4, "expired": 5, "weird": 0} {
		require.Equal(t, code, checkout.StatusCode(status), status)
	}
}
