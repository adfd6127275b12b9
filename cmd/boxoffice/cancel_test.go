package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestCancelledDate: once an operator cancels a date, the catalog says so
// through REST and GraphQL (behind the caches that served it before), its
// tickets show none available, a checkout of it is 409
// event_date_cancelled, and its paid orders are refunded by the servers'
// job.
func TestCancelledDate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		tb.startJobs(t)
		ids := tb.demo.Catalog
		event, date := ids.Events["DEMO-HIGHLIFE"], ids.EventDates["DEMO-HIGHLIFE-1"]
		ref, checkoutURL := tb.sandboxPending(t, tb.highlife(2))
		tb.submitOutcome(t, checkoutURL, "paid")
		dates := func() map[string]any {
			t.Helper()
			res := tb.get(t, fmt.Sprintf("/api/v1/events/%d/dates", event), tb.testKey)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			for _, d := range res.Body["data"].([]any) {
				if d := d.(map[string]any); d["id"] == float64(date) {
					return d
				}
			}
			t.Fatal("the date is not listed")
			return nil
		}
		available := func() float64 {
			t.Helper()
			res := tb.get(t, fmt.Sprintf("/api/v1/event-dates/%d/tickets", date), tb.testKey)
			return res.Body["data"].([]any)[0].(map[string]any)["quantity_available"].(float64)
		}
		gqlCancelled := func() any {
			t.Helper()
			res := tb.graphql(t, tb.testKey, `query($id: Int!) { event(id: $id) { dates { id cancelled } } }`, map[string]any{"id": event})
			for _, d := range res.Body["data"].(map[string]any)["event"].(map[string]any)["dates"].([]any) {
				if d := d.(map[string]any); d["id"] == float64(date) {
					return d["cancelled"]
				}
			}
			return nil
		}
		require.Equal(t, false, dates()["cancelled"])
		require.Positive(t, available())
		require.Equal(t, false, gqlCancelled())

		_, err := tb.m.Cancellations.Cancel(context.Background(), int64(date), "Storm warning", true)
		require.NoError(t, err)
		storetest.ChangesSettled(t, db)
		waitFor(t, 10*time.Second, "the catalog to show the cancellation", func() bool { return dates()["cancelled"] == true })
		require.Zero(t, available())
		require.Equal(t, true, gqlCancelled())

		res := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1))
		require.Equal(t, http.StatusConflict, res.Status, "%s", res.Raw)
		require.Equal(t, "event_date_cancelled", res.errorCode())
		live := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1))
		require.Equal(t, "event_date_cancelled", live.errorCode())

		waitFor(t, 30*time.Second, "the job to refund the paid order", func() bool {
			return tb.get(t, "/api/v1/orders/"+ref, tb.testKey).data()["refund_status"] == "full"
		})
		refunds := tb.get(t, "/api/v1/orders/"+ref, tb.testKey).data()["refunds"].([]any)
		require.Len(t, refunds, 1)
		require.Equal(t, "event_cancelled", refunds[0].(map[string]any)["reason"])
		st, err := tb.m.Cancellations.Status(context.Background(), int64(date))
		require.NoError(t, err)
		require.True(t, st.Done)
		require.Equal(t, 1, st.Orders)
	})
}
