package store

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// Order statuses (spec section 2.5).
const (
	OrderPending   = "pending"
	OrderPaid      = "paid"
	OrderCompleted = "completed"
	OrderFailed    = "failed"
	OrderExpired   = "expired"
	OrderUnknown   = "unknown"
)

// Ticket email states (spec/fulfilment.md section 3).
const (
	TicketsEmailNotSent = "not_sent"
	TicketsEmailQueued  = "queued"
	TicketsEmailSent    = "sent"
	TicketsEmailFailed  = "failed"
)

// Order is one checkout session's order. Money is in minor units.
type Order struct {
	bun.BaseModel `bun:"table:orders,alias:o"`

	ID               int64          `bun:"id,pk,autoincrement"`
	Reference        string         `bun:"reference,notnull"`
	AppID            int64          `bun:"app_id,notnull"`
	Environment      string         `bun:"environment,notnull"`
	Status           string         `bun:"status,notnull"`
	EventID          int64          `bun:"event_id,notnull"`
	EventDateID      int64          `bun:"event_date_id,notnull"`
	Currency         string         `bun:"currency,notnull"`
	TotalAmount      int64          `bun:"total_amount,notnull"`
	RequiresPayment  bool           `bun:"requires_payment,notnull"`
	HoldsStock       bool           `bun:"holds_stock,notnull"`
	CustomerName     string         `bun:"customer_name,notnull"`
	CustomerEmail    string         `bun:"customer_email,notnull"`
	CustomerPhone    string         `bun:"customer_phone,notnull"`
	Metadata         map[string]any `bun:"metadata,type:text,nullzero"`
	SuccessURL       string         `bun:"success_url,notnull"`
	CancelURL        string         `bun:"cancel_url,notnull"`
	PaymentReference *string        `bun:"payment_reference"`
	ExpiresAt        time.Time      `bun:"expires_at,nullzero"`
	EventSequence    int64          `bun:"event_sequence,notnull"`
	PaymentProvider  *string        `bun:"payment_provider"`
	PaymentURL       *string        `bun:"payment_url"`
	RefundReview     bool           `bun:"refund_review,notnull"`
	// RefundCommitted is what the order's pending and succeeded refunds
	// take, never more than TotalAmount; RefundedAmount what has
	// succeeded. Both in minor units.
	RefundCommitted int64   `bun:"refund_committed,notnull"`
	RefundedAmount  int64   `bun:"refunded_amount,notnull"`
	ReviewNote      *string `bun:"review_note"`
	// ReviewAmount and ReviewCurrency are the payment a refund review is
	// about, in minor units; nil on orders flagged before they were kept.
	ReviewAmount   *int64  `bun:"review_amount"`
	ReviewCurrency *string `bun:"review_currency"`
	// TicketsToken names the buyer's ticket page; nil until tickets exist.
	TicketsToken *string `bun:"tickets_token"`
	// TicketsEmailStatus is the ticket email's state (TicketsEmail…), and
	// TicketsEmailSentAt when the mail server accepted it.
	TicketsEmailStatus string    `bun:"tickets_email_status,notnull"`
	TicketsEmailSentAt time.Time `bun:"tickets_email_sent_at,nullzero"`
	CreatedAt          time.Time `bun:"created_at,notnull"`
	UpdatedAt          time.Time `bun:"updated_at,notnull"`
}

// OrderItem is one line of an order: a ticket, a quantity and the unit
// price charged.
type OrderItem struct {
	bun.BaseModel `bun:"table:order_items,alias:oi"`

	ID       int64 `bun:"id,pk,autoincrement"`
	OrderID  int64 `bun:"order_id,notnull"`
	TicketID int64 `bun:"ticket_id,notnull"`
	// Name is the ticket type's name when it was bought.
	Name      string `bun:"name,notnull"`
	Quantity  int64  `bun:"quantity,notnull"`
	UnitPrice int64  `bun:"unit_price,notnull"`
}

// InsertOrder stores an order and its items, setting their ids: one
// statement on PostgreSQL (the order's INSERT inside the items' WITH).
func InsertOrder(ctx context.Context, db bun.IDB, o *Order, items []OrderItem) error {
	if len(items) > 0 && db.Dialect().Name() == dialect.PG {
		_, err := db.NewInsert().With("new_order", db.NewInsert().Model(o).Returning("id")).
			Model(&items).Value("order_id", "(SELECT id FROM new_order)").Returning("id, order_id").Exec(ctx)
		if err != nil {
			return translate(err)
		}
		o.ID = items[0].OrderID
		return nil
	}
	if _, err := db.NewInsert().Model(o).Returning("id").Exec(ctx); err != nil {
		return translate(err)
	}
	for i := range items {
		items[i].OrderID = o.ID
	}
	if len(items) == 0 {
		return nil
	}
	_, err := db.NewInsert().Model(&items).Returning("id").Exec(ctx)
	return translate(err)
}

// InsertOrders is InsertOrder for several orders, items[i] being
// orders[i]'s: on PostgreSQL two statements for them all (the orders, then
// every item with its order's id); on SQLite InsertOrder for each.
func InsertOrders(ctx context.Context, db bun.IDB, orders []*Order, items [][]OrderItem) error {
	if len(orders) == 0 {
		return nil
	}
	if db.Dialect().Name() != dialect.PG || len(orders) == 1 {
		for i, o := range orders {
			if err := InsertOrder(ctx, db, o, items[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := db.NewInsert().Model(&orders).Returning("id").Exec(ctx); err != nil {
		return translate(err)
	}
	var all []OrderItem
	for i, o := range orders {
		for n := range items[i] {
			items[i][n].OrderID = o.ID
		}
		all = append(all, items[i]...)
	}
	if len(all) == 0 {
		return nil
	}
	if _, err := db.NewInsert().Model(&all).Returning("id").Exec(ctx); err != nil {
		return translate(err)
	}
	for i := range items {
		n := copy(items[i], all[:len(items[i])])
		all = all[n:]
	}
	return nil
}

// MaxReferenceLength bounds an order reference; ours are 37 characters
// (checkout.newReference), older ones 28.
const MaxReferenceLength = 64

// PlausibleReference reports whether ref could be an order reference: 1 to
// MaxReferenceLength ASCII letters, digits, '_' and '-'. Text that cannot
// names no order, so callers answer "not found" without a query (PostgreSQL
// refuses a NUL byte in text). It is the one home of that rule.
func PlausibleReference(ref string) bool {
	if ref == "" || len(ref) > MaxReferenceLength {
		return false
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// OrderByReference returns the order with this reference.
func OrderByReference(ctx context.Context, db bun.IDB, ref string) (*Order, error) {
	o := new(Order)
	err := db.NewSelect().Model(o).Where("o.reference = ?", ref).Scan(ctx)
	return o, translate(err)
}

// OrderByID returns the order with this id. Errors: ErrNotFound.
func OrderByID(ctx context.Context, db bun.IDB, id int64) (*Order, error) {
	o := new(Order)
	err := db.NewSelect().Model(o).Where("o.id = ?", id).Scan(ctx)
	return o, translate(err)
}

// OrderItems returns the items of an order.
func OrderItems(ctx context.Context, db bun.IDB, orderID int64) ([]OrderItem, error) {
	var items []OrderItem
	err := db.NewSelect().Model(&items).Where("oi.order_id = ?", orderID).Order("oi.id").Scan(ctx)
	return items, translate(err)
}

// TransitionOrder moves an order from pending to status, only if it is still
// pending, and reports whether it did; o receives the row as updated.
func TransitionOrder(ctx context.Context, db bun.IDB, ref, status string, now time.Time, o *Order) (bool, error) {
	res, err := db.NewUpdate().Model(o).
		Set("status = ?", status).Set("updated_at = ?", now).
		Where("reference = ?", ref).Where("status = ?", OrderPending).
		Returning("*").Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DueOrders returns the references of pending orders expired at now, oldest first.
func DueOrders(ctx context.Context, db bun.IDB, now time.Time, limit int) ([]string, error) {
	var refs []string
	err := db.NewSelect().Model((*Order)(nil)).Column("reference").
		Where("status = ?", OrderPending).Where("expires_at <= ?", now).
		Order("expires_at").Limit(int64(limit)).Scan(ctx, &refs)
	return refs, translate(err)
}

// FlagRefundReview marks an order's payment for a refund review, once, and
// reports whether it did.
func FlagRefundReview(ctx context.Context, db bun.IDB, ref, note string, amount int64, currency string, now time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*Order)(nil)).
		Set("refund_review = ?", true).Set("review_note = ?", note).Set("updated_at = ?", now).
		Set("review_amount = ?", amount).Set("review_currency = ?", currency).
		Where("reference = ?", ref).Where("refund_review = ?", false).Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// NextOrderSequence bumps an order's event sequence and returns the new value.
func NextOrderSequence(ctx context.Context, db bun.IDB, orderID int64) (int64, error) {
	var seq []int64
	err := db.NewRaw("UPDATE orders SET event_sequence = event_sequence + 1 WHERE id = ? RETURNING event_sequence", orderID).Scan(ctx, &seq)
	if err != nil {
		return 0, translate(err)
	}
	if len(seq) == 0 {
		return 0, ErrNotFound
	}
	return seq[0], nil
}

// likeEscaper makes a string match itself in a LIKE pattern (ESCAPE '\').
var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)
