package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
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
	PublicID    string `bun:"public_id,notnull"`
	Code        string `bun:"code,notnull"`
	OrderID     int64  `bun:"order_id,notnull"`
	AppID       int64  `bun:"app_id,notnull"`
	Environment string `bun:"environment,notnull"`
	TicketID    int64  `bun:"ticket_id,notnull"`
	TicketName  string `bun:"ticket_name,notnull"`
	EventID     int64  `bun:"event_id,notnull"`
	EventDateID int64  `bun:"event_date_id,notnull"`
	Position    int64  `bun:"position,notnull"`
	// TicketsInOrder is how many tickets the order has (the N of "n of N").
	TicketsInOrder int64     `bun:"tickets_in_order,notnull"`
	Status         string    `bun:"status,notnull"`
	CheckedInAt    time.Time `bun:"checked_in_at,nullzero"`
	// Inside is the door's state of the ticket: admitted, and no admitted
	// exit since. Only AdmitTicket and ReleaseTicket move it.
	Inside bool `bun:"inside,notnull"`
	// VoidedAt and VoidReason say when and why the ticket was voided.
	VoidedAt   time.Time `bun:"voided_at,nullzero"`
	VoidReason *string   `bun:"void_reason"`
	// RefundID is the refund that cancelled the ticket; nil for a ticket
	// not cancelled by a refund.
	RefundID *int64 `bun:"refund_id"`
	// AdmittedAt is when the admission that stands (or stood, before the
	// last exit) was scanned; zero before the first.
	AdmittedAt time.Time `bun:"admitted_at,nullzero"`
	// ChangeTx and ChangeSeq are the ticket's place in its date's
	// manifest (ManifestAfter), set by the database on every write; read
	// only when a statement returns the whole row.
	ChangeTx  xid8      `bun:"change_tx,scanonly"`
	ChangeSeq int64     `bun:"change_seq,scanonly"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
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
	// Refunds are the order's refunds, oldest first.
	Refunds []Refund
}

// OrderDetails loads the items, tickets and refunds of many orders in three
// queries.
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
		t.normalize()
		out[t.OrderID].Tickets = append(out[t.OrderID].Tickets, t)
	}
	refunds, err := RefundsOfOrders(ctx, db, orderIDs)
	if err != nil {
		return nil, err
	}
	for id, rs := range refunds {
		out[id].Refunds = rs
	}
	return out, nil
}

// TypedCode is a ticket code as a person types or pastes it, read as the
// code it names: ticket pages and PDFs print codes in groups of four, and
// the door page takes them with spaces, hyphens and lower case, so every
// door that takes a typed code reads it alike.
func TypedCode(s string) string {
	return strings.ToUpper(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '-' {
			return -1
		}
		return r
	}, s))
}

// IssuedTicketByCode returns the ticket with this code. Errors: ErrNotFound.
func IssuedTicketByCode(ctx context.Context, db bun.IDB, code string) (*IssuedTicket, error) {
	t := new(IssuedTicket)
	if err := db.NewSelect().Model(t).Where("it.code = ?", code).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	t.normalize()
	return t, nil
}

// DoorTicket is an issued ticket with its order's reference: what a scan
// reads, in one query.
type DoorTicket struct {
	IssuedTicket   `bun:",extend"`
	OrderReference string `bun:"order_reference,scanonly"`
}

// DoorTicketByCode returns the ticket with this code and its order's
// reference. Errors: ErrNotFound.
func DoorTicketByCode(ctx context.Context, db bun.IDB, code string) (*DoorTicket, error) {
	return doorTicket(ctx, db, "it.code = ?", code)
}

func doorTicket(ctx context.Context, db bun.IDB, where string, arg any) (*DoorTicket, error) {
	t := new(DoorTicket)
	if err := db.NewSelect().Model(t).ColumnExpr("it.*").ColumnExpr("o.reference AS order_reference").
		Join("JOIN orders AS o ON o.id = it.order_id").Where(where, arg).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	t.normalize()
	return t, nil
}

// IssuedTicketsOfOrder returns an order's tickets by position.
func IssuedTicketsOfOrder(ctx context.Context, db bun.IDB, orderID int64) ([]IssuedTicket, error) {
	ts := []IssuedTicket{}
	if err := db.NewSelect().Model(&ts).Where("it.order_id = ?", orderID).Order("it.position").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for i := range ts {
		ts[i].normalize()
	}
	return ts, nil
}

// DoorMove is a scan that would move a ticket in (Entry) or out: the
// code read, the scanner's environment and event, the date the door
// scans for, when the scan happened (ScannedAt) and now.
type DoorMove struct {
	Code        string
	Environment string
	EventID     int64
	EventDateID int64
	Entry       bool
	ScannedAt   time.Time
	Now         time.Time
}

// MovedTicket is a ticket a door move let in or out, as it now stands,
// with its order's reference and, for an entry, the order's new webhook
// sequence (TouchOrder's).
type MovedTicket struct {
	DoorTicket `bun:",extend"`
	Sequence   int64 `bun:"event_sequence,scanonly"`
}

// MoveAtDoor moves the ticket with m's code in or out if, and only if,
// the scan admits it: the ticket is of m's environment, event and date,
// not void, and outside for an entry; inside for an exit, admitted no
// later than the exit was scanned. It is one conditional update, so of
// any number of concurrent scans of a code, on any number of instances,
// exactly one moves it. The first admission makes the ticket checked_in
// and sets its checked_in_at; later ones keep both; every admission sets
// admitted_at. An entry also touches its order (TouchOrder), in the same
// statement on PostgreSQL. It returns nil when nothing moved: the code is
// unknown or the scan is to be rejected, and the caller reads the ticket
// to say why.
func MoveAtDoor(ctx context.Context, db bun.IDB, m DoorMove) (*MovedTicket, error) {
	pg := db.Dialect().Name() == dialect.PG
	q, args := doorMoveQuery(m, pg)
	var moved []MovedTicket
	if err := db.NewRaw(q, args...).Scan(ctx, &moved); err != nil {
		return nil, translate(err)
	}
	if len(moved) == 0 {
		return nil, nil
	}
	t := &moved[0]
	t.normalize()
	if m.Entry && !pg {
		ref, seq, err := TouchOrder(ctx, db, t.OrderID, m.Now)
		if err != nil {
			return nil, err
		}
		t.OrderReference, t.Sequence = ref, seq
	}
	return t, nil
}

// doorMoveQuery is MoveAtDoor's statement. The ticket is reached by its
// code, through the code's unique index, whatever the planner's
// statistics say: the scan's other conditions sit inside one CASE, which
// no index can serve, so no other index (issued_tickets_door_idx leads
// with the date, and without statistics on a freshly sold-out date looks
// as selective) can be chosen to find the ticket and filter thousands of
// its neighbours by code.
func doorMoveQuery(m DoorMove, pg bool) (string, []any) {
	where := "code = ? AND CASE WHEN environment = ? AND event_id = ? AND event_date_id = ? AND status <> ? AND "
	args := []any{m.Code, m.Environment, m.EventID, m.EventDateID, TicketVoid}
	if m.Entry {
		where += "NOT inside THEN TRUE ELSE FALSE END"
	} else {
		// An exit dated before the admission that stands is not_inside:
		// a late-uploaded offline exit must not let out a ticket that was
		// admitted after it.
		where += "inside AND (admitted_at IS NULL OR admitted_at <= ?) THEN TRUE ELSE FALSE END"
		args = append(args, m.ScannedAt)
	}
	switch {
	case !m.Entry:
		return "UPDATE issued_tickets SET inside = ?, updated_at = ? WHERE " + where + " RETURNING *, " + orderReference,
			append([]any{false, m.Now}, args...)
	case pg:
		return `WITH moved AS (UPDATE issued_tickets SET inside = ?, status = ?, checked_in_at = COALESCE(checked_in_at, ?),
				admitted_at = ?, updated_at = ?
			WHERE ` + where + ` RETURNING *),
		touched AS (UPDATE orders SET event_sequence = event_sequence + 1, updated_at = ? FROM moved
			WHERE orders.id = moved.order_id RETURNING orders.reference, orders.event_sequence)
		SELECT moved.*, touched.reference AS order_reference, touched.event_sequence FROM moved, touched`,
			append(append([]any{true, TicketCheckedIn, m.ScannedAt, m.ScannedAt, m.Now}, args...), m.Now)
	default:
		return "UPDATE issued_tickets SET inside = ?, status = ?, checked_in_at = COALESCE(checked_in_at, ?), admitted_at = ?, updated_at = ? WHERE " +
				where + " RETURNING *, " + orderReference,
			append([]any{true, TicketCheckedIn, m.ScannedAt, m.ScannedAt, m.Now}, args...)
	}
}

// orderReference is a RETURNING column of an issued_tickets update: the
// ticket's order's reference.
const orderReference = "(SELECT reference FROM orders WHERE orders.id = issued_tickets.order_id) AS order_reference"

// VoidTickets voids those of the tickets ids that are not void yet, with
// reason (nil for none), and returns them, by position; a ticket inside
// stays inside, recorded as it is.
func VoidTickets(ctx context.Context, db bun.IDB, ids []int64, reason *string, now time.Time) ([]IssuedTicket, error) {
	ts := []IssuedTicket{}
	if len(ids) == 0 {
		return ts, nil
	}
	_, err := db.NewUpdate().Model((*IssuedTicket)(nil)).
		Set("status = ?", TicketVoid).Set("voided_at = ?", now).Set("void_reason = ?", reason).Set("updated_at = ?", now).
		Where("id IN (?)", bun.In(ids)).Where("status <> ?", TicketVoid).
		Returning("*").Exec(ctx, &ts)
	if err != nil {
		return nil, translate(err)
	}
	slices.SortFunc(ts, func(a, b IssuedTicket) int { return cmp.Compare(a.Position, b.Position) })
	for i := range ts {
		ts[i].normalize()
	}
	return ts, nil
}

// normalize reads t's instants in UTC (pgx reads them in time.Local).
func (t *IssuedTicket) normalize() {
	t.CheckedInAt, t.VoidedAt, t.AdmittedAt = utc(t.CheckedInAt), utc(t.VoidedAt), utc(t.AdmittedAt)
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
}

// utc returns t in UTC, keeping the zero time zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
