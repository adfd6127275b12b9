package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/resolvers"
	"github.com/boxoffice/boxoffice/rest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// endpointDoors serves the endpoint rules through both APIs, as the
// server does, for one app's test key.
type endpointDoors struct {
	rest, graphql http.Handler
	ctx           context.Context
	hooks         *webhook.Service
	app           *provision.NewApp
}

func newEndpointDoors(t *testing.T, db *store.DB) *endpointDoors {
	t.Helper()
	ctx := context.Background()
	prov := &provision.Service{DB: db, Now: time.Now}
	acc, err := prov.CreateAccount(ctx, provision.AccountInput{Name: "Partner",
		Email: fmt.Sprintf("doors-%d@example.com", accounts.Add(1))})
	require.NoError(t, err)
	app, err := prov.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Shop", WebhookURL: "https://hooks.example.com/legacy"})
	require.NoError(t, err)
	hooks := &webhook.Service{DB: db, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		CheckURL: prov.CheckWebhookURL, Enqueue: func(context.Context, bun.Tx, []webhook.Delivery) error { return nil }}
	res := &resolvers.Resolver{Webhooks: hooks}
	r := chi.NewRouter()
	r.Route("/api/v1", (&rest.Handler{Resolver: res}).Routes)
	gql := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: res, Complexity: resolvers.Complexity()}))
	gql.AddTransport(transport.POST{})
	return &endpointDoors{rest: r, graphql: gql, hooks: hooks, app: app,
		ctx: auth.WithPrincipal(ctx, &auth.Principal{AppID: app.App.ID, AccountID: acc.ID, Environment: store.EnvTest})}
}

// doorAnswer is what either door said: the endpoint's url, or the
// refusal's code, message and fields.
type doorAnswer struct {
	URL     string
	Code    string
	Message string
}

func (d *endpointDoors) viaREST(t *testing.T, method, path, body string) (doorAnswer, int) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body)).WithContext(d.ctx)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	d.rest.ServeHTTP(rec, req)
	var out struct {
		Data  *struct{ URL string }
		Error *struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	if out.Data != nil {
		return doorAnswer{URL: out.Data.URL}, rec.Code
	}
	return doorAnswer{Code: out.Error.Code, Message: out.Error.Message}, rec.Code
}

func (d *endpointDoors) viaGraphQL(t *testing.T, mutation string, input map[string]any) doorAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"query":     fmt.Sprintf(`mutation($in: %sInput!) { %s(input: $in) { webhookEndpoint { url } userErrors { code message } } }`, inputType(mutation), mutation),
		"variables": map[string]any{"in": input},
	})
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body))).WithContext(d.ctx)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	d.graphql.ServeHTTP(rec, req)
	var out struct {
		Data map[string]*struct {
			WebhookEndpoint *struct{ URL string }
			UserErrors      []struct{ Code, Message string }
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	require.Empty(t, out.Errors, rec.Body.String())
	p := out.Data[mutation]
	if p.WebhookEndpoint != nil {
		return doorAnswer{URL: p.WebhookEndpoint.URL}
	}
	require.NotEmpty(t, p.UserErrors, rec.Body.String())
	return doorAnswer{Code: p.UserErrors[0].Code, Message: p.UserErrors[0].Message}
}

func inputType(mutation string) string {
	switch mutation {
	case "createWebhookEndpoint":
		return "CreateWebhookEndpoint"
	case "updateWebhookEndpoint":
		return "UpdateWebhookEndpoint"
	}
	return "WebhookEndpointId"
}

// TestEndpointsThroughBothDoors runs each case of the endpoint rules
// through REST and GraphQL: both answer alike (REST with the code's HTTP
// status), and a refusal changes nothing.
func TestEndpointsThroughBothDoors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		d := newEndpointDoors(t, db)
		ctx := context.Background()
		live, err := d.hooks.CreateEndpoint(ctx, d.app.App.ID, store.EnvLive, webhook.EndpointInput{URL: ptr("https://live.example.com/in")})
		require.NoError(t, err)
		long := strings.Repeat("é", 201)
		tests := []struct {
			name     string
			method   string
			path     string // REST
			body     string
			mutation string // GraphQL
			input    map[string]any
			want     doorAnswer
			status   int
		}{
			{"OK", http.MethodPost, "/api/v1/webhook-endpoints", `{"url": "https://staging.example.com/in", "enabled_events": ["order.paid"]}`,
				"createWebhookEndpoint", map[string]any{"url": "https://staging.example.com/in", "enabledEvents": []string{"order.paid"}},
				doorAnswer{URL: "https://staging.example.com/in"}, http.StatusCreated},
			{"ErrUnknownEventType", http.MethodPost, "/api/v1/webhook-endpoints", `{"url": "https://a.example.com/in", "enabled_events": ["order.shipped"]}`,
				"createWebhookEndpoint", map[string]any{"url": "https://a.example.com/in", "enabledEvents": []string{"order.shipped"}},
				doorAnswer{Code: "validation_failed", Message: `"order.shipped" is not an event type (` + strings.Join(webhook.Types, ", ") + ")"}, http.StatusUnprocessableEntity},
			{"ErrStarWithTypes", http.MethodPost, "/api/v1/webhook-endpoints", `{"url": "https://a.example.com/in", "enabled_events": ["*", "order.paid"]}`,
				"createWebhookEndpoint", map[string]any{"url": "https://a.example.com/in", "enabledEvents": []string{"*", "order.paid"}},
				doorAnswer{Code: "validation_failed", Message: `"*" already takes every type; send it alone`}, http.StatusUnprocessableEntity},
			{"ErrPlainHTTP", http.MethodPost, "/api/v1/webhook-endpoints", `{"url": "http://a.example.com/in"}`,
				"createWebhookEndpoint", map[string]any{"url": "http://a.example.com/in"},
				doorAnswer{Code: "validation_failed", Message: `"http://a.example.com/in" must be an absolute https:// URL`}, http.StatusUnprocessableEntity},
			{"ErrCredentials", http.MethodPost, "/api/v1/webhook-endpoints", `{"url": "https://u:p@a.example.com/in"}`,
				"createWebhookEndpoint", map[string]any{"url": "https://u:p@a.example.com/in"},
				doorAnswer{Code: "validation_failed", Message: `"https://u:p@a.example.com/in" must not carry a user name or password`}, http.StatusUnprocessableEntity},
			{"ErrSpecialAddress", http.MethodPost, "/api/v1/webhook-endpoints", `{"url": "https://169.254.169.254/in"}`,
				"createWebhookEndpoint", map[string]any{"url": "https://169.254.169.254/in"},
				doorAnswer{Code: "validation_failed"}, http.StatusUnprocessableEntity},
			{"ErrDescriptionTooLong", http.MethodPost, "/api/v1/webhook-endpoints", `{"url": "https://a.example.com/in", "description": "` + long + `"}`,
				"createWebhookEndpoint", map[string]any{"url": "https://a.example.com/in", "description": long},
				doorAnswer{Code: "validation_failed", Message: "must be at most 200 characters"}, http.StatusUnprocessableEntity},
			{"ErrEndpointNotFound", http.MethodPatch, "/api/v1/webhook-endpoints/we_nope", `{"description": "x"}`,
				"updateWebhookEndpoint", map[string]any{"id": "we_nope", "description": "x"},
				doorAnswer{Code: "webhook_endpoint_not_found", Message: "Webhook endpoint we_nope was not found for this app."}, http.StatusNotFound},
			{"ErrEnvironmentMismatch", http.MethodPatch, "/api/v1/webhook-endpoints/" + live.ID, `{"description": "x"}`,
				"updateWebhookEndpoint", map[string]any{"id": live.ID, "description": "x"},
				doorAnswer{Code: "environment_mismatch", Message: "Webhook endpoint " + live.ID + " belongs to the live environment; use a live key to manage it."}, http.StatusForbidden},
			{"ErrBadStatus", http.MethodPatch, "/api/v1/webhook-endpoints/" + live.ID, `{"status": "paused"}`,
				"", nil, doorAnswer{Code: "validation_failed", Message: "must be enabled or disabled"}, http.StatusUnprocessableEntity},
			{"ErrRotateNotFound", http.MethodPost, "/api/v1/webhook-endpoints/we_nope/rotate-secret", ``,
				"rotateWebhookEndpointSecret", map[string]any{"id": "we_nope"},
				doorAnswer{Code: "webhook_endpoint_not_found", Message: "Webhook endpoint we_nope was not found for this app."}, http.StatusNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before, err := d.hooks.Endpoints(ctx, d.app.App.ID, store.EnvTest)
				require.NoError(t, err)
				viaREST, status := d.viaREST(t, tc.method, tc.path, tc.body)
				require.Equal(t, tc.status, status, viaREST.Message)
				require.Equal(t, tc.want.Code, viaREST.Code)
				require.Equal(t, tc.want.URL, viaREST.URL)
				if tc.want.Message != "" {
					require.Contains(t, viaREST.Message, tc.want.Message)
				}
				if tc.want.Code != "" {
					after, err := d.hooks.Endpoints(ctx, d.app.App.ID, store.EnvTest)
					require.NoError(t, err)
					require.Equal(t, before, after, "a refusal changes nothing")
				}
				if tc.mutation == "" {
					return // GraphQL's enum refuses the value before the rule sees it
				}
				viaGraphQL := d.viaGraphQL(t, tc.mutation, tc.input)
				require.Equal(t, viaREST.Code, viaGraphQL.Code, "both doors answer alike")
				require.Equal(t, viaREST.URL, viaGraphQL.URL, "both doors answer alike")
				if tc.want.Message != "" {
					require.Contains(t, viaGraphQL.Message, tc.want.Message)
				}
			})
		}
	})
}

func ptr[T any](v T) *T { return &v }
