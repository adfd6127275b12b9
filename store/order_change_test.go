package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// readChanges reads an app's live changes after cursor until none are
// left, once every change committed so far is readable, and returns the
// references in the order read with the last cursor.
func readChanges(t *testing.T, db *store.DB, app *store.App, after store.ChangeCursor) ([]string, store.ChangeCursor) {
	t.Helper()
	storetest.ChangesSettled(t, db)
	var refs []string
	for {
		got, err := store.OrderChangesAfter(context.Background(), db, app.ID, store.EnvLive, after, 2)
		require.NoError(t, err)
		if len(got) == 0 {
			return refs, after
		}
		for _, ch := range got {
			require.Equal(t, app.ID, ch.Order.AppID)
			refs = append(refs, ch.Order.Reference)
			after = ch.Cursor
		}
	}
}

// TestOrderChangeLog: every write of an order, by any statement, moves it
// to the end of its app's log; other apps and environments have logs of
// their own.
func TestOrderChangeLog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := storetest.MustCatalog(t, db, nil)
		app, other := storetest.MustApp(t, db), storetest.MustApp(t, db)
		a := storetest.MustOrder(t, db, app, c, "ord_log_a_"+c.Event.Slug)
		b := storetest.MustOrder(t, db, app, c, "ord_log_b_"+c.Event.Slug)
		storetest.MustOrder(t, db, other, c, "ord_log_other_"+c.Event.Slug)
		test := storetest.MustOrder(t, db, app, c, "sbx_log_test_"+c.Event.Slug)
		_, err := db.NewUpdate().Model((*store.Order)(nil)).Set("environment = ?", store.EnvTest).Where("id = ?", test.ID).Exec(ctx)
		require.NoError(t, err)

		refs, cur := readChanges(t, db, app, store.ChangeCursor{})
		require.Equal(t, []string{a.Reference, b.Reference}, refs, "inserts are changes, in order; test orders are not live")

		// The ticket email's state, the door touching updated_at, a
		// status change: each moves the order to the end.
		require.NoError(t, store.SetTicketsEmail(ctx, db, a.ID, store.TicketsEmailSent, time.Now().UTC()))
		refs, cur = readChanges(t, db, app, cur)
		require.Equal(t, []string{a.Reference}, refs)
		_, err = db.NewUpdate().Model((*store.Order)(nil)).Set("updated_at = ?", time.Now().UTC().Add(time.Second)).
			Where("id = ?", b.ID).Exec(ctx)
		require.NoError(t, err)
		_, err = db.NewUpdate().Model((*store.Order)(nil)).Set("status = ?", store.OrderExpired).Where("id = ?", a.ID).Exec(ctx)
		require.NoError(t, err)
		refs, cur = readChanges(t, db, app, cur)
		require.Equal(t, []string{b.Reference, a.Reference}, refs)

		// Two writes of one order in one transaction are one change.
		require.NoError(t, db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, id := range []int64{b.ID, a.ID, b.ID} {
				if _, err := tx.NewUpdate().Model((*store.Order)(nil)).Set("updated_at = ?", time.Now().UTC()).
					Where("id = ?", id).Exec(ctx); err != nil {
					return err
				}
			}
			return nil
		}))
		refs, cur = readChanges(t, db, app, cur)
		require.ElementsMatch(t, []string{a.Reference, b.Reference}, refs)
		refs, _ = readChanges(t, db, app, cur)
		require.Empty(t, refs, "nothing after the last change")

		got, err := store.OrderChangesAfter(ctx, db, app.ID, store.EnvTest, store.ChangeCursor{}, 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, test.Reference, got[0].Order.Reference)
	})
}

// TestOrderChangesWaitForOlderTransactions (PostgreSQL): a change
// committed while an older transaction is still open is not read until
// that transaction ends, since the older one may still write a change that
// sorts before it; a reader that had moved past it would miss that change
// for good.
func TestOrderChangesWaitForOlderTransactions(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		if kind != "postgres" {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			db := storetest.MustOpen(t, kind)
			ctx := context.Background()
			c := storetest.MustCatalog(t, db, nil)
			app := storetest.MustApp(t, db)
			a := storetest.MustOrder(t, db, app, c, "ord_wait_a")
			b := storetest.MustOrder(t, db, app, c, "ord_wait_b")
			refs, cur := readChanges(t, db, app, store.ChangeCursor{})
			require.Len(t, refs, 2)

			older, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer older.Rollback() //nolint:errcheck // committed below
			var xid string
			require.NoError(t, older.NewRaw("SELECT pg_current_xact_id()::text").Scan(ctx, &xid))

			_, err = db.NewUpdate().Model((*store.Order)(nil)).Set("status = ?", store.OrderExpired).Where("id = ?", b.ID).Exec(ctx)
			require.NoError(t, err)
			held, err := store.OrderChangesAfter(ctx, db, app.ID, store.EnvLive, cur, 10)
			require.NoError(t, err)
			require.Empty(t, held, "b's change waits while an older transaction (%s) is open", xid)

			_, err = older.NewUpdate().Model((*store.Order)(nil)).Set("status = ?", store.OrderFailed).Where("id = ?", a.ID).Exec(ctx)
			require.NoError(t, err)
			require.NoError(t, older.Commit())
			refs, _ = readChanges(t, db, app, cur)
			require.Equal(t, []string{a.Reference, b.Reference}, refs, "the older transaction's change sorts first")
		})
	}
}

// TestListOrders: newest first by created_at then reference, filters, and
// pages after a key that new orders do not shift.
func TestListOrders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c1, c2 := storetest.MustCatalog(t, db, nil), storetest.MustCatalog(t, db, nil)
		app := storetest.MustApp(t, db)
		base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
		// Orders 0..5, two per instant: the later reference first within one.
		var refs []string
		for i := range 6 {
			cat := c1
			if i%3 == 2 {
				cat = c2
			}
			o := storetest.MustOrder(t, db, app, cat, fmt.Sprintf("ord_list_%d_%s", i, c1.Event.Slug))
			status := store.OrderPaid
			if i%2 == 1 {
				status = store.OrderPending
			}
			_, err := db.NewUpdate().Model((*store.Order)(nil)).Set("created_at = ?", base.Add(time.Duration(i/2)*time.Millisecond)).
				Set("status = ?", status).Where("id = ?", o.ID).Exec(ctx)
			require.NoError(t, err)
			refs = append(refs, o.Reference)
		}
		list := func(f store.OrderFilter) []string {
			t.Helper()
			f.AppID, f.Environment = app.ID, store.EnvLive
			if f.Limit == 0 {
				f.Limit = 100
			}
			got, err := store.ListOrders(ctx, db, f)
			require.NoError(t, err)
			out := []string{}
			for _, o := range got {
				out = append(out, o.Reference)
			}
			return out
		}
		require.Equal(t, []string{refs[5], refs[4], refs[3], refs[2], refs[1], refs[0]}, list(store.OrderFilter{}))
		require.Equal(t, []string{refs[5], refs[3], refs[1]}, list(store.OrderFilter{Status: store.OrderPending}))
		require.Equal(t, []string{refs[5], refs[2]}, list(store.OrderFilter{EventID: c2.Event.ID}))
		require.Equal(t, []string{refs[5], refs[2]}, list(store.OrderFilter{EventID: c2.Event.ID, EventDateID: c2.Date.ID}))
		require.Equal(t, []string{refs[4], refs[0]}, list(store.OrderFilter{EventDateID: c1.Date.ID, Status: store.OrderPaid}))
		require.Equal(t, []string{refs[5]}, list(store.OrderFilter{EventID: c2.Event.ID, Status: store.OrderPending}))
		require.Empty(t, list(store.OrderFilter{EventID: c1.Event.ID, EventDateID: c2.Date.ID}))

		first, err := store.ListOrders(ctx, db, store.OrderFilter{AppID: app.ID, Environment: store.EnvLive, Limit: 3})
		require.NoError(t, err)
		require.Len(t, first, 3)
		storetest.MustOrder(t, db, app, c1, "ord_list_new_"+c1.Event.Slug) // newer than all: page 1, not page 2
		key := first[2].Key()
		require.Equal(t, []string{refs[2], refs[1], refs[0]}, list(store.OrderFilter{After: &key}))
		key = first[1].Key() // between the two orders of one instant
		require.Equal(t, []string{refs[3], refs[2], refs[1], refs[0]}, list(store.OrderFilter{After: &key}))
	})
}
