package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// payloadFields are what the GraphQL checkout tests read of a payload.
const payloadFields = `checkoutSession { orderReference status environment totalMoney { amount currency } }
	replayed userErrors { code field message }`

// gqlPayload is a decoded CreateCheckoutSessionPayload.
type gqlPayload struct {
	CheckoutSession *struct {
		OrderReference, Status, Environment string
		TotalMoney                          *struct{ Amount, Currency string }
	}
	Replayed   bool
	UserErrors []struct {
		Code    string
		Field   []string
		Message string
	}
}

// gqlResult is a decoded GraphQL answer of gqlgen's test client.
type gqlResult struct {
	Data   map[string]*gqlPayload
	Errors []struct {
		Message    string
		Path       []any
		Extensions map[string]any
	}
}

// gqlClient is gqlgen's in-process client over the server's whole handler
// (authentication, limits and loaders included), with key.
func (tb *testBundle) gqlClient(key string) *client.Client {
	return client.New(tb.m.Handler(), client.Path("/graphql"), client.AddHeader("X-API-Key", key))
}

func (tb *testBundle) createCheckout(t *testing.T, key string, body map[string]any, idemKey string) gqlResult {
	t.Helper()
	res, err := tb.gqlClient(key).RawPost(`mutation($in: CreateCheckoutSessionInput!) { createCheckoutSession(input: $in) { `+payloadFields+` } }`,
		client.Var("in", checkoutVars(body, idemKey)["in"]))
	require.NoError(t, err)
	return decodeResult(t, res)
}

func decodeResult(t *testing.T, res *client.Response) gqlResult {
	t.Helper()
	var out gqlResult
	raw, err := json.Marshal(map[string]any{"data": res.Data, "errors": res.Errors})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return out
}

// TestCheckoutUserErrors sends every business and validation refusal of
// checkout through the mutation, in process, and expects it in userErrors
// with the REST code and the field at fault, never in errors.
func TestCheckoutUserErrors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, func(c *Config) { c.FreeDailyBuyerEventCap = 3; c.FreeDailyAppCap = 5 })
		ctx := context.Background()
		ids := tb.demo.Catalog
		hl := tb.highlife(1)
		liveFree := func(event, date, ticket string, qty int, email string) map[string]any {
			return with(tb.cartFor(event, date, ticket, qty), "customer.email", email)
		}

		expect := func(t *testing.T, r gqlResult, code string, field ...string) {
			t.Helper()
			require.Empty(t, r.Errors, "a refusal of the input is no top-level error")
			p := r.Data["createCheckoutSession"]
			require.NotNil(t, p)
			require.Nil(t, p.CheckoutSession)
			require.NotEmpty(t, p.UserErrors)
			ue := p.UserErrors[0]
			require.Equal(t, code, ue.Code, "%+v", p.UserErrors)
			if len(field) == 0 {
				field = nil
			}
			require.Equal(t, field, ue.Field, "%+v", p.UserErrors)
			require.NotEmpty(t, ue.Message)
			require.NotContains(t, ue.Message, "header", "GraphQL has no header here")
		}

		cases := []struct {
			name, key string
			body      map[string]any
			code      string
			field     []string
		}{
			{"ErrValidationFailed", tb.testKey, with(hl, "items.0.quantity", 0), "validation_failed", []string{"input", "items", "0", "quantity"}},
			{"ErrValidationMetadataKey", tb.testKey, with(hl, "metadata", map[string]any{"a.b": "x@example.org"}), "validation_failed", []string{"input", "metadata", "a.b"}},
			{"ErrEventNotFound", tb.testKey, with(hl, "event_id", ids.Events["DEMO-HIDDEN"]), "event_not_found", []string{"input", "eventId"}},
			{"ErrEventNotAvailable", tb.testKey, tb.cartFor("DEMO-GALA", "DEMO-GALA-1", "DEMO-GALA-SEAT", 1), "event_not_available", []string{"input", "eventId"}},
			{"ErrEventDateNotFound", tb.testKey, with(hl, "eventdate_id", ids.EventDates["DEMO-CHALEWOTE-1"]), "event_date_not_found", []string{"input", "eventdateId"}},
			{"ErrEventDateNotAvailable", tb.testKey, tb.cartFor("DEMO-MOVIES", "DEMO-MOVIES-0", "DEMO-MOVIES-0-SEAT", 1), "event_date_not_available", []string{"input", "eventdateId"}},
			{"ErrTicketNotFound", tb.testKey, with(hl, "items.0.ticket_id", ids.Tickets["DEMO-COMEDY-REG"]), "ticket_not_found", nil},
			{"ErrTicketNotOnSale", tb.testKey, tb.cartFor("DEMO-JAZZ", "DEMO-JAZZ-1", "DEMO-JAZZ-GA", 1), "ticket_not_on_sale", nil},
			{"ErrTicketQuantityExceeded", tb.testKey, tb.cartFor("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-VIP", 7), "ticket_quantity_exceeded", nil},
			{"ErrInvalidRedirectURL", tb.testKey, with(hl, "success_url", "http://partner.example/done"), "invalid_redirect_url", []string{"input", "successUrl"}},
			{"ErrRedirectDomainNotAllowed", tb.testKey, with(hl, "cancel_url", "https://evil.example/x"), "redirect_domain_not_allowed", []string{"input", "cancelUrl"}},
			{"ErrMetadataTooLarge", tb.testKey, with(hl, "metadata", manyKeys(21)), "metadata_too_large", []string{"input", "metadata"}},
			{"ErrQuantityExceedsLimit", tb.liveKey, liveFree("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-3", "DEMO-CHALEWOTE-3-GA", 4, "kofi@example.com"), "quantity_exceeds_limit", nil},
			{"ErrSoldOut", tb.testKey, tb.cartFor("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1), "sold_out", nil},
		}
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				expect(t, tb.createCheckout(t, tt.key, tt.body, newIdemKey()), tt.code, tt.field...)
			})
		}

		t.Run("ErrValidationEveryField", func(t *testing.T) {
			body := with(with(with(hl, "event_id", nil), "customer.email", "nope"), "items.0.quantity", 51)
			p := tb.createCheckout(t, tb.testKey, body, newIdemKey()).Data["createCheckoutSession"]
			var got []string
			for _, ue := range p.UserErrors {
				require.Equal(t, "validation_failed", ue.Code)
				got = append(got, strings.Join(ue.Field, ".")+": "+ue.Message)
			}
			require.Equal(t, []string{
				"input.customer.email: must be a valid email address",
				"input.eventId: is required",
				"input.items.0.quantity: must be between 1 and 50",
			}, got, "one user error per field and problem, by field")
		})
		t.Run("ErrIdempotencyKeys", func(t *testing.T) {
			key := []string{"input", "idempotencyKey"}
			expect(t, tb.createCheckout(t, tb.testKey, hl, ""), "missing_idempotency_key", key...)
			expect(t, tb.createCheckout(t, tb.testKey, hl, strings.Repeat("k", 129)), "invalid_idempotency_key", key...)

			k := newIdemKey()
			first := tb.createCheckout(t, tb.testKey, hl, k).Data["createCheckoutSession"]
			require.NotNil(t, first.CheckoutSession)
			require.False(t, first.Replayed)
			expect(t, tb.createCheckout(t, tb.testKey, tb.highlife(2), k), "idempotency_conflict", key...)

			// A first request still running under the key.
			running := newIdemKey()
			var in checkout.Input
			raw, _ := json.Marshal(hl)
			require.NoError(t, json.Unmarshal(raw, &in))
			canonical, _ := json.Marshal(&in)
			_, _, err := tb.m.Idempotency.Begin(ctx, idempotency.Scope{AppID: tb.demo.App.App.ID, Environment: store.EnvTest},
				running, idempotency.Fingerprint(canonical))
			require.NoError(t, err)
			expect(t, tb.createCheckout(t, tb.testKey, hl, running), "idempotency_in_progress", key...)
		})
		t.Run("ErrRedirectAllowlistRequired", func(t *testing.T) {
			_, err := tb.m.Provision.UpdateApp(ctx, tb.demo.App.App.ID, provisionClearDomains())
			require.NoError(t, err)
			defer func() {
				_, err := tb.m.Provision.UpdateApp(ctx, tb.demo.App.App.ID, provisionDomains("partner.example"))
				require.NoError(t, err)
			}()
			expect(t, tb.createCheckout(t, tb.testKey, hl, newIdemKey()), "redirect_allowlist_required")
		})
		t.Run("ErrFreeOrderLimitReached", func(t *testing.T) {
			body := liveFree("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2, "esi@example.com")
			ok := tb.createCheckout(t, tb.liveKey, body, newIdemKey()).Data["createCheckoutSession"]
			require.NotNil(t, ok.CheckoutSession, "%+v", ok.UserErrors)
			require.Equal(t, "COMPLETED", ok.CheckoutSession.Status)
			require.Equal(t, "LIVE", ok.CheckoutSession.Environment)
			expect(t, tb.createCheckout(t, tb.liveKey, body, newIdemKey()), "free_order_limit_reached")
		})
		t.Run("ReplayedRefusal", func(t *testing.T) {
			k := newIdemKey()
			soldOut := tb.cartFor("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)
			require.False(t, tb.createCheckout(t, tb.testKey, soldOut, k).Data["createCheckoutSession"].Replayed)
			again := tb.createCheckout(t, tb.testKey, soldOut, k)
			expect(t, again, "sold_out")
			require.True(t, again.Data["createCheckoutSession"].Replayed, "a saved refusal is replayed too")
		})
		t.Run("ErrServiceFailuresAreTopLevel", func(t *testing.T) {
			tb.m.Checkout.Config.LiveFreeDisabled = true
			defer func() { tb.m.Checkout.Config.LiveFreeDisabled = false }()
			r := tb.createCheckout(t, tb.liveKey, liveFree("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-2", "DEMO-CHALEWOTE-2-GA", 1, "abena@example.com"), newIdemKey())
			require.Nil(t, r.Data["createCheckoutSession"], "the field is null")
			require.Len(t, r.Errors, 1)
			require.Equal(t, "free_checkout_unavailable", r.Errors[0].Extensions["code"])
			require.NotContains(t, r.Errors[0].Extensions, "status", "the answer is a 200")
		})
	})
}

// TestCheckoutSiblings: two checkouts in one document run one after the
// other; whatever happens to the second, the first's session is in data.
func TestCheckoutSiblings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		doc := `mutation($a: CreateCheckoutSessionInput!, $b: CreateCheckoutSessionInput!) {
			a: createCheckoutSession(input: $a) { ` + payloadFields + ` }
			b: createCheckoutSession(input: $b) { ` + payloadFields + ` } }`
		run := func(t *testing.T, second map[string]any) gqlResult {
			t.Helper()
			res, err := tb.gqlClient(tb.testKey).RawPost(doc,
				client.Var("a", checkoutVars(tb.highlife(1), newIdemKey())["in"]),
				client.Var("b", checkoutVars(second, newIdemKey())["in"]))
			require.NoError(t, err)
			r := decodeResult(t, res)
			a := r.Data["a"]
			require.NotNil(t, a, "the first checkout is in data")
			require.NotNil(t, a.CheckoutSession, "%+v", a.UserErrors)
			require.Regexp(t, `^sbx_`, a.CheckoutSession.OrderReference)
			require.Equal(t, &struct{ Amount, Currency string }{"120.00", "GHS"}, a.CheckoutSession.TotalMoney)
			order := tb.get(t, "/api/v1/orders/"+a.CheckoutSession.OrderReference, tb.testKey)
			require.Equal(t, 200, order.Status, "the first order exists")
			return r
		}
		// throttleSecond makes the checkout limit refuse the second checkout
		// with err.
		throttleSecond := func(t *testing.T, err error) {
			var n atomic.Int32
			prev := tb.m.Checkout.Throttle
			tb.m.Checkout.Throttle = func(context.Context, checkout.Caller) error {
				if n.Add(1) == 2 {
					return err
				}
				return nil
			}
			t.Cleanup(func() { tb.m.Checkout.Throttle = prev })
		}

		t.Run("SecondRefused", func(t *testing.T) {
			r := run(t, tb.cartFor("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1))
			require.Empty(t, r.Errors)
			require.Equal(t, "sold_out", r.Data["b"].UserErrors[0].Code)
		})
		t.Run("SecondRateLimited", func(t *testing.T) {
			throttleSecond(t, &apperr.Error{Code: apperr.RateLimitExceeded, Message: "Too many checkout requests.", RetryAfter: 30})
			r := run(t, tb.highlife(1))
			require.Nil(t, r.Data["b"])
			require.Len(t, r.Errors, 1)
			require.Equal(t, []any{"b"}, r.Errors[0].Path)
			require.Equal(t, "rate_limit_exceeded", r.Errors[0].Extensions["code"])
			require.EqualValues(t, 30, r.Errors[0].Extensions["retryAfter"])
		})
		t.Run("SecondFailed", func(t *testing.T) {
			throttleSecond(t, errors.New("the database went away"))
			r := run(t, tb.highlife(1))
			require.Nil(t, r.Data["b"])
			require.Len(t, r.Errors, 1)
			require.Equal(t, "checkout_unavailable", r.Errors[0].Extensions["code"])
			require.NotContains(t, r.Errors[0].Message, "database", "internals never reach a client")
		})
	})
}
