package rest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// TestDecodeCheckout checks what REST's decoding of a checkout body hands
// the service: the request as far as it could be read, and every problem
// under its field path.
func TestDecodeCheckout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    io.Reader
		want    *model.CheckoutRequest
		details apperr.Details
	}{
		{
			name: "OK",
			body: strings.NewReader(`{"event_id":1,"eventdate_id":2,"items":[{"ticket_id":3,"quantity":4}],
				"customer":{"name":"Ama","email":"ama@example.com","phone":"0241234567"},
				"success_url":"https://a.example/ok","cancel_url":"https://a.example/no","metadata":{"n":1.50},"unknown":true}`),
			want: &model.CheckoutRequest{
				EventID: ptr(1), EventdateID: ptr(2),
				Items:      []*model.CheckoutItemInput{{TicketID: ptr(3), Quantity: ptr(4)}},
				Customer:   &model.CustomerInput{Name: ptr("Ama"), Email: ptr("ama@example.com"), Phone: ptr("0241234567")},
				SuccessURL: ptr("https://a.example/ok"), CancelURL: ptr("https://a.example/no"),
				// Numbers are kept as written: the request's fingerprint.
				Metadata: map[string]any{"n": json.Number("1.50")},
			},
		},
		{
			name: "OKIntegralFloatAndNulls",
			body: strings.NewReader(`{"event_id":3.0,"eventdate_id":null,"items":null,"customer":null}`),
			want: &model.CheckoutRequest{EventID: ptr(3)},
		},
		{
			name:    "ErrEmpty",
			body:    strings.NewReader(""),
			details: apperr.Details{"body": {"is required"}},
		},
		{
			name:    "ErrMalformed",
			body:    strings.NewReader(`{"event_id":`),
			details: apperr.Details{"body": {"is not valid JSON (unexpected EOF)"}},
		},
		{
			name:    "ErrTrailingData",
			body:    strings.NewReader(`{} {}`),
			details: apperr.Details{"body": {"is not valid JSON (trailing data after the JSON object)"}},
		},
		{
			name:    "ErrNotAnObject",
			body:    strings.NewReader(`[1]`),
			details: apperr.Details{"body": {"must be a JSON object"}},
		},
		{
			name:    "ErrTooLarge",
			body:    maxBytes(`{"metadata":"more than sixteen bytes"}`, 16),
			details: apperr.Details{"body": {"must be at most 16 bytes"}},
		},
		{
			name: "ErrTypes",
			body: strings.NewReader(`{"event_id":"1","eventdate_id":2,"items":[{"ticket_id":1,"quantity":1.5},7,null],
				"customer":"Ama","success_url":1,"cancel_url":"https://a.example/no","metadata":[]}`),
			want: &model.CheckoutRequest{
				EventdateID: ptr(2), Items: []*model.CheckoutItemInput{{TicketID: ptr(1)}, nil, nil},
				CancelURL: ptr("https://a.example/no"), Metadata: []any{},
			},
			details: apperr.Details{
				"event_id":         {"must be an integer"},
				"items.0.quantity": {"must be an integer"},
				"items.1":          {"must be an object with ticket_id and quantity"},
				"customer":         {"must be an object"},
				"success_url":      {"must be a string"},
			},
		},
		{
			name: "ErrTypesNested",
			body: strings.NewReader(`{"items":{"ticket_id":1},"customer":{"name":7,"email":null,"phone":["024"]},"event_id":3000000000}`),
			want: &model.CheckoutRequest{Customer: &model.CustomerInput{}},
			details: apperr.Details{
				"items":          {"must be an array"},
				"customer.name":  {"must be a string"},
				"customer.phone": {"must be a string"},
				"event_id":       {"must be an integer between -2147483648 and 2147483647"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, details := decodeCheckout(tt.body)
			require.Equal(t, tt.want, got)
			if tt.details == nil {
				require.Empty(t, details)
			} else {
				require.Equal(t, tt.details, details)
			}
		})
	}
}

// maxBytes is body as a request body limited to n bytes.
func maxBytes(body string, n int64) io.Reader {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	return http.MaxBytesReader(httptest.NewRecorder(), r.Body, n)
}
