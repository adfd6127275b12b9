package rest

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/stretchr/testify/require"
)

// TestDecodeRefund checks what REST's decoding of a refund body hands the
// rule: the request as far as it could be read, and every problem under
// its field path; hostile bodies (wrong types, NUL bytes, deep or huge
// documents) end as problems, never as a panic or an unbounded read.
func TestDecodeRefund(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	tests := []struct {
		name    string
		body    string
		want    *refunds.Input
		details []string // the fields with a problem
	}{
		{name: "OKEmptyIsWholeOrder", body: "", want: &refunds.Input{}},
		{name: "OKWhitespace", body: " \n\t", want: &refunds.Input{}},
		{name: "OKFields", body: `{"tickets":["itk_a","itk_b"],"amount":"10.00","reason":"other","unknown":1}`,
			want: &refunds.Input{Tickets: []*string{ptr("itk_a"), ptr("itk_b")}, Amount: ptr("10.00"), Reason: ptr("other")}},
		{name: "OKMoneyOnly", body: `{"tickets":[],"amount":"1.00"}`, want: &refunds.Input{Tickets: []*string{}, Amount: ptr("1.00")}},
		{name: "OKNullsAreOmitted", body: `{"tickets":null,"amount":null,"reason":null}`, want: &refunds.Input{}},
		{name: "ErrMalformed", body: `{"tickets":`, details: []string{"body"}},
		{name: "ErrNotAnObject", body: `["itk_a"]`, details: []string{"body"}},
		{name: "ErrTrailingData", body: `{} {}`, details: []string{"body"}},
		{name: "ErrWrongTypes", body: `{"tickets":"itk_a","amount":10,"reason":true}`, details: []string{"amount", "reason", "tickets"}},
		{name: "ErrTicketNotAString", body: `{"tickets":["itk_a",7,null]}`, details: []string{"tickets.1", "tickets.2"}},
		{name: "ErrDeeplyNested", body: deep, details: []string{"body"}},
		{name: "ErrTooLarge", body: `{"metadata":{"k":"` + strings.Repeat("x", maxRefundBody) + `"}}`, details: []string{"body"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest("POST", "/api/v1/orders/sbx_x/refunds", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			in, d := decodeJSON(httptest.NewRecorder(), req, maxRefundBody, decodeRefund)
			if tt.details == nil {
				require.Empty(t, d)
				require.Equal(t, tt.want, in)
				return
			}
			require.Equal(t, tt.details, d.Fields(), "%v", d)
			for _, f := range tt.details {
				require.NotEmpty(t, d[f][0])
			}
		})
	}
	t.Run("ErrNotJSON", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/api/v1/orders/sbx_x/refunds", strings.NewReader(`tickets=itk_a`))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		_, d := decodeJSON(httptest.NewRecorder(), req, maxRefundBody, decodeRefund)
		require.Equal(t, apperr.Details{"body": {"Content-Type must be application/json"}}, d)
	})
	t.Run("NULBytesReachTheRule", func(t *testing.T) {
		// Decoding keeps a NUL as it is; the rule refuses it (an unknown
		// ticket id, an invalid reason) with the API's codes.
		req := httptest.NewRequest("POST", "/api/v1/orders/sbx_x/refunds", strings.NewReader(`{"tickets":["itk_\u0000"],"reason":"other\u0000"}`))
		in, d := decodeJSON(httptest.NewRecorder(), req, maxRefundBody, decodeRefund)
		require.Empty(t, d)
		require.Equal(t, "itk_\x00", *in.Tickets[0])
		require.Equal(t, "other\x00", *in.Reason)
	})
}
