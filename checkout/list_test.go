package checkout_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestOrders: the order list pages newest first with cursors that new
// orders do not shift, and refuses bad parameters by name.
func TestOrders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		svc := checkouttest.MustNew(t, db).Service
		cat := storetest.MustCatalog(t, db, nil)
		app := storetest.MustApp(t, db)
		caller := checkout.Caller{AppID: app.ID, Environment: store.EnvLive}
		base := time.Now().UTC().Add(-time.Hour)
		var refs []string // oldest first
		for i := range 7 {
			o := storetest.MustOrder(t, db, app, cat, fmt.Sprintf("ord_orders_%d_%s", i, cat.Event.Slug))
			_, err := db.NewUpdate().Model((*store.Order)(nil)).Set("created_at = ?", base.Add(time.Duration(i)*time.Second)).
				Where("id = ?", o.ID).Exec(ctx)
			require.NoError(t, err)
			refs = append(refs, o.Reference)
		}
		page := func(r checkout.OrdersRequest) ([]string, *checkout.OrdersPage) {
			t.Helper()
			p, err := svc.Orders(ctx, caller, r)
			require.NoError(t, err)
			out := []string{}
			for _, o := range p.Orders {
				out = append(out, o.Reference)
			}
			require.Len(t, p.Cursors, len(out))
			return out, p
		}

		got, p := page(checkout.OrdersRequest{Limit: ptr(3)})
		require.Equal(t, []string{refs[6], refs[5], refs[4]}, got)
		require.True(t, p.HasMore)
		require.Equal(t, 3, p.Limit)
		// A new order arrives: it is newer than every page, so the next
		// page is unchanged.
		storetest.MustOrder(t, db, app, cat, "ord_orders_new_"+cat.Event.Slug)
		got, p = page(checkout.OrdersRequest{Limit: ptr(3), Cursor: *p.NextCursor()})
		require.Equal(t, []string{refs[3], refs[2], refs[1]}, got)
		got, p = page(checkout.OrdersRequest{Limit: ptr(3), Cursor: *p.NextCursor()})
		require.Equal(t, []string{refs[0]}, got)
		require.False(t, p.HasMore)
		require.Nil(t, p.NextCursor(), "the last page has no next cursor")

		_, p = page(checkout.OrdersRequest{})
		require.Equal(t, 20, p.Limit, "default limit")
		got, _ = page(checkout.OrdersRequest{Status: store.OrderPending})
		require.Empty(t, got)
		got, _ = page(checkout.OrdersRequest{EventID: ptr(int(cat.Event.ID)), EventdateID: ptr(int(cat.Date.ID)), Status: store.OrderPaid, Limit: ptr(2)})
		require.Len(t, got, 2)
		other, err := svc.Orders(ctx, checkout.Caller{AppID: app.ID, Environment: store.EnvTest}, checkout.OrdersRequest{})
		require.NoError(t, err)
		require.Empty(t, other.Orders, "test and live never mix")

		_, err = svc.Orders(ctx, caller, checkout.OrdersRequest{Cursor: p.Cursors[0]})
		require.NoError(t, err, "the newest order's cursor")
		changes, err := svc.Changes(ctx, caller, checkout.ChangesRequest{})
		require.NoError(t, err)
		tampered := []byte(p.Cursors[0])
		tampered[len(tampered)-1] ^= 2
		for _, tt := range []struct {
			name string
			req  checkout.OrdersRequest
			want apperr.Details
		}{
			{"ErrStatus", checkout.OrdersRequest{Status: "refunded"}, apperr.Details{"status": {"must be one of pending, paid, completed, failed, expired"}}},
			{"ErrStatusUnknown", checkout.OrdersRequest{Status: "unknown"}, apperr.Details{"status": {"must be one of pending, paid, completed, failed, expired"}}},
			{"ErrEventID", checkout.OrdersRequest{EventID: ptr(0)}, apperr.Details{"event_id": {"must be a positive integer"}}},
			{"ErrEventdateID", checkout.OrdersRequest{EventdateID: ptr(-1)}, apperr.Details{"eventdate_id": {"must be a positive integer"}}},
			{"ErrLimitLow", checkout.OrdersRequest{Limit: ptr(0)}, apperr.Details{"limit": {"must be between 1 and 100"}}},
			{"ErrLimitHigh", checkout.OrdersRequest{Limit: ptr(101)}, apperr.Details{"limit": {"must be between 1 and 100"}}},
			{"ErrCursorGarbage", checkout.OrdersRequest{Cursor: "%%%"}, apperr.Details{"cursor": {"is not a cursor of this list"}}},
			{"ErrCursorTampered", checkout.OrdersRequest{Cursor: string(tampered)}, apperr.Details{"cursor": {"is not a cursor of this list"}}},
			{"ErrCursorIsASince", checkout.OrdersRequest{Cursor: changes.NextSince}, apperr.Details{"cursor": {"is not a cursor of this list"}}},
			{"ErrAllAtOnce", checkout.OrdersRequest{Status: "x", Limit: ptr(500), Cursor: "x"}, apperr.Details{
				"status": {"must be one of pending, paid, completed, failed, expired"},
				"limit":  {"must be between 1 and 100"}, "cursor": {"is not a cursor of this list"}}},
		} {
			_, err := svc.Orders(ctx, caller, tt.req)
			require.Equal(t, apperr.ValidationFailed, apperr.CodeOf(err), "%s: %v", tt.name, err)
			require.Equal(t, "The request payload failed validation.", apperr.From(err).Message)
			require.Equal(t, tt.want, apperr.From(err).Details, tt.name)
		}
	})
}
