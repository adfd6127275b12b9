package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Issued ticket statuses (spec/fulfilment.md section 1).
const (
	TicketValid     = "valid"
	TicketCheckedIn = "checked_in"
	TicketVoid      = "void"
)

// IssuedTicket is one admission of a paid order: what a door scans.
type IssuedTicket struct {
	bun.BaseModel `bun:"table:issued_tickets,alias:it"`

	ID int64 `bun:"id,pk,autoincrement"`
	// PublicID is the API's id (itk_…); Code is the secret a scanner reads.
	PublicID    string    `bun:"public_id,notnull"`
	Code        string    `bun:"code,notnull"`
	OrderID     int64     `bun:"order_id,notnull"`
	AppID       int64     `bun:"app_id,notnull"`
	Environment string    `bun:"environment,notnull"`
	TicketID    int64     `bun:"ticket_id,notnull"`
	TicketName  string    `bun:"ticket_name,notnull"`
	EventID     int64     `bun:"event_id,notnull"`
	EventDateID int64     `bun:"event_date_id,notnull"`
	Position    int64     `bun:"position,notnull"`
	Status      string    `bun:"status,notnull"`
	CheckedInAt time.Time `bun:"checked_in_at,nullzero"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
	UpdatedAt   time.Time `bun:"updated_at,notnull"`
}

// InsertIssuedTickets stores an order's tickets and sets their ids; with
// the ticket page's token and the email state, written in the same
// statement batch as the order's move to paid. Errors: ErrConflict when
// the order already has tickets (a position taken) or a code or id
// collides.
func InsertIssuedTickets(ctx context.Context, db bun.IDB, ts []IssuedTicket) error {
	if len(ts) == 0 {
		return nil
	}
	_, err := db.NewInsert().Model(&ts).Returning("id").Exec(ctx)
	return translate(err)
}

// SetOrderFulfilment records an order's ticket-page token and ticket email
// state.
func SetOrderFulfilment(ctx context.Context, db bun.IDB, orderID int64, token, emailStatus string) error {
	_, err := db.NewUpdate().Model((*Order)(nil)).
		Set("tickets_token = ?", token).Set("tickets_email_status = ?", emailStatus).
		Where("id = ?", orderID).Exec(ctx)
	return translate(err)
}

// SetTicketsEmail records the ticket email's state of an order (and when it
// was sent, for TicketsEmailSent), touching updated_at.
func SetTicketsEmail(ctx context.Context, db bun.IDB, orderID int64, status string, now time.Time) error {
	q := db.NewUpdate().Model((*Order)(nil)).Set("tickets_email_status = ?", status).Set("updated_at = ?", now).
		Where("id = ?", orderID)
	if status == TicketsEmailSent {
		q = q.Set("tickets_email_sent_at = ?", now)
	}
	_, err := q.Exec(ctx)
	return translate(err)
}

// OrderByTicketsToken returns the order whose ticket page token is token.
// Errors: ErrNotFound.
func OrderByTicketsToken(ctx context.Context, db bun.IDB, token string) (*Order, error) {
	o := new(Order)
	err := db.NewSelect().Model(o).Where("o.tickets_token = ?", token).Scan(ctx)
	return o, translate(err)
}

// OrderDetail is what an order holds besides its row: its items, in the
// order the checkout listed them, and its tickets, by position.
type OrderDetail struct {
	Items   []OrderItem
	Tickets []IssuedTicket
}

// OrderDetails loads the items and tickets of many orders in two queries.
// Every id gets an entry, empty when the order has none.
func OrderDetails(ctx context.Context, db bun.IDB, orderIDs []int64) (map[int64]*OrderDetail, error) {
	out := make(map[int64]*OrderDetail, len(orderIDs))
	for _, id := range orderIDs {
		out[id] = &OrderDetail{Items: []OrderItem{}, Tickets: []IssuedTicket{}}
	}
	if len(orderIDs) == 0 {
		return out, nil
	}
	var items []OrderItem
	if err := db.NewSelect().Model(&items).Where("oi.order_id IN (?)", bun.In(orderIDs)).
		Order("oi.order_id", "oi.id").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for _, it := range items {
		out[it.OrderID].Items = append(out[it.OrderID].Items, it)
	}
	var ts []IssuedTicket
	if err := db.NewSelect().Model(&ts).Where("it.order_id IN (?)", bun.In(orderIDs)).
		Order("it.order_id", "it.position").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for _, t := range ts {
		t.CheckedInAt, t.CreatedAt, t.UpdatedAt = utc(t.CheckedInAt), t.CreatedAt.UTC(), t.UpdatedAt.UTC()
		out[t.OrderID].Tickets = append(out[t.OrderID].Tickets, t)
	}
	return out, nil
}

// IssuedTicketByCode returns the ticket with this code. Errors: ErrNotFound.
func IssuedTicketByCode(ctx context.Context, db bun.IDB, code string) (*IssuedTicket, error) {
	t := new(IssuedTicket)
	if err := db.NewSelect().Model(t).Where("it.code = ?", code).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return t, nil
}

// utc returns t in UTC, keeping the zero time zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
