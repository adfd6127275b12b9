package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestRefundWrites: the writes that make the refund rule hold under
// concurrency each decide in the database, so a second caller with stale
// reads changes nothing.
func TestRefundWrites(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Second)
		cat := storetest.MustCatalog(t, db, nil)
		app := storetest.MustApp(t, db)
		o := storetest.MustOrder(t, db, app, cat, "ord_refundwrites_"+cat.Event.Slug) // 150.00
		ts := []store.IssuedTicket{
			{PublicID: "itk_w1_" + cat.Event.Slug, Code: "CODEW1" + cat.Event.Slug, Position: 1},
			{PublicID: "itk_w2_" + cat.Event.Slug, Code: "CODEW2" + cat.Event.Slug, Position: 2, Inside: true},
			{PublicID: "itk_w3_" + cat.Event.Slug, Code: "CODEW3" + cat.Event.Slug, Position: 3, Status: store.TicketVoid},
		}
		for i := range ts {
			ts[i].OrderID, ts[i].AppID, ts[i].Environment = o.ID, app.ID, o.Environment
			ts[i].TicketID, ts[i].TicketName, ts[i].EventID, ts[i].EventDateID = cat.Ticket.ID, "Regular", cat.Event.ID, cat.Date.ID
			ts[i].TicketsInOrder = 3
			if ts[i].Status == "" {
				ts[i].Status = store.TicketValid
			}
			ts[i].CreatedAt, ts[i].UpdatedAt = now, now
		}
		require.NoError(t, store.InsertIssuedTickets(ctx, db, ts))
		r := &store.Refund{PublicID: "rfd_w_" + cat.Event.Slug, OrderID: o.ID, AppID: app.ID, Environment: o.Environment,
			Amount: 10000, Currency: "GHS", Reason: store.RefundRequestedByCustomer, Status: store.RefundPending,
			CreatedAt: now, UpdatedAt: now}
		require.NoError(t, store.InsertRefund(ctx, db, r))

		t.Run("CommitRefundAmount", func(t *testing.T) {
			ok, err := store.CommitRefundAmount(ctx, db, o.ID, 10000)
			require.NoError(t, err)
			require.True(t, ok)
			ok, err = store.CommitRefundAmount(ctx, db, o.ID, 5001)
			require.NoError(t, err)
			require.False(t, ok, "150.00 cannot take 100.00 and 50.01")
			ok, err = store.CommitRefundAmount(ctx, db, o.ID, 5000)
			require.NoError(t, err)
			require.True(t, ok, "exactly the total fits")
			_, err = db.NewUpdate().Model((*store.Order)(nil)).Set("refund_committed = 10000").Where("id = ?", o.ID).Exec(ctx)
			require.NoError(t, err)
		})

		t.Run("CancelTickets", func(t *testing.T) {
			got, err := store.CancelTickets(ctx, db, r.ID, []int64{ts[2].ID, ts[1].ID, ts[0].ID}, "duplicate", now)
			require.NoError(t, err)
			require.Len(t, got, 1, "the ticket inside and the void one are left as they are")
			require.Equal(t, ts[0].ID, got[0].ID)
			require.Equal(t, r.ID, *got[0].RefundID)
			again, err := store.CancelTickets(ctx, db, r.ID+1, []int64{ts[0].ID}, "other", now)
			require.NoError(t, err)
			require.Empty(t, again, "a ticket is cancelled once")
			byRefund, err := store.TicketsOfRefunds(ctx, db, []int64{r.ID})
			require.NoError(t, err)
			require.Len(t, byRefund[r.ID], 1)
		})

		t.Run("SettleRefund", func(t *testing.T) {
			ok, err := store.SettleRefund(ctx, db, r, store.RefundSucceeded, nil, nil, now)
			require.NoError(t, err)
			require.True(t, ok)
			why := "late"
			ok, err = store.SettleRefund(ctx, db, r, store.RefundFailed, &why, nil, now)
			require.NoError(t, err)
			require.False(t, ok, "a refund is settled once")
			got, err := store.OrderByID(ctx, db, o.ID)
			require.NoError(t, err)
			require.Equal(t, int64(10000), got.RefundedAmount)
			require.Equal(t, int64(10000), got.RefundCommitted)
			sent, err := store.MarkRefundSent(ctx, db, r.ID, now)
			require.NoError(t, err)
			require.False(t, sent, "a settled refund is not sent")
		})

		t.Run("LockOrder", func(t *testing.T) {
			got, err := store.LockOrder(ctx, db, o.ID)
			require.NoError(t, err)
			require.Equal(t, o.Reference, got.Reference)
			_, err = store.LockOrder(ctx, db, o.ID+1_000_000)
			require.ErrorIs(t, err, store.ErrNotFound)
			require.NoError(t, store.LockTicketsOfOrder(ctx, db, o.ID))
		})

		t.Run("FailedRefundCounts", func(t *testing.T) {
			counts, err := store.FailedRefundCounts(ctx, db)
			require.NoError(t, err)
			require.Contains(t, counts, store.EnvTest)
			require.Contains(t, counts, store.EnvLive)
		})
	})
}
