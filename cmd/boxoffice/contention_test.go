package main

import (
	"context"
	"fmt"
	"net/http"
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

func TestCheckoutContention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		ctx := context.Background()
		now := time.Now().UTC()
		str := func(s string) *string { return &s }
		qty := int64(107)
		res, err := catalog.Import(ctx, db, &catalog.File{
			Venues: []catalog.VenueSpec{{Reference: "race-v", Name: "Race Hall", Slug: "race-hall"}},
			Events: []catalog.EventSpec{{Reference: "RACE", Name: "Last seats", Slug: "last-seats", Published: true,
				Dates: []catalog.DateSpec{{Reference: "RACE-1", Venue: str("race-v"),
					Start: now.Add(48 * time.Hour).Format(time.RFC3339), End: now.Add(50 * time.Hour).Format(time.RFC3339),
					Tickets: []catalog.TicketSpec{{Reference: "RACE-T", Name: "Seat", Price: str("50.00"), Currency: "GHS",
						Quantity: &qty, Sold: 100}}}}}},
		}, now)
		require.NoError(t, err)
		body := map[string]any{
			"event_id": res.Events["RACE"], "eventdate_id": res.EventDates["RACE-1"],
			"items":       []any{map[string]any{"ticket_id": res.Tickets["RACE-T"], "quantity": 1}},
			"customer":    map[string]any{"name": "Racer", "email": "racer@example.com", "phone": "0241234567"},
			"success_url": "https://partner.example/ok", "cancel_url": "https://partner.example/no",
		}

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
