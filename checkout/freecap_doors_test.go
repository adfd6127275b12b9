package checkout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/resolvers"
	"github.com/boxoffice/boxoffice/rest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// freeDoors creates live free checkouts through REST and GraphQL, as the
// server serves them, for any app.
type freeDoors struct {
	rest, graphql http.Handler
	b             *lifecycleBundle
}

// freeAnswer is a checkout's outcome through either door: the order's
// status, or the refusal's code and message.
type freeAnswer struct{ Status, Code, Message string }

// create asks for qty free Chale Wote tickets for buyer as app (of
// account) through the door named by via.
func (d *freeDoors) create(t *testing.T, via string, app, account int64, key, buyer string, qty int) freeAnswer {
	t.Helper()
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{AppID: app, AccountID: account, Environment: store.EnvLive})
	c := d.b.demo.Catalog
	event, date, ticket := c.Events["DEMO-CHALEWOTE"], c.EventDates["DEMO-CHALEWOTE-1"], c.Tickets["DEMO-CHALEWOTE-1-GA"]
	rec := httptest.NewRecorder()
	if via == "REST" {
		body := fmt.Sprintf(`{"event_id": %d, "eventdate_id": %d, "items": [{"ticket_id": %d, "quantity": %d}],
			"customer": {"name": "Ama Mensah", "email": %q, "phone": "0241234567"},
			"success_url": "https://partner.example/ok", "cancel_url": "https://partner.example/no"}`, event, date, ticket, qty, buyer)
		req := httptest.NewRequest(http.MethodPost, "/api/v1/checkout-sessions", strings.NewReader(body)).WithContext(ctx)
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
		d.rest.ServeHTTP(rec, req)
		var out struct {
			Data  *struct{ Status string }
			Error *struct{ Code, Message string }
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
		if out.Data != nil {
			return freeAnswer{Status: out.Data.Status}
		}
		require.Equal(t, http.StatusTooManyRequests, rec.Code, "free_order_limit_reached is 429")
		return freeAnswer{Code: out.Error.Code, Message: out.Error.Message}
	}
	body, err := json.Marshal(map[string]any{
		"query": `mutation($in: CreateCheckoutSessionInput!) { createCheckoutSession(input: $in) { checkoutSession { status } userErrors { code message } } }`,
		"variables": map[string]any{"in": map[string]any{
			"idempotencyKey": key, "eventId": event, "eventdateId": date,
			"items":      []map[string]any{{"ticketId": ticket, "quantity": qty}},
			"customer":   map[string]any{"name": "Ama Mensah", "email": buyer, "phone": "0241234567"},
			"successUrl": "https://partner.example/ok", "cancelUrl": "https://partner.example/no",
		}},
	})
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body))).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	d.graphql.ServeHTTP(rec, req)
	var out struct {
		Data struct {
			CreateCheckoutSession struct {
				CheckoutSession *struct{ Status string }
				UserErrors      []struct{ Code, Message string }
			}
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	require.Empty(t, out.Errors, rec.Body.String())
	p := out.Data.CreateCheckoutSession
	if p.CheckoutSession != nil {
		return freeAnswer{Status: strings.ToLower(p.CheckoutSession.Status)}
	}
	require.Len(t, p.UserErrors, 1, rec.Body.String())
	return freeAnswer{Code: p.UserErrors[0].Code, Message: p.UserErrors[0].Message}
}

// TestFreeAccountCap: the live free tickets of all of an account's apps
// together are capped per UTC day (FREE_DAILY_ACCOUNT_CAP), through REST
// and GraphQL alike, though each app is under its own cap; another
// account's apps are not held back, and the test environment never
// counts.
func TestFreeAccountCap(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"REST", "GraphQL"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				b := setupLifecycle(t, db)
				b.svc.Config.FreeDailyAppCap = 4
				b.svc.Config.FreeDailyAccountCap = 6
				b.svc.Config.FreeDailyBuyerEventCap = 10
				res := &resolvers.Resolver{Checkout: b.svc}
				r := chi.NewRouter()
				r.Route("/api/v1", (&rest.Handler{Resolver: res}).Routes)
				gql := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: res, Complexity: resolvers.Complexity()}))
				gql.AddTransport(transport.POST{})
				d := &freeDoors{rest: r, graphql: gql, b: b}

				prov := &provision.Service{DB: db, Now: b.clock.Now}
				account := b.demo.AccountID
				first := b.demo.App.App.ID
				second, err := prov.CreateApp(context.Background(), provision.AppInput{AccountID: account, Name: "Second shop",
					RedirectDomains: []string{"partner.example"}})
				require.NoError(t, err)
				other, err := prov.CreateAccount(context.Background(), provision.AccountInput{Name: "Other", Email: "other@example.com"})
				require.NoError(t, err)
				otherApp, err := prov.CreateApp(context.Background(), provision.AppInput{AccountID: other.ID, Name: "Other shop",
					RedirectDomains: []string{"partner.example"}})
				require.NoError(t, err)

				completed := freeAnswer{Status: "completed"}
				refused := freeAnswer{Code: "free_order_limit_reached",
					Message: "This account has reached today's limit of 6 free tickets, all its apps together."}
				for i, step := range []struct {
					app, account int64
					buyer        string
					qty          int
					want         freeAnswer
				}{
					{first, account, "a@example.com", 3, completed},
					{second.App.ID, account, "b@example.com", 3, completed},
					{second.App.ID, account, "c@example.com", 1, refused},
					{first, account, "d@example.com", 1, refused},
					{otherApp.App.ID, other.ID, "e@example.com", 4, completed},
				} {
					got := d.create(t, via, step.app, step.account, fmt.Sprintf("k%d", i), step.buyer, step.qty)
					require.Equal(t, step.want, got, "step %d", i)
				}
				used, err := store.FreeUsage(context.Background(), db, fmt.Sprintf("account:%d", account), b.start.UTC().Format("2006-01-02"))
				require.NoError(t, err)
				require.EqualValues(t, 6, used, "refusals take nothing")
			})
		})
	}
}
