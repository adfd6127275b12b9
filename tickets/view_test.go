package tickets_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/stretchr/testify/require"
)

// TestNewView: an issued ticket as both APIs and the webhooks show it,
// field names included, since partners parse them.
func TestNewView(t *testing.T) {
	t.Parallel()
	stored := store.IssuedTicket{
		ID: 41, PublicID: "itk_abc", Code: "TESTCODE", OrderID: 7, AppID: 3, Environment: store.EnvTest,
		TicketID: 12, TicketName: "VIP table seat", EventID: 4, EventDateID: 9, Position: 2, TicketsInOrder: 3,
		Status: store.TicketValid,
	}
	tests := []struct {
		name string
		edit func(*store.IssuedTicket)
		want string
	}{
		{
			name: "OK",
			want: `{"id":"itk_abc","code":"TESTCODE","order_reference":"sbx_ref","ticket_id":12,"ticket_name":"VIP table seat",` +
				`"event_id":4,"eventdate_id":9,"position":2,"tickets_in_order":3,"status":"valid","checked_in_at":null,"environment":"test"}`,
		},
		{
			// Stamped in UTC whatever zone the row was read in.
			name: "OKCheckedIn",
			edit: func(tk *store.IssuedTicket) {
				tk.Status = store.TicketCheckedIn
				tk.CheckedInAt = time.Date(2026, 12, 24, 19, 5, 30, 123456000, time.FixedZone("WAT", 3600))
			},
			want: `{"id":"itk_abc","code":"TESTCODE","order_reference":"sbx_ref","ticket_id":12,"ticket_name":"VIP table seat",` +
				`"event_id":4,"eventdate_id":9,"position":2,"tickets_in_order":3,"status":"checked_in",` +
				`"checked_in_at":"2026-12-24T18:05:30Z","environment":"test"}`,
		},
		{
			name: "OKVoid",
			edit: func(tk *store.IssuedTicket) { tk.Status = store.TicketVoid },
			want: `{"id":"itk_abc","code":"TESTCODE","order_reference":"sbx_ref","ticket_id":12,"ticket_name":"VIP table seat",` +
				`"event_id":4,"eventdate_id":9,"position":2,"tickets_in_order":3,"status":"void","checked_in_at":null,"environment":"test"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := stored
			if tt.edit != nil {
				tt.edit(&tk)
			}
			got, err := json.Marshal(tickets.NewView(&tk, "sbx_ref"))
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(got))
		})
	}
}
