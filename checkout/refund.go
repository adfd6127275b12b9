package checkout

import (
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
)

// Refund is the Refund of docs/spec/refunds.md section 1: money returned
// on an order and the tickets it cancelled. REST, GraphQL and webhooks all
// show this type; it lives beside the Order that lists it. The rules that
// make refunds are package refunds'.
type Refund struct {
	ID             string         `json:"id"`
	OrderReference string         `json:"order_reference"`
	Amount         string         `json:"amount"`
	Currency       string         `json:"currency"`
	Tickets        []string       `json:"tickets"`
	Reason         string         `json:"reason"`
	Status         string         `json:"status"`
	FailureReason  *string        `json:"failure_reason"`
	Metadata       map[string]any `json:"metadata"`
	Environment    string         `json:"environment"`
	CreatedAt      string         `json:"created_at"`
	UpdatedAt      string         `json:"updated_at"`
}

// Refund statuses of an order (refund_status).
const (
	RefundStatusNone    = "none"
	RefundStatusPartial = "partial"
	RefundStatusFull    = "full"
)

// NewRefund converts a stored refund, of the order with reference ref,
// with the tickets it cancelled (any order), into the API's Refund.
func NewRefund(r *store.Refund, ref string, cancelled []store.IssuedTicket) *Refund {
	v := &Refund{
		ID: r.PublicID, OrderReference: ref, Amount: catalog.FormatAmount(r.Amount), Currency: r.Currency,
		Tickets: []string{}, Reason: r.Reason, Status: r.Status, FailureReason: r.FailureReason,
		Metadata: r.Metadata, Environment: r.Environment,
		CreatedAt: catalog.FormatStamp(r.CreatedAt), UpdatedAt: catalog.FormatStamp(r.UpdatedAt),
	}
	if v.Metadata == nil {
		v.Metadata = map[string]any{}
	}
	for _, t := range cancelled {
		if t.RefundID != nil && *t.RefundID == r.ID {
			v.Tickets = append(v.Tickets, t.PublicID)
		}
	}
	return v
}

// RefundStatus is an order's refund_status: full once every ticket is void
// and the succeeded refunds return the whole total, partial once any
// refund has returned money or cancelled a ticket, none before.
func RefundStatus(o *store.Order, ts []store.IssuedTicket, refunds []store.Refund) string {
	cancelled := false
	for _, t := range ts {
		if t.RefundID != nil {
			cancelled = true
		}
	}
	allVoid := true
	for _, t := range ts {
		if t.Status != store.TicketVoid {
			allVoid = false
		}
	}
	switch {
	case len(refunds) > 0 && allVoid && o.RefundedAmount == o.TotalAmount:
		return RefundStatusFull
	case o.RefundedAmount > 0 || cancelled:
		return RefundStatusPartial
	}
	return RefundStatusNone
}
