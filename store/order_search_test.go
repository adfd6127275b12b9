package store_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// statements is a query hook that keeps the SQL of every statement.
type statements struct {
	mu  sync.Mutex
	sql []string
}

func (s *statements) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (s *statements) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sql = append(s.sql, e.Query)
}

func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sql
	s.sql = nil
	return out
}

// TestSearchOrders checks the operators' order search against every order
// sifted and sorted by hand, for each way of asking, and that each way
// reads index ranges in listing order, never a whole table and never a
// sort: at most ten statements, each an index scan.
func TestSearchOrders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c := storetest.MustCatalog(t, db, nil)
		apps := []*store.App{storetest.MustApp(t, db), storetest.MustApp(t, db)}
		statuses := []string{store.OrderPending, store.OrderPaid, store.OrderCompleted, store.OrderFailed, store.OrderExpired}
		start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
		var all []*store.Order
		for i := range 60 {
			env := []string{store.EnvTest, store.EnvLive}[i%2]
			o := &store.Order{
				Reference: fmt.Sprintf("ord_search_%02d", i), AppID: apps[i%3%2].ID, Environment: env,
				Status: statuses[i%5], EventID: c.Event.ID, EventDateID: c.Date.ID, Currency: "GHS", TotalAmount: 100,
				// Buyers' emails are stored as given: one buyer in two cases.
				CustomerName: "Ama", CustomerEmail: []string{"ama@example.com", "Kofi@Example.COM", "kofi@example.com", "kofi+2@example.com"}[i%4],
				CustomerPhone: "+233241234567",
				SuccessURL:    "https://shop.example/ok", CancelURL: "https://shop.example/cancel",
				TicketsEmailStatus: store.TicketsEmailNotSent,
				// Pairs share an instant: the reference breaks the tie.
				CreatedAt: start.Add(time.Duration(i/2) * time.Minute), UpdatedAt: start,
			}
			require.NoError(t, store.InsertOrder(ctx, db, o, nil))
			if i%7 == 3 {
				flagged, err := store.FlagRefundReview(ctx, db, o.Reference, "late", o.TotalAmount, o.Currency, start)
				require.NoError(t, err)
				require.True(t, flagged)
				o.RefundReview = true
			}
			all = append(all, o)
		}
		if db.Postgres() {
			_, err := db.ExecContext(ctx, "ANALYZE orders")
			require.NoError(t, err)
		}
		want := func(s store.OrderSearch) []string {
			var out []*store.Order
			for _, o := range all {
				if (s.AppID == 0 || o.AppID == s.AppID) && (s.Environment == "" || o.Environment == s.Environment) &&
					(s.Status == "" || o.Status == s.Status) && (!s.RefundReview || o.RefundReview) &&
					strings.Contains(o.Reference, s.ReferenceContains) &&
					(s.CustomerEmail == "" || strings.EqualFold(o.CustomerEmail, s.CustomerEmail)) {
					out = append(out, o)
				}
			}
			slices.SortFunc(out, func(a, b *store.Order) int {
				return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.Reference, a.Reference))
			})
			refs := []string{}
			for _, o := range out[:min(len(out), s.Limit)] {
				refs = append(refs, o.Reference)
			}
			return refs
		}
		hook := &statements{}
		db.AddQueryHook(hook)
		for _, app := range []int64{0, apps[0].ID, apps[1].ID} {
			for _, env := range []string{"", store.EnvTest, store.EnvLive} {
				for _, status := range append([]string{""}, statuses...) {
					for _, review := range []bool{false, true} {
						// LIKE's wildcards match themselves: "_1" is not "any character, then 1".
						for _, contains := range []string{"", "_1", "%"} {
							// A search by email is one app's (the portal's).
							for _, email := range []string{"", "KOFI@example.com"}[:1+min(int(app), 1)] {
								for _, limit := range []int{1, 7, 100} {
									s := store.OrderSearch{AppID: app, Environment: env, Status: status, RefundReview: review,
										ReferenceContains: contains, CustomerEmail: email, Limit: limit}
									name := fmt.Sprintf("app=%d env=%q status=%q review=%v contains=%q email=%q limit=%d",
										app, env, status, review, contains, email, limit)
									hook.take()
									got, err := store.SearchOrders(ctx, db, s)
									require.NoError(t, err, name)
									refs := []string{}
									for _, o := range got {
										refs = append(refs, o.Reference)
										require.Equal(t, time.UTC, o.CreatedAt.Location(), name)
									}
									require.Equal(t, want(s), refs, name)
									queries := hook.take()
									require.LessOrEqual(t, len(queries), 10, name)
									if limit == 7 {
										index := ""
										switch {
										case review:
											index = "orders_refund_review_idx"
										case email != "":
											index = "orders_buyer_email_idx"
										}
										for _, q := range queries {
											requireIndexRange(t, db, q, index, name)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	})
}

// requireIndexRange checks that the database answers query by reading an
// index in the listing's order: no table scan, no sort; when index is
// given, from that index (flagged orders from their own partial index,
// a buyer's from the index of buyers' emails), whatever else narrows the
// search.
func requireIndexRange(t *testing.T, db *store.DB, query, index, name string) {
	t.Helper()
	ctx := context.Background()
	var plan []string
	if db.Postgres() {
		// Tiny tables are cheaper to scan whole; forbid that (and sorting)
		// so the plan shows whether an index can serve the query at all.
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "SET LOCAL enable_sort = off"); err != nil {
				return err
			}
			return tx.NewRaw("EXPLAIN "+query).Scan(ctx, &plan)
		})
		require.NoError(t, err)
		text := strings.Join(plan, "\n")
		require.NotContains(t, text, "Seq Scan", "%s\n%s", name, text)
		require.NotContains(t, text, "Sort", "%s\n%s", name, text)
		if index != "" {
			require.Contains(t, text, index, "%s\n%s", name, text)
		}
		return
	}
	var rows []struct {
		ID      int    `bun:"id"`
		Parent  int    `bun:"parent"`
		NotUsed int    `bun:"notused"`
		Detail  string `bun:"detail"`
	}
	require.NoError(t, db.NewRaw("EXPLAIN QUERY PLAN "+query).Scan(ctx, &rows))
	for _, r := range rows {
		plan = append(plan, r.Detail)
	}
	text := strings.Join(plan, "\n")
	require.Contains(t, text, "USING INDEX", "%s\n%s", name, text)
	require.NotContains(t, text, "TEMP B-TREE", "%s\n%s", name, text)
	if index != "" {
		require.Contains(t, text, index, "%s\n%s", name, text)
	}
}

// TestSearchOrdersRefundFailed: the orders with a failed refund, newest
// first, sifted by the other filters; a refund that succeeded or waits
// does not list its order.
func TestSearchOrdersRefundFailed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c := storetest.MustCatalog(t, db, nil)
		apps := []*store.App{storetest.MustApp(t, db), storetest.MustApp(t, db)}
		start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
		refund := func(o *store.Order, n int, status string) {
			r := &store.Refund{PublicID: fmt.Sprintf("rfd_%s_%d", o.Reference, n), OrderID: o.ID, AppID: o.AppID,
				Environment: o.Environment, Amount: 10, Currency: "GHS", Reason: store.RefundOther, Status: status,
				CreatedAt: start, UpdatedAt: start}
			require.NoError(t, store.InsertRefund(ctx, db, r))
		}
		var orders []*store.Order
		for i := range 8 {
			o := &store.Order{
				Reference: fmt.Sprintf("ord_failed_%02d", i), AppID: apps[i%2].ID, Environment: []string{store.EnvTest, store.EnvLive}[i/4],
				Status: store.OrderPaid, EventID: c.Event.ID, EventDateID: c.Date.ID, Currency: "GHS", TotalAmount: 100,
				CustomerName: "Ama", CustomerEmail: "ama@example.com", CustomerPhone: "+233241234567",
				SuccessURL: "https://shop.example/ok", CancelURL: "https://shop.example/cancel",
				TicketsEmailStatus: store.TicketsEmailNotSent, CreatedAt: start.Add(time.Duration(i) * time.Minute), UpdatedAt: start,
			}
			require.NoError(t, store.InsertOrder(ctx, db, o, nil))
			orders = append(orders, o)
		}
		// 0, 3, 5 and 6 have a failed refund (3 two of them); 1 one that
		// succeeded, 2 one that waits.
		for _, i := range []int{0, 3, 5, 6} {
			refund(orders[i], 1, store.RefundFailed)
		}
		refund(orders[3], 2, store.RefundFailed)
		refund(orders[1], 1, store.RefundSucceeded)
		refund(orders[2], 1, store.RefundPending)
		tests := []struct {
			name string
			s    store.OrderSearch
			want []string
		}{
			{name: "All", s: store.OrderSearch{RefundFailed: true, Limit: 10},
				want: []string{"ord_failed_06", "ord_failed_05", "ord_failed_03", "ord_failed_00"}},
			{name: "Limit", s: store.OrderSearch{RefundFailed: true, Limit: 2}, want: []string{"ord_failed_06", "ord_failed_05"}},
			{name: "Live", s: store.OrderSearch{RefundFailed: true, Environment: store.EnvLive, Limit: 10},
				want: []string{"ord_failed_06", "ord_failed_05"}},
			{name: "App", s: store.OrderSearch{RefundFailed: true, AppID: apps[1].ID, Limit: 10},
				want: []string{"ord_failed_05", "ord_failed_03"}},
			{name: "Status", s: store.OrderSearch{RefundFailed: true, Status: store.OrderCompleted, Limit: 10}, want: []string{}},
			{name: "Email", s: store.OrderSearch{RefundFailed: true, AppID: apps[1].ID, CustomerEmail: "AMA@Example.com", Limit: 10},
				want: []string{"ord_failed_05", "ord_failed_03"}},
			{name: "OtherEmail", s: store.OrderSearch{RefundFailed: true, AppID: apps[1].ID, CustomerEmail: "kofi@example.com", Limit: 10},
				want: []string{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := store.SearchOrders(ctx, db, tt.s)
				require.NoError(t, err)
				refs := []string{}
				for _, o := range got {
					refs = append(refs, o.Reference)
				}
				require.Equal(t, tt.want, refs)
			})
		}
		t.Run("ErrEmailAcrossApps", func(t *testing.T) {
			_, err := store.SearchOrders(ctx, db, store.OrderSearch{CustomerEmail: "ama@example.com", Limit: 10})
			require.ErrorContains(t, err, "a search by buyer's email needs an app")
		})
	})
}
