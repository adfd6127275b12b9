package tickets

import (
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
)

// View is an issued ticket as both APIs and the webhooks show it
// (spec/fulfilment.md section 1, "Issued ticket").
type View struct {
	ID             string  `json:"id"`
	Code           string  `json:"code"`
	OrderReference string  `json:"order_reference"`
	TicketID       int64   `json:"ticket_id"`
	TicketName     string  `json:"ticket_name"`
	EventID        int64   `json:"event_id"`
	EventdateID    int64   `json:"eventdate_id"`
	Position       int64   `json:"position"`
	TicketsInOrder int64   `json:"tickets_in_order"`
	Status         string  `json:"status"`
	CheckedInAt    *string `json:"checked_in_at"`
	Environment    string  `json:"environment"`
}

// NewView converts a stored ticket of the order with reference ref.
func NewView(t *store.IssuedTicket, ref string) *View {
	v := &View{
		ID: t.PublicID, Code: t.Code, OrderReference: ref, TicketID: t.TicketID, TicketName: t.TicketName,
		EventID: t.EventID, EventdateID: t.EventDateID, Position: t.Position, TicketsInOrder: t.TicketsInOrder, Status: t.Status,
		Environment: t.Environment,
	}
	if !t.CheckedInAt.IsZero() {
		at := catalog.FormatStamp(t.CheckedInAt)
		v.CheckedInAt = &at
	}
	return v
}
