package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/resolvers"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// restBundle is one test's /api/v1 routes over a real checkout service.
type restBundle struct {
	*checkouttest.Fixture
	routes http.Handler
}

func setupREST(t *testing.T, db *store.DB) *restBundle {
	t.Helper()
	f := checkouttest.MustNew(t, db)
	r := chi.NewRouter()
	r.Route("/api/v1", (&Handler{Resolver: &resolvers.Resolver{Checkout: f.Service}}).Routes)
	return &restBundle{Fixture: f, routes: r}
}

// request is one call to the routes; the demo app's test key made it
// unless anonymous.
type request struct {
	method, path string
	key          string // the Idempotency-Key header; none when ""
	contentType  string // application/json when ""
	body         string
	anonymous    bool
}

func (b *restBundle) do(t *testing.T, r request) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	if r.key != "" {
		req.Header.Set("Idempotency-Key", r.key)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if !r.anonymous {
		// What the authentication middleware puts there.
		req = req.WithContext(auth.WithPrincipal(context.Background(),
			&auth.Principal{AppID: b.Demo.App.App.ID, Environment: store.EnvTest}))
	}
	rec := httptest.NewRecorder()
	b.routes.ServeHTTP(rec, req)
	return rec
}

// cart is a checkout body for one ticket of a demo date.
func (b *restBundle) cart(t *testing.T, event, date, ticket string) string {
	return fmt.Sprintf(`{"event_id":%d,"eventdate_id":%d,"items":[{"ticket_id":%d,"quantity":1}],`+
		`"customer":{"name":"Ama Mensah","email":"ama@example.com","phone":"0241234567"},`+
		`"success_url":"https://partner.example/ok","cancel_url":"https://partner.example/no"}`,
		b.ID(t, event), b.ID(t, date), b.ID(t, ticket))
}

// TestCreateCheckoutSession checks the handler's adapting work: the header
// and body handed over, the spec's JSON with meta.status_code, and the
// Idempotent-Replayed header on a replay.
func TestCreateCheckoutSession(t *testing.T) {
	t.Parallel()
	post := func(key, body string) request {
		return request{method: http.MethodPost, path: "/api/v1/checkout-sessions", key: key, body: body}
	}
	validation := func(details string) string {
		return `{"error":{"code":"validation_failed","message":"The request payload failed validation.","details":` +
			details + `},"meta":{"status_code":422}}` + "\n"
	}
	tests := []struct {
		name   string
		req    func(*testing.T, *restBundle) request
		status int
		body   func(*testing.T, *restBundle) string
	}{
		{
			name:   "ErrMissingIdempotencyKeyBeforeMalformedJSON",
			req:    func(*testing.T, *restBundle) request { return post("", `{"event_id":`) },
			status: http.StatusBadRequest,
			body: func(*testing.T, *restBundle) string {
				return `{"error":{"code":"missing_idempotency_key","message":"The Idempotency-Key header is required."},"meta":{"status_code":400}}` + "\n"
			},
		},
		{
			name:   "ErrValidationFailedMalformedJSON",
			req:    func(*testing.T, *restBundle) request { return post("k", `{"event_id":`) },
			status: http.StatusUnprocessableEntity,
			body: func(*testing.T, *restBundle) string {
				return validation(`{"body":["is not valid JSON (unexpected EOF)"]}`)
			},
		},
		{
			name: "ErrValidationFailedTypeError",
			req: func(t *testing.T, b *restBundle) request {
				return post("k", strings.Replace(b.cart(t, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG"), `"quantity":1`, `"quantity":"1"`, 1))
			},
			status: http.StatusUnprocessableEntity,
			body:   func(*testing.T, *restBundle) string { return validation(`{"items.0.quantity":["must be an integer"]}`) },
		},
		{
			name: "ErrValidationFailedContentType",
			req: func(t *testing.T, b *restBundle) request {
				r := post("k", b.cart(t, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG"))
				r.contentType = "text/plain"
				return r
			},
			status: http.StatusUnprocessableEntity,
			body: func(*testing.T, *restBundle) string {
				return validation(`{"body":["Content-Type must be application/json"]}`)
			},
		},
		{
			name: "ErrValidationFailedTooLarge",
			req: func(*testing.T, *restBundle) request {
				return post("k", `{"metadata":"`+strings.Repeat("x", maxCheckoutBody)+`"}`)
			},
			status: http.StatusUnprocessableEntity,
			body:   func(*testing.T, *restBundle) string { return validation(`{"body":["must be at most 65536 bytes"]}`) },
		},
		{
			name: "ErrUnauthorized",
			req: func(t *testing.T, b *restBundle) request {
				r := post("k", b.cart(t, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG"))
				r.anonymous = true
				return r
			},
			status: http.StatusUnauthorized,
			body: func(*testing.T, *restBundle) string {
				return `{"error":{"code":"unauthorized","message":"Authenticated app context is missing."},"meta":{"status_code":401}}` + "\n"
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				b := setupREST(t, db)
				rec := b.do(t, tt.req(t, b))
				require.Equal(t, tt.status, rec.Code)
				require.Equal(t, tt.body(t, b), rec.Body.String())
				require.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
				require.Empty(t, rec.Header().Values("Idempotent-Replayed"))
			})
		})
	}

	t.Run("OKReplayed", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupREST(t, db)
			req := post("k", b.cart(t, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG"))
			first := b.do(t, req)
			require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
			require.Empty(t, first.Header().Values("Idempotent-Replayed"))
			var created struct {
				Data struct {
					Ref string `json:"order_reference"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(first.Body.Bytes(), &created))
			ref := created.Data.Ref
			require.Equal(t, `{"data":{"order_reference":"`+ref+`","checkout_url":"http://localhost:8080/sandbox/checkout/`+ref+
				`","expires_at":"`+b.Now.Add(time.Hour).Format(time.RFC3339)+`","status":"pending","environment":"test",`+
				`"requires_payment":true,"total_amount":"120.00","payment_reference":null},"meta":{"status_code":201}}`+"\n",
				first.Body.String())

			again := b.do(t, req)
			require.Equal(t, http.StatusCreated, again.Code)
			require.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
			require.Equal(t, first.Body.String(), again.Body.String())

			order := b.do(t, request{method: http.MethodGet, path: "/api/v1/orders/" + ref})
			require.Equal(t, http.StatusOK, order.Code)
			stamp := b.Now.Format(time.RFC3339)
			require.Equal(t, `{"data":{"reference":"`+ref+`","status":"pending","status_code":1,"currency":"GHS",`+
				`"created_at":"`+stamp+`","updated_at":"`+stamp+`","payment_reference":null,"environment":"test",`+
				`"event_id":10,"eventdate_id":16,"total_amount":"120.00","requires_payment":true,`+
				`"expires_at":"`+b.Now.Add(time.Hour).Format(time.RFC3339)+`","checkout_url":"http://localhost:8080/sandbox/checkout/`+ref+`",`+
				`"metadata":{},"items":[{"ticket_id":19,"name":"Regular","quantity":1,"unit_price":"120.00","amount":"120.00"}],`+
				`"tickets":[],"tickets_url":null,"tickets_email":{"status":"not_sent","sent_at":null},`+
				`"refunded_amount":"0.00","refund_status":"none","refunds":[]}}`+"\n",
				order.Body.String())
		})
	})
	t.Run("ErrSoldOutReplayed", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupREST(t, db)
			req := post("k", b.cart(t, "DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG"))
			want := fmt.Sprintf(`{"error":{"code":"sold_out","message":"Ticket %d does not have enough tickets left."},"meta":{"status_code":409}}`+"\n",
				b.ID(t, "DEMO-COMEDY-REG"))
			first := b.do(t, req)
			require.Equal(t, http.StatusConflict, first.Code)
			require.Equal(t, want, first.Body.String())
			require.Empty(t, first.Header().Values("Idempotent-Replayed"))

			again := b.do(t, req)
			require.Equal(t, http.StatusConflict, again.Code)
			require.Equal(t, want, again.Body.String())
			require.Equal(t, "true", again.Header().Get("Idempotent-Replayed"), "a saved refusal is a replay too")
		})
	})
}

func TestGetOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setupREST(t, db)
		rec := b.do(t, request{method: http.MethodGet, path: "/api/v1/orders/sbx_nope"})
		require.Equal(t, http.StatusNotFound, rec.Code)
		require.Equal(t, `{"error":{"code":"order_not_found","message":"Order sbx_nope was not found for this app."}}`+"\n",
			rec.Body.String(), "only checkout answers carry meta")
	})
}
