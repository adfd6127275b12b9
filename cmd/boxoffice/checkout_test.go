package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// cartFor builds a valid checkout body for one ticket of a demo date.
func (tb *testBundle) cartFor(event, date, ticket string, qty int) map[string]any {
	ids := tb.demo.Catalog
	return map[string]any{
		"event_id": ids.Events[event], "eventdate_id": ids.EventDates[date],
		"items":       []any{map[string]any{"ticket_id": ids.Tickets[ticket], "quantity": qty}},
		"customer":    map[string]any{"name": "Ama Mensah", "email": "ama@example.com", "phone": "024 123 4567"},
		"success_url": "https://partner.example/done", "cancel_url": "https://partner.example/cancel",
		"metadata": map[string]any{"partner_cart": "cart-77"},
	}
}

func (tb *testBundle) highlife(qty int) map[string]any {
	return tb.cartFor("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", qty)
}

// with returns a copy of body with path (dot-separated, numeric parts index
// arrays) set to v; a nil v deletes the key.
func with(body map[string]any, path string, v any) map[string]any {
	cp := deepCopy(body).(map[string]any)
	parts := strings.Split(path, ".")
	var cur any = cp
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if v == nil {
					delete(c, p)
				} else {
					c[p] = v
				}
				return cp
			}
			cur = c[p]
		case []any:
			var idx int
			fmt.Sscan(p, &idx)
			if last {
				c[idx] = v
				return cp
			}
			cur = c[idx]
		}
	}
	return cp
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

func (r *response) details() map[string]any {
	e, _ := r.Body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d
}

func (r *response) data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}

var keySeq struct {
	sync.Mutex
	n int
}

func newIdemKey() string {
	keySeq.Lock()
	defer keySeq.Unlock()
	keySeq.n++
	return fmt.Sprintf("test-key-%d", keySeq.n)
}

func TestCheckout(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, func(c *Config) { c.FreeDailyBuyerEventCap = 3; c.FreeDailyAppCap = 5 })
		ctx := context.Background()
		ids := tb.demo.Catalog
		available := func(ref string) (sold, held int64) {
			var tk store.Ticket
			require.NoError(t, db.NewSelect().Model(&tk).Where("id = ?", ids.Tickets[ref]).Scan(ctx))
			return tk.Sold, tk.Held
		}

		t.Run("SandboxPaidPending", func(t *testing.T) {
			sold0, held0 := available("DEMO-HIGHLIFE-REG")
			res := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(2))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			d := res.data()
			require.Regexp(t, `^sbx_[a-z2-7]{33}$`, d["order_reference"])
			require.Equal(t, "http://boxoffice.test/sandbox/checkout/"+d["order_reference"].(string), d["checkout_url"])
			require.Equal(t, "pending", d["status"])
			require.Equal(t, "test", d["environment"])
			require.Equal(t, true, d["requires_payment"])
			require.Equal(t, "240.00", d["total_amount"], "2 × promotional 120.00")
			require.Nil(t, d["payment_reference"])
			require.NotNil(t, d["expires_at"])
			require.Equal(t, map[string]any{"status_code": 201.0}, res.Body["meta"])
			sold, held := available("DEMO-HIGHLIFE-REG")
			require.Equal(t, []int64{sold0, held0}, []int64{sold, held}, "sandbox never holds stock")

			order := tb.get(t, "/api/v1/orders/"+d["order_reference"].(string), tb.testKey)
			require.Equal(t, http.StatusOK, order.Status)
			require.Equal(t, map[string]any{
				"reference": d["order_reference"], "status": "pending", "status_code": 1.0, "currency": "GHS",
				"created_at": order.data()["created_at"], "updated_at": order.data()["updated_at"],
				"payment_reference": nil, "environment": "test",
				"event_id": float64(tb.demo.Catalog.Events["DEMO-HIGHLIFE"]), "eventdate_id": float64(tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]),
				"total_amount": "240.00", "requires_payment": true, "expires_at": d["expires_at"], "checkout_url": d["checkout_url"],
				"metadata": map[string]any{"partner_cart": "cart-77"},
				"items": []any{map[string]any{"ticket_id": float64(tb.demo.Catalog.Tickets["DEMO-HIGHLIFE-REG"]), "name": "Regular",
					"quantity": 2.0, "unit_price": "120.00", "amount": "240.00"}},
				"tickets": []any{}, "tickets_url": nil, "tickets_email": map[string]any{"status": "not_sent", "sent_at": nil},
				"refunded_amount": "0.00", "refund_status": "none", "refunds": []any{},
			}, order.data())
			require.Regexp(t, `Z$`, order.data()["created_at"])
		})
		t.Run("SandboxFreePaid", func(t *testing.T) {
			res := tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Equal(t, "paid", res.data()["status"])
			require.Equal(t, false, res.data()["requires_payment"])
			require.Equal(t, "0.00", res.data()["total_amount"])
			require.Nil(t, res.data()["checkout_url"])
		})
		t.Run("LivePaidHoldsStock", func(t *testing.T) {
			sold0, held0 := available("DEMO-HIGHLIFE-REG")
			res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(3))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Regexp(t, `^ord_`, res.data()["order_reference"])
			require.Equal(t, "http://boxoffice.test/checkout/"+res.data()["order_reference"].(string), res.data()["checkout_url"])
			require.Equal(t, "pending", res.data()["status"])
			require.Equal(t, "live", res.data()["environment"])
			sold, held := available("DEMO-HIGHLIFE-REG")
			require.Equal(t, []int64{sold0, held0 + 3}, []int64{sold, held})
		})
		t.Run("LiveFreeCompleted", func(t *testing.T) {
			sold0, _ := available("DEMO-CHALEWOTE-2-GA")
			body := tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-2", "DEMO-CHALEWOTE-2-GA", 2)
			res := tb.checkout(t, tb.liveKey, newIdemKey(), body)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Equal(t, "completed", res.data()["status"])
			require.Equal(t, false, res.data()["requires_payment"])
			require.Nil(t, res.data()["checkout_url"])
			require.Nil(t, res.data()["expires_at"])
			sold, _ := available("DEMO-CHALEWOTE-2-GA")
			require.Equal(t, sold0+2, sold, "live free tickets are sold at once")
			order := tb.get(t, "/api/v1/orders/"+res.data()["order_reference"].(string), tb.liveKey)
			require.Equal(t, 3.0, order.data()["status_code"])
		})

		type errCase struct {
			name   string
			key    string
			body   any
			status int
			code   string
			detail string // a details key that must be present
		}
		hl := tb.highlife(1)
		cases := []errCase{
			{"ErrValidationEmptyBody", tb.testKey, []byte(`{}`), 422, "validation_failed", "event_id"},
			{"ErrValidationMalformedJSON", tb.testKey, []byte(`{"event_id": `), 422, "validation_failed", "body"},
			{"ErrValidationWrongType", tb.testKey, with(hl, "event_id", "ten"), 422, "validation_failed", "event_id"},
			{"ErrValidationQuantityZero", tb.testKey, with(hl, "items.0.quantity", 0), 422, "validation_failed", "items.0.quantity"},
			{"ErrValidationQuantity51", tb.testKey, with(hl, "items.0.quantity", 51), 422, "validation_failed", "items.0.quantity"},
			{"ErrValidationNoItems", tb.testKey, with(hl, "items", []any{}), 422, "validation_failed", "items"},
			{"ErrValidation21Items", tb.testKey, with(hl, "items", manyItems(21)), 422, "validation_failed", "items"},
			{"ErrValidationDuplicateTicket", tb.testKey, with(hl, "items", []any{
				map[string]any{"ticket_id": ids.Tickets["DEMO-HIGHLIFE-REG"], "quantity": 1},
				map[string]any{"ticket_id": ids.Tickets["DEMO-HIGHLIFE-REG"], "quantity": 1}}), 422, "validation_failed", "items.1.ticket_id"},
			{"ErrValidationEmail", tb.testKey, with(hl, "customer.email", "ama@"), 422, "validation_failed", "customer.email"},
			{"ErrValidationPhone", tb.testKey, with(hl, "customer.phone", "12"), 422, "validation_failed", "customer.phone"},
			{"ErrValidationNameControlChars", tb.testKey, with(hl, "customer.name", "Ama\x00Mensah"), 422, "validation_failed", "customer.name"},
			{"ErrValidationMetadataNUL", tb.testKey, with(hl, "metadata", map[string]any{"note": "a\x00b"}), 422, "validation_failed", "metadata.note"},
			{"ErrInvalidRedirectURLPort", tb.testKey, with(hl, "success_url", "https://partner.example:99999/done"), 422, "invalid_redirect_url", ""},
			{"ErrValidationNoCustomerName", tb.testKey, with(hl, "customer.name", nil), 422, "validation_failed", "customer.name"},
			{"ErrValidationNoSuccessURL", tb.testKey, with(hl, "success_url", nil), 422, "validation_failed", "success_url"},
			{"ErrValidationMetadataEmail", tb.testKey, with(hl, "metadata", map[string]any{"contact": "someone@example.org"}), 422, "validation_failed", "metadata.contact"},
			{"ErrValidationMetadataCustomerPhone", tb.testKey, with(hl, "metadata", map[string]any{"note": "+233 24 123 4567"}), 422, "validation_failed", "metadata.note"},
			{"ErrValidationMetadataCustomerName", tb.testKey, with(hl, "metadata", map[string]any{"who": map[string]any{"n": "ama mensah"}}), 422, "validation_failed", "metadata.who"},
			{"ErrValidationLiveFreeLandline", tb.liveKey, with(tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-3", "DEMO-CHALEWOTE-3-GA", 1), "customer.phone", "0302 123 456"), 422, "validation_failed", "customer.phone"},
			{"ErrEventNotFound", tb.testKey, with(hl, "event_id", ids.Events["DEMO-HIDDEN"]), 404, "event_not_found", ""},
			{"ErrEventNotFoundDraft", tb.testKey, with(hl, "event_id", ids.Events["DEMO-DRAFT"]), 404, "event_not_found", ""},
			{"ErrEventNotAvailable", tb.testKey, tb.cartFor("DEMO-GALA", "DEMO-GALA-1", "DEMO-GALA-SEAT", 1), 403, "event_not_available", ""},
			{"ErrEventDateNotFound", tb.testKey, with(hl, "eventdate_id", ids.EventDates["DEMO-CHALEWOTE-1"]), 404, "event_date_not_found", ""},
			{"ErrEventDateNotAvailableEnded", tb.testKey, tb.cartFor("DEMO-MOVIES", "DEMO-MOVIES-0", "DEMO-MOVIES-0-SEAT", 1), 422, "event_date_not_available", ""},
			{"ErrTicketNotFound", tb.testKey, with(hl, "items.0.ticket_id", ids.Tickets["DEMO-COMEDY-REG"]), 422, "ticket_not_found", ""},
			{"ErrTicketNotOnSale", tb.testKey, tb.cartFor("DEMO-JAZZ", "DEMO-JAZZ-1", "DEMO-JAZZ-GA", 1), 422, "ticket_not_on_sale", ""},
			{"ErrTicketQuantityExceeded", tb.testKey, tb.cartFor("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-VIP", 7), 422, "ticket_quantity_exceeded", ""},
			{"ErrInvalidRedirectURL", tb.testKey, with(hl, "success_url", "http://partner.example/done"), 422, "invalid_redirect_url", ""},
			{"ErrInvalidRedirectURLGarbage", tb.testKey, with(hl, "cancel_url", "not a url"), 422, "invalid_redirect_url", ""},
			{"ErrRedirectDomainNotAllowed", tb.testKey, with(hl, "cancel_url", "https://evil.example/x"), 422, "redirect_domain_not_allowed", ""},
			{"ErrMetadataTooManyKeys", tb.testKey, with(hl, "metadata", manyKeys(21)), 422, "metadata_too_large", ""},
			{"ErrMetadataTooBig", tb.testKey, with(hl, "metadata", map[string]any{"blob": strings.Repeat("x", 4100)}), 422, "metadata_too_large", ""},
			{"ErrQuantityExceedsLimit", tb.liveKey, with(tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-3", "DEMO-CHALEWOTE-3-GA", 4), "customer.email", "kofi@example.com"), 422, "quantity_exceeds_limit", ""},
			{"ErrSoldOut", tb.testKey, tb.cartFor("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1), 409, "sold_out", ""},
			{"ErrSoldOutLive", tb.liveKey, tb.cartFor("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1), 409, "sold_out", ""},
		}
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				res := tb.checkout(t, tt.key, newIdemKey(), tt.body)
				require.Equal(t, tt.status, res.Status, "%s", res.Raw)
				require.Equal(t, tt.code, res.errorCode(), "%s", res.Raw)
				require.NotEmpty(t, res.errorMessage())
				require.Equal(t, map[string]any{"status_code": float64(tt.status)}, res.Body["meta"])
				if tt.detail != "" {
					require.Contains(t, res.details(), tt.detail, "%s", res.Raw)
				}
			})
		}

		t.Run("ErrIdempotencyKeyHeader", func(t *testing.T) {
			res := tb.checkout(t, tb.testKey, "", []byte(`not json`))
			require.Equal(t, 400, res.Status)
			require.Equal(t, "missing_idempotency_key", res.errorCode(), "the header is checked before the body")
			res = tb.checkout(t, tb.testKey, strings.Repeat("k", 129), tb.highlife(1))
			require.Equal(t, 400, res.Status)
			require.Equal(t, "invalid_idempotency_key", res.errorCode())
			res = tb.checkout(t, tb.testKey, strings.Repeat("k", 128), tb.highlife(1))
			require.Equal(t, 201, res.Status, "%s", res.Raw)
		})
		t.Run("ErrRedirectAllowlistRequired", func(t *testing.T) {
			_, err := tb.m.Provision.UpdateApp(ctx, tb.demo.App.App.ID, provisionClearDomains())
			require.NoError(t, err)
			defer func() {
				_, err := tb.m.Provision.UpdateApp(ctx, tb.demo.App.App.ID, provisionDomains("partner.example"))
				require.NoError(t, err)
			}()
			res := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1))
			require.Equal(t, 422, res.Status)
			require.Equal(t, "redirect_allowlist_required", res.errorCode())
		})
		t.Run("ErrEventDateNotAvailableInactiveAndLocked", func(t *testing.T) {
			for _, col := range []string{"active = false", "payout_locked = true"} {
				_, err := db.NewUpdate().Model((*store.EventDate)(nil)).Set(col).Where("id = ?", ids.EventDates["DEMO-MOVIES-2"]).Exec(ctx)
				require.NoError(t, err)
				res := tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-MOVIES", "DEMO-MOVIES-2", "DEMO-MOVIES-2-SEAT", 1))
				require.Equal(t, 422, res.Status, col)
				require.Equal(t, "event_date_not_available", res.errorCode(), col)
				_, err = db.NewUpdate().Model((*store.EventDate)(nil)).Set("active = true, payout_locked = false").Where("id = ?", ids.EventDates["DEMO-MOVIES-2"]).Exec(ctx)
				require.NoError(t, err)
			}
		})
		t.Run("FreeCaps", func(t *testing.T) {
			free := func(email string, qty int) *response {
				body := with(tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", qty), "customer.email", email)
				return tb.checkout(t, tb.liveKey, newIdemKey(), body)
			}
			// Buyer cap 3 per event per day; app cap 5 per day (2 already used by LiveFreeCompleted).
			require.Equal(t, 201, free("esi@example.com", 2).Status)
			res := free("esi@example.com", 2)
			require.Equal(t, 429, res.Status, "%s", res.Raw)
			require.Equal(t, "free_order_limit_reached", res.errorCode())
			require.Contains(t, res.errorMessage(), "buyer")
			res = free("yaw@example.com", 2)
			require.Equal(t, 429, res.Status, "%s", res.Raw)
			require.Equal(t, "free_order_limit_reached", res.errorCode())
			require.Contains(t, res.errorMessage(), "app")
			require.Equal(t, 201, free("yaw@example.com", 1).Status, "the refused order used nothing")
		})
		t.Run("IdempotentReplay", func(t *testing.T) {
			key := newIdemKey()
			first := tb.checkout(t, tb.testKey, key, tb.highlife(1))
			require.Equal(t, 201, first.Status)
			require.Empty(t, first.Header.Get("Idempotent-Replayed"))
			again := tb.checkout(t, tb.testKey, key, tb.highlife(1))
			require.Equal(t, 201, again.Status)
			require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
			require.Equal(t, first.Body, again.Body)

			conflict := tb.checkout(t, tb.testKey, key, tb.highlife(2))
			require.Equal(t, 409, conflict.Status)
			require.Equal(t, "idempotency_conflict", conflict.errorCode())

			other := tb.checkout(t, tb.liveKey, key, tb.highlife(1))
			require.Equal(t, 201, other.Status, "the key is scoped to the environment")
			require.NotEqual(t, first.data()["order_reference"], other.data()["order_reference"])

			soldOutKey := newIdemKey()
			comedy := tb.cartFor("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)
			require.Equal(t, "sold_out", tb.checkout(t, tb.testKey, soldOutKey, comedy).errorCode())
			replayed := tb.checkout(t, tb.testKey, soldOutKey, comedy)
			require.Equal(t, "sold_out", replayed.errorCode(), "business answers are saved")
			require.Equal(t, "true", replayed.Header.Get("Idempotent-Replayed"))

			invalidKey := newIdemKey()
			require.Equal(t, "validation_failed", tb.checkout(t, tb.testKey, invalidKey, with(hl, "items.0.quantity", 0)).errorCode())
			require.Equal(t, 201, tb.checkout(t, tb.testKey, invalidKey, hl).Status, "validation answers are not saved")
		})
		t.Run("Orders", func(t *testing.T) {
			live := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).data()["order_reference"].(string)
			sbx := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).data()["order_reference"].(string)
			for _, tt := range []struct {
				key, ref string
				status   int
				code     string
			}{
				{tb.testKey, live, 403, "environment_mismatch"},
				{tb.liveKey, sbx, 403, "environment_mismatch"},
				{tb.testKey, "sbx_doesnotexist", 404, "order_not_found"},
				{tb.liveKey, "ord_doesnotexist", 404, "order_not_found"},
				{tb.testKey, "nonsense", 404, "order_not_found"},
			} {
				res := tb.get(t, "/api/v1/orders/"+tt.ref, tt.key)
				require.Equal(t, tt.status, res.Status, tt.ref)
				require.Equal(t, tt.code, res.errorCode(), tt.ref)
			}
			acc, err := tb.m.Provision.CreateAccount(ctx, provisionAccount("orders@example.com"))
			require.NoError(t, err)
			other, err := tb.m.Provision.CreateApp(ctx, provisionApp(acc.ID))
			require.NoError(t, err)
			res := tb.get(t, "/api/v1/orders/"+sbx, other.TestKey)
			require.Equal(t, 404, res.Status)
			require.Equal(t, "order_not_found", res.errorCode(), "another app's order is not found")
		})
		t.Run("GraphQLMutation", func(t *testing.T) {
			q := `mutation($in: CreateCheckoutSessionInput!) { createCheckoutSession(input: $in) {
				checkoutSession { orderReference checkoutUrl status environment requiresPayment totalAmount totalMoney { amount currency } expiresAt }
				replayed userErrors { code field message } } }`
			key := newIdemKey()
			in := map[string]any{
				"idempotencyKey": key,
				"eventId":        ids.Events["DEMO-HIGHLIFE"], "eventdateId": ids.EventDates["DEMO-HIGHLIFE-1"],
				"items":      []any{map[string]any{"ticketId": ids.Tickets["DEMO-HIGHLIFE-VIP"], "quantity": 2}},
				"customer":   map[string]any{"name": "Kwame", "email": "kwame@example.com", "phone": "+233201234567"},
				"successUrl": "https://partner.example/ok", "cancelUrl": "https://partner.example/no",
			}
			payload := func(res *response) map[string]any {
				t.Helper()
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				require.Nil(t, res.Body["errors"], "%s", res.Raw)
				return res.Body["data"].(map[string]any)["createCheckoutSession"].(map[string]any)
			}
			first := payload(tb.graphql(t, tb.testKey, q, map[string]any{"in": in}))
			require.Equal(t, false, first["replayed"])
			require.Equal(t, []any{}, first["userErrors"])
			sess := first["checkoutSession"].(map[string]any)
			require.Equal(t, "900.00", sess["totalAmount"])
			require.Equal(t, map[string]any{"amount": "900.00", "currency": "GHS"}, sess["totalMoney"])
			require.Equal(t, "PENDING", sess["status"])
			require.Equal(t, "TEST", sess["environment"])
			require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, sess["expiresAt"])

			again := payload(tb.graphql(t, tb.testKey, q, map[string]any{"in": in}))
			require.Equal(t, true, again["replayed"], "the same key and input replay")
			require.Equal(t, sess, again["checkoutSession"], "the replay shows the same session, its currency too")

			// The same key and body over REST replays the GraphQL answer, in
			// the contract's lower case.
			rest := tb.checkout(t, tb.testKey, key, map[string]any{
				"event_id": ids.Events["DEMO-HIGHLIFE"], "eventdate_id": ids.EventDates["DEMO-HIGHLIFE-1"],
				"items":       []any{map[string]any{"ticket_id": ids.Tickets["DEMO-HIGHLIFE-VIP"], "quantity": 2}},
				"customer":    map[string]any{"name": "Kwame", "email": "kwame@example.com", "phone": "+233201234567"},
				"success_url": "https://partner.example/ok", "cancel_url": "https://partner.example/no",
			})
			require.Equal(t, 201, rest.Status, "%s", rest.Raw)
			require.Equal(t, sess["orderReference"], rest.data()["order_reference"])
			require.Equal(t, "pending", rest.data()["status"])
			require.Equal(t, "test", rest.data()["environment"])
			require.Equal(t, "true", rest.Header.Get("Idempotent-Replayed"))

			bad := with(in, "items.0.quantity", 0)
			bad["idempotencyKey"] = newIdemKey()
			refused := payload(tb.graphql(t, tb.testKey, q, map[string]any{"in": bad}))
			require.Nil(t, refused["checkoutSession"])
			require.Equal(t, []any{map[string]any{"code": "validation_failed", "field": []any{"input", "items", "0", "quantity"},
				"message": "must be between 1 and 50"}}, refused["userErrors"], "GraphQL names the field by the input's own path")

			order := tb.graphql(t, tb.testKey, `query($r: String!) { order(reference: $r) { reference status statusCode environment createdAt } }`,
				map[string]any{"r": sess["orderReference"]})
			o := order.Body["data"].(map[string]any)["order"].(map[string]any)
			require.Regexp(t, `Z$`, o["createdAt"])
			delete(o, "createdAt")
			require.Equal(t, map[string]any{"reference": sess["orderReference"], "status": "PENDING", "statusCode": 1.0, "environment": "TEST"}, o)
		})
	})
}

func manyItems(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"ticket_id": i + 1, "quantity": 1}
	}
	return out
}

func manyKeys(n int) map[string]any {
	out := map[string]any{}
	for i := 0; i < n; i++ {
		out[fmt.Sprintf("k%d", i)] = i
	}
	return out
}
