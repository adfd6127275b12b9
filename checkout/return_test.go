package checkout

import (
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/stretchr/testify/require"
)

func TestPartnerReturnURL(t *testing.T) {
	tests := []struct {
		name, success, status, want string
	}{
		{"Paid", "https://shop.example/done", store.OrderPaid, "https://shop.example/done?order_reference=sbx_abc"},
		{"Completed", "https://shop.example/done", store.OrderCompleted, "https://shop.example/done?order_reference=sbx_abc"},
		{"FailedGoesToCancel", "https://shop.example/done", store.OrderFailed, "https://shop.example/cancel?order_reference=sbx_abc"},
		{"ExpiredGoesToCancel", "https://shop.example/done", store.OrderExpired, "https://shop.example/cancel?order_reference=sbx_abc"},
		{"KeepsQueryAsWritten", "https://shop.example/done?cart=7&b=x%20y&flag", store.OrderPaid,
			"https://shop.example/done?cart=7&b=x%20y&flag&order_reference=sbx_abc"},
		{"KeepsFragment", "https://shop.example/done?cart=7#top", store.OrderPaid, "https://shop.example/done?cart=7&order_reference=sbx_abc#top"},
		{"ReplacesOwnParam", "https://shop.example/done?order_reference=old&cart=7&order%5Freference=x", store.OrderPaid,
			"https://shop.example/done?cart=7&order_reference=sbx_abc"},
		{"EmptyQuery", "https://shop.example/done?", store.OrderPaid, "https://shop.example/done?order_reference=sbx_abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &store.Order{Reference: "sbx_abc", SuccessURL: tt.success, CancelURL: "https://shop.example/cancel"}
			require.Equal(t, tt.want, PartnerReturnURL(o, tt.status))
		})
	}
}
