package refunds_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/resolvers"
	"github.com/boxoffice/boxoffice/rest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// answer is what either door said of a refund request: the refund's
// status, or the refusal's code and message.
type answer struct {
	Status  string
	Code    string
	Message string
}

// doors serves the refund rule through both APIs, as the server does.
type doors struct {
	rest, graphql http.Handler
	ctx           context.Context
}

func newDoors(b *bundle) *doors {
	res := &resolvers.Resolver{Checkout: b.f.Service, Refunds: b.svc}
	r := chi.NewRouter()
	r.Route("/api/v1", (&rest.Handler{Resolver: res}).Routes)
	gql := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: res, Complexity: resolvers.Complexity()}))
	gql.AddTransport(transport.POST{})
	return &doors{rest: r, graphql: gql,
		ctx: auth.WithPrincipal(context.Background(), &auth.Principal{AppID: b.f.Demo.App.App.ID, Environment: store.EnvTest})}
}

// viaREST is POST /api/v1/orders/{ref}/refunds with body (JSON).
func (d *doors) viaREST(t *testing.T, ref, key, body string) (answer, int) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/orders/"+ref+"/refunds", strings.NewReader(body)).WithContext(d.ctx)
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	d.rest.ServeHTTP(rec, req)
	var out struct {
		Data  *struct{ Status string } `json:"data"`
		Error *struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	if out.Data != nil {
		return answer{Status: out.Data.Status}, rec.Code
	}
	return answer{Code: out.Error.Code, Message: out.Error.Message}, rec.Code
}

// viaGraphQL is Mutation.createRefund with the same input.
func (d *doors) viaGraphQL(t *testing.T, ref, key string, input map[string]any) answer {
	t.Helper()
	input["reference"], input["idempotencyKey"] = ref, key
	body, err := json.Marshal(map[string]any{
		"query":     `mutation($in: CreateRefundInput!) { createRefund(input: $in) { refund { status } userErrors { code message } } }`,
		"variables": map[string]any{"in": input},
	})
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body))).WithContext(d.ctx)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	d.graphql.ServeHTTP(rec, req)
	var out struct {
		Data struct {
			CreateRefund struct {
				Refund     *struct{ Status string }
				UserErrors []struct{ Code, Message string }
			}
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	require.Empty(t, out.Errors, rec.Body.String())
	p := out.Data.CreateRefund
	if p.Refund != nil {
		return answer{Status: strings.ToLower(p.Refund.Status)}
	}
	require.Len(t, p.UserErrors, 1, rec.Body.String())
	return answer{Code: p.UserErrors[0].Code, Message: p.UserErrors[0].Message}
}

// TestRefundThroughBothDoors runs each case of the refund rule through
// REST and GraphQL: both answer with the same status or the same code
// and message, REST with the code's HTTP status.
func TestRefundThroughBothDoors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		d := newDoors(b)
		tests := []struct {
			name   string
			order  func(t *testing.T) *store.Order
			rest   string         // the REST body
			gql    map[string]any // the same input for GraphQL
			want   answer
			status int
		}{
			{"OK", func(t *testing.T) *store.Order { return b.highlife(t, store.EnvTest, 1) },
				`{}`, map[string]any{}, answer{Status: "succeeded"}, http.StatusCreated},
			{"OKMoneyOnly", func(t *testing.T) *store.Order { return b.highlife(t, store.EnvTest, 1) },
				`{"tickets": [], "amount": "5.00", "reason": "other"}`,
				map[string]any{"tickets": []string{}, "amount": "5.00", "reason": "OTHER"},
				answer{Status: "succeeded"}, http.StatusCreated},
			{"ErrTicketNotFound", func(t *testing.T) *store.Order { return b.highlife(t, store.EnvTest, 1) },
				`{"tickets": ["itk_nope"]}`, map[string]any{"tickets": []string{"itk_nope"}},
				answer{Code: "ticket_not_found"}, http.StatusNotFound},
			{"ErrRefundExceedsBalance", func(t *testing.T) *store.Order { return b.highlife(t, store.EnvTest, 1) },
				`{"tickets": [], "amount": "999.00"}`, map[string]any{"tickets": []string{}, "amount": "999.00"},
				answer{Code: "refund_exceeds_balance"}, http.StatusConflict},
			{"ErrNothingToRefund", func(t *testing.T) *store.Order { return b.highlife(t, store.EnvTest, 1) },
				`{"tickets": [], "amount": "0"}`, map[string]any{"tickets": []string{}, "amount": "0"},
				answer{Code: "validation_failed"}, http.StatusUnprocessableEntity},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				viaREST, status := d.viaREST(t, tc.order(t).Reference, "rest-"+tc.name, tc.rest)
				viaGraphQL := d.viaGraphQL(t, tc.order(t).Reference, "gql-"+tc.name, tc.gql)
				require.Equal(t, tc.status, status)
				require.Equal(t, tc.want.Status, viaREST.Status)
				require.Equal(t, tc.want.Code, viaREST.Code)
				require.Equal(t, viaREST.Status, viaGraphQL.Status, "both doors answer alike")
				require.Equal(t, viaREST.Code, viaGraphQL.Code, "both doors answer alike")
				if tc.want.Code != "validation_failed" {
					// The two orders' references differ; the rest of the message is the rule's.
					require.Equal(t, len(strings.Fields(viaREST.Message)), len(strings.Fields(viaGraphQL.Message)))
				}
			})
		}
	})
}
