package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestRefundsTwoInstances: refunds of one order sent at once through two
// instances on one database. Twelve name the same ticket: one cancels it,
// the others are ticket_already_void. Twelve return money only, 30.00
// each, from an order of 240.00 that the ticket's refund took 120.00 of:
// exactly four fit, the others are refund_exceeds_balance. Whatever the
// interleaving, the order ends refunded exactly 240.00.
func TestRefundsTwoInstances(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			rawURL := storetest.MigratedURL(t, kind)
			a := setup(t, storetest.OpenURL(t, rawURL))
			b := a.peer(t, rawURL)
			ref, checkoutURL := a.sandboxPending(t, a.highlife(2))
			a.submitOutcome(t, checkoutURL, "paid")
			order := a.get(t, "/api/v1/orders/"+ref, a.testKey).data()
			ticket := order["tickets"].([]any)[0].(map[string]any)["id"].(string)
			refund := func(i int, body string) *response {
				via := a
				if i%2 == 1 {
					via = b
				}
				return via.do(t, http.MethodPost, "/api/v1/orders/"+ref+"/refunds", a.testKey, []byte(body),
					"Idempotency-Key", fmt.Sprintf("two-%d-%d", len(body), i), "Content-Type", "application/json")
			}

			byTicket := race(12, func(i int) *response {
				return refund(i, `{"tickets": ["`+ticket+`"]}`)
			})
			ok := 0
			for _, res := range byTicket {
				switch {
				case res.Status == http.StatusCreated:
					ok++
				case res.Status == http.StatusConflict && res.errorCode() == "ticket_already_void":
				default:
					t.Fatalf("%d %s", res.Status, res.Raw)
				}
			}
			require.Equal(t, 1, ok, "one ticket, cancelled once")

			byMoney := race(12, func(i int) *response {
				return refund(i, `{"tickets": [], "amount": "30.00"}`)
			})
			ok = 0
			for _, res := range byMoney {
				switch {
				case res.Status == http.StatusCreated:
					ok++
				case res.Status == http.StatusConflict && res.errorCode() == "refund_exceeds_balance":
				default:
					t.Fatalf("%d %s", res.Status, res.Raw)
				}
			}
			require.Equal(t, 4, ok, "120.00 of balance, 30.00 a refund")

			order = b.get(t, "/api/v1/orders/"+ref, a.testKey).data()
			require.Equal(t, "240.00", order["refunded_amount"])
			require.Equal(t, "partial", order["refund_status"], "one ticket is still valid")
			require.Len(t, order["refunds"], 5)
			listed := a.get(t, "/api/v1/orders/"+ref+"/refunds", a.testKey)
			var list struct{ Data []map[string]any }
			require.NoError(t, json.Unmarshal([]byte(listed.Raw), &list))
			require.Len(t, list.Data, 5)
		})
	}
}
