package boxcli

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestCLIDates: an operator cancels a date with refunds; the command waits
// while a running server refunds each paid order, then prints the
// cancellation, and says the same when run again.
func TestCLIDates(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.FreshURL(t, kind)
			f := &ordersFixture{served: serve(t, storetest.OpenURL(t, dbURL), fastJobs), dbURL: dbURL}
			f.startJobs(t)
			var refs []string
			for range 3 {
				ref, checkoutURL := f.pending(t, f.testKey, f.highlife(1))
				f.press(t, checkoutURL, url.Values{"outcome": {"paid"}})
				refs = append(refs, ref)
			}
			pending, _ := f.pending(t, f.testKey, f.highlife(1))
			date := f.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]
			id := strconv.FormatInt(int64(date), 10)

			require.Equal(t, map[string]any{"eventdate_id": float64(date), "cancelled": false, "reason": "", "orders": 3.0,
				"refunded": 0.0, "pending": 0.0, "failed": 0.0, "done": false}, mustJSON(t, dbURL, "dates", "cancel-status", id, "--json"))
			got := mustJSON(t, dbURL, "dates", "cancel", id, "--reason", "Storm warning", "--refund", "--json")
			want := map[string]any{"eventdate_id": float64(date), "cancelled": true, "reason": "Storm warning", "orders": 3.0,
				"refunded": 3.0, "pending": 0.0, "failed": 0.0, "done": true}
			require.Equal(t, want, got, "the command waits until every order has its refund")
			for _, ref := range refs {
				order := mustJSON(t, dbURL, "orders", "show", ref, "--json")
				require.Equal(t, "full", order["refund_status"])
				require.Equal(t, "event_cancelled", order["refunds"].([]any)[0].(map[string]any)["reason"])
			}
			require.Equal(t, "expired", mustJSON(t, dbURL, "orders", "show", pending, "--json")["status"])
			require.Equal(t, want, mustJSON(t, dbURL, "dates", "cancel", id, "--reason", "Again", "--refund", "--no-wait", "--json"),
				"cancelling again answers the same")
			out, err := runCLI(t, dbURL, "dates", "cancel-status", id)
			require.NoError(t, err)
			require.Equal(t, "date "+id+" is cancelled (Storm warning): 3 order(s) to refund, 3 refunded (0 pending at the provider, 0 failed), done\n", out)

			_, stderr, err := runMain(t, dbURL, "dates", "cancel", "999999", "--reason", "x")
			require.Error(t, err)
			require.Equal(t, "boxoffice: There is no event date 999999.\n", stderr)
		})
	}
}
