package checkout_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestInspectAndSearch: an operator's search and an order's whole record
// read a fixed number of statements, however many orders, items, tickets,
// events and attempts there are (each level is one batch), and refuse bad
// filters by name.
func TestInspectAndSearch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		f := checkouttest.MustNew(t, db)
		svc := f.Service
		cat := storetest.MustCatalog(t, db, nil)
		app := storetest.MustApp(t, db)
		// events adds n webhook events of order o, each with two attempts.
		events := func(o *store.Order, n int) {
			t.Helper()
			for i := range n {
				id := fmt.Sprintf("evt_%s_%d", o.Reference, i)
				require.NoError(t, store.InsertWebhookEvent(ctx, db, &store.WebhookEvent{ID: id, AppID: app.ID, Environment: o.Environment,
					Type: "order.paid", OrderID: &o.ID, Sequence: int64(i + 1), Payload: "{}", Status: store.WebhookPending, CreatedAt: f.Now}))
				for a := range 2 {
					code := int64(500 + a)
					require.NoError(t, store.RecordWebhookAttempt(ctx, db, &store.WebhookAttempt{EventID: id, Attempt: int64(a + 1),
						URL: "https://hooks.example/in", StatusCode: &code, CreatedAt: f.Now}, store.WebhookPending, f.Now))
				}
			}
		}
		small := storetest.MustOrder(t, db, app, cat, "ord_inspect_small_"+cat.Event.Slug)
		events(small, 1)
		big := storetest.MustOrder(t, db, app, cat, "ord_inspect_big_"+cat.Event.Slug)
		events(big, 5)

		queries := storetest.Count(db)
		statements := func(fn func()) int {
			t.Helper()
			queries.Reset()
			fn()
			return queries.N()
		}
		inspect := func(ref string) *checkout.Record {
			t.Helper()
			r, err := svc.Inspect(ctx, ref)
			require.NoError(t, err)
			return r
		}
		var r *checkout.Record
		one := statements(func() { r = inspect(small.Reference) })
		require.Len(t, r.Events, 1)
		many := statements(func() { r = inspect(big.Reference) })
		require.Len(t, r.Events, 5)
		require.Len(t, r.Attempts[r.Events[4].ID], 2)
		require.Equal(t, one, many, "an order's record costs the same whatever it holds")
		require.LessOrEqual(t, many, 8)
		require.Equal(t, app.ID, r.AppID)
		require.Equal(t, "Ama Mensah", r.Buyer.Name)
		require.Equal(t, cat.Event.Name, r.Event.Name)
		require.Len(t, r.Items, 1)

		search := func(q checkout.Search) []*checkout.Record {
			t.Helper()
			got, err := svc.SearchOrders(ctx, q)
			require.NoError(t, err)
			return got
		}
		few := statements(func() { require.Len(t, search(checkout.Search{AppID: app.ID, Limit: 2}), 2) })
		for i := range 8 {
			storetest.MustOrder(t, db, app, cat, fmt.Sprintf("ord_inspect_more_%d_%s", i, cat.Event.Slug))
		}
		more := statements(func() { require.Len(t, search(checkout.Search{AppID: app.ID, Limit: 10}), 10) })
		require.Equal(t, few, more, "a page of orders costs the same whatever its size")

		t.Run("Errors", func(t *testing.T) {
			for _, tt := range []struct {
				name  string
				q     checkout.Search
				field string
			}{
				{"ErrEnv", checkout.Search{Environment: "prod"}, "env"},
				{"ErrStatus", checkout.Search{Status: "unknown"}, "status"},
				{"ErrLimit", checkout.Search{Limit: checkout.MaxSearchLimit + 1}, "limit"},
				{"ErrApp", checkout.Search{AppID: -1}, "app"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					_, err := svc.SearchOrders(ctx, tt.q)
					require.Equal(t, apperr.ValidationFailed, apperr.CodeOf(err))
					require.Contains(t, apperr.From(err).Details, tt.field)
				})
			}
			_, err := svc.SearchOrders(ctx, checkout.Search{AppID: 1 << 40})
			require.Equal(t, apperr.NotFound, apperr.CodeOf(err))
			_, err = svc.Inspect(ctx, "ord_nope")
			require.Equal(t, apperr.OrderNotFound, apperr.CodeOf(err))
			_, err = svc.ExpireOrder(ctx, small.Reference)
			require.Equal(t, apperr.OrderNotPending, apperr.CodeOf(err), "a paid order")
			require.Equal(t, "Order "+small.Reference+" is paid; only a pending order can be expired.", apperr.From(err).Message)
		})
	})
}
