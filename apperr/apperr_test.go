package apperr_test

import (
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/stretchr/testify/require"
)

func TestCodeTransient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code apperr.Code
		want bool
	}{
		{apperr.RateLimitExceeded, true},
		{apperr.FreeOrderLimitReached, true},
		{apperr.CheckoutUnavailable, true},
		{apperr.PaymentGatewayUnavailable, true},
		{apperr.Internal, true},
		{"no_such_code", true}, // a 500
		{apperr.ValidationFailed, false},
		{apperr.SoldOut, false},
		{apperr.IdempotencyInProgress, false},
		{apperr.MissingIdempotencyKey, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, tt.code.Transient())
		})
	}
}
