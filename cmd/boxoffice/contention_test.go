package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// race runs n calls of fn at once, behind a start barrier, and returns the responses.
func race(n int, fn func(i int) *response) []*response {
	out := make([]*response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// lastSeats imports an event ref with one date (ref-1) and one paid
// ticket (ref-T) with left seats left of 100 sold, and returns the import
// and a live checkout body for one of them.
func lastSeats(t *testing.T, db *store.DB, ref string, left int64) (*catalog.ImportResult, map[string]any) {
	t.Helper()
	now := time.Now().UTC()
	str := func(s string) *string { return &s }
	qty := 100 + left
	slug := strings.ToLower(ref)
	res, err := catalog.Import(context.Background(), db, &catalog.File{
		Venues: []catalog.VenueSpec{{Reference: slug + "-v", Name: ref + " Hall", Slug: slug + "-hall"}},
		Events: []catalog.EventSpec{{Reference: ref, Name: "Last seats", Slug: slug + "-seats", Published: true,
			Dates: []catalog.DateSpec{{Reference: ref + "-1", Venue: str(slug + "-v"),
				Start: now.Add(48 * time.Hour).Format(time.RFC3339), End: now.Add(50 * time.Hour).Format(time.RFC3339),
				Tickets: []catalog.TicketSpec{{Reference: ref + "-T", Name: "Seat", Price: str("50.00"), Currency: "GHS",
					Quantity: &qty, Sold: 100}}}}}},
	}, now)
	require.NoError(t, err)
	return res, map[string]any{
		"event_id": res.Events[ref], "eventdate_id": res.EventDates[ref+"-1"],
		"items":       []any{map[string]any{"ticket_id": res.Tickets[ref+"-T"], "quantity": 1}},
		"customer":    map[string]any{"name": "Racer", "email": "racer@example.com", "phone": "0241234567"},
		"success_url": "https://partner.example/ok", "cancel_url": "https://partner.example/no",
	}
}

func TestCheckoutContention(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		ctx := context.Background()
		res, body := lastSeats(t, db, "RACE", 7)

		t.Run("NoOversell", func(t *testing.T) {
			answers := race(50, func(i int) *response {
				return tb.checkout(t, tb.liveKey, fmt.Sprintf("race-%d", i), body)
			})
			counts := map[string]int{}
			for _, a := range answers {
				if a.Status == http.StatusCreated {
					counts["created"]++
				} else {
					counts[fmt.Sprint(a.Status, " ", a.errorCode())]++
				}
			}
			require.Equal(t, map[string]int{"created": 7, "409 sold_out": 43}, counts)
			var tk store.Ticket
			require.NoError(t, db.NewSelect().Model(&tk).Where("id = ?", res.Tickets["RACE-T"]).Scan(ctx))
			require.Equal(t, int64(7), tk.Held)
			require.Zero(t, catalog.Available(tk.Stock()))
			tickets := tb.get(t, fmt.Sprintf("/api/v1/event-dates/%d/tickets", res.EventDates["RACE-1"]), tb.testKey)
			require.Equal(t, 0.0, tickets.Body["data"].([]any)[0].(map[string]any)["quantity_available"])
		})

		t.Run("OneOrderPerKey", func(t *testing.T) {
			_, err := db.NewUpdate().Model((*store.Ticket)(nil)).Set("quantity = NULL").Where("id = ?", res.Tickets["RACE-T"]).Exec(ctx)
			require.NoError(t, err)
			var before int64
			before, err = db.NewSelect().Model((*store.Order)(nil)).Count(ctx)
			require.NoError(t, err)
			answers := race(20, func(int) *response { return tb.checkout(t, tb.liveKey, "one-key", body) })
			var refs = map[any]bool{}
			for _, a := range answers {
				switch a.Status {
				case http.StatusCreated:
					refs[a.data()["order_reference"]] = true
				case http.StatusConflict:
					require.Equal(t, "idempotency_in_progress", a.errorCode())
					require.NotEmpty(t, a.Header.Get("Retry-After"))
				default:
					t.Fatalf("unexpected answer %d %s", a.Status, a.Raw)
				}
			}
			require.Len(t, refs, 1, "every 201 is the same order")
			after, err := db.NewSelect().Model((*store.Order)(nil)).Count(ctx)
			require.NoError(t, err)
			require.Equal(t, before+1, after, "exactly one order exists for the key")
		})
	})
}

// TestFlashSaleTwoInstances: 120 live checkouts of a ticket with 40 left,
// at once, through two instances on one database, ten of them sent twice
// with the same key: exactly 40 orders hold exactly 40 tickets, every
// other answer is sold_out (saved: the same key gets it again) or, for a
// key's twin, the same order or idempotency_in_progress. Concurrent
// creates of one ticket share transactions (checkout's group commit), so
// one refusal in a batch must not undo or leak into the others.
func TestFlashSaleTwoInstances(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			rawURL := storetest.MigratedURL(t, kind)
			a := setup(t, storetest.OpenURL(t, rawURL))
			b := a.peer(t, rawURL)
			ctx := context.Background()
			res, body := lastSeats(t, a.db, "FLASH", 40)
			const n = 120
			key := func(i int) string {
				if i >= n-10 {
					return fmt.Sprintf("flash-%d", i-10) // the twin of one of the ten before
				}
				return fmt.Sprintf("flash-%d", i)
			}
			answers := race(n, func(i int) *response {
				via := a
				if i%2 == 1 {
					via = b
				}
				return via.checkout(t, a.liveKey, key(i), body)
			})
			refs := map[string]string{} // order reference → key
			soldOut := map[string]bool{}
			for i, ans := range answers {
				switch {
				case ans.Status == http.StatusCreated:
					ref := ans.data()["order_reference"].(string)
					if k, seen := refs[ref]; seen {
						require.Equal(t, key(i), k, "one order, two keys")
					}
					refs[ref] = key(i)
				case ans.Status == http.StatusConflict && ans.errorCode() == "sold_out":
					soldOut[key(i)] = true
				case ans.Status == http.StatusConflict && ans.errorCode() == "idempotency_in_progress":
					require.GreaterOrEqual(t, i, n-20, "only a twin can find its key in progress: %s", key(i))
				default:
					t.Fatalf("answer %d: %d %s", i, ans.Status, ans.Raw)
				}
			}
			require.Len(t, refs, 40, "exactly the 40 left are sold")
			keys := map[string]bool{}
			for _, k := range refs {
				keys[k] = true
			}
			for k := range soldOut {
				require.False(t, keys[k], "key %s got an order and sold_out", k)
			}
			var tk store.Ticket
			require.NoError(t, a.db.NewSelect().Model(&tk).Where("id = ?", res.Tickets["FLASH-T"]).Scan(ctx))
			require.Equal(t, int64(40), tk.Held, "held is exactly what the orders hold")
			require.Zero(t, catalog.Available(tk.Stock()))
			orders, err := a.db.NewSelect().Model((*store.Order)(nil)).Where("event_id = ?", res.Events["FLASH"]).Count(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(40), int64(orders))
			// A refusal is saved: the same key gets it again, from either instance.
			for k := range soldOut {
				again := b.checkout(t, a.liveKey, k, body)
				require.Equal(t, "sold_out", again.errorCode(), "%s", again.Raw)
				require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
				break
			}
		})
	}
}
