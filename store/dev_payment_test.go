package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestDevPayments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Second)
		p := &store.DevPayment{Reference: "ord_abc", Amount: 12000, Currency: "GHS", CallbackURL: "http://boxoffice.test/checkout/ord_abc/return",
			State: store.DevPaymentPending, CreatedAt: now, UpdatedAt: now}
		require.NoError(t, store.InsertDevPayment(ctx, db, p))
		require.ErrorIs(t, store.InsertDevPayment(ctx, db, p), store.ErrConflict)

		got, err := store.DevPaymentByReference(ctx, db, "ord_abc")
		require.NoError(t, err)
		require.Equal(t, p, got)

		paid, err := store.DecideDevPayment(ctx, db, "ord_abc", store.DevPaymentPaid, now.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, store.DevPaymentPaid, paid.State)
		require.True(t, paid.UpdatedAt.Equal(now.Add(time.Minute)))
		again, err := store.DecideDevPayment(ctx, db, "ord_abc", store.DevPaymentDeclined, now.Add(2*time.Minute))
		require.NoError(t, err)
		require.Equal(t, store.DevPaymentPaid, again.State, "the first decision stands")
		require.True(t, again.UpdatedAt.Equal(now.Add(time.Minute)))

		_, err = store.DevPaymentByReference(ctx, db, "ord_nope")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = store.DecideDevPayment(ctx, db, "ord_nope", store.DevPaymentPaid, now)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
