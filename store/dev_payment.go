package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Development payment states; they are the payments package's states.
const (
	DevPaymentPending  = "pending"
	DevPaymentPaid     = "paid"
	DevPaymentDeclined = "declined"
)

// DevPayment is a payment of the development payment provider: what a real
// provider would keep on its side. Amount is in minor units of Currency.
type DevPayment struct {
	bun.BaseModel `bun:"table:dev_payments,alias:dp"`

	Reference   string    `bun:"reference,pk"`
	Amount      int64     `bun:"amount,notnull"`
	Currency    string    `bun:"currency,notnull"`
	CallbackURL string    `bun:"callback_url,notnull"`
	State       string    `bun:"state,notnull"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
	UpdatedAt   time.Time `bun:"updated_at,notnull"`
}

// InsertDevPayment stores a new payment. Errors: ErrConflict when one with
// its reference exists.
func InsertDevPayment(ctx context.Context, db bun.IDB, p *DevPayment) error {
	_, err := db.NewInsert().Model(p).Exec(ctx)
	return translate(err)
}

// DevPaymentByReference returns the payment with this reference. Errors:
// ErrNotFound.
func DevPaymentByReference(ctx context.Context, db bun.IDB, ref string) (*DevPayment, error) {
	p := new(DevPayment)
	err := db.NewSelect().Model(p).Where("dp.reference = ?", ref).Scan(ctx)
	if err != nil {
		return nil, translate(err)
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}

// DecideDevPayment moves a pending payment to state, only while it is
// pending (whichever decision commits first wins, on any instance), and
// returns the payment as it now stands. Errors: ErrNotFound.
func DecideDevPayment(ctx context.Context, db bun.IDB, ref, state string, now time.Time) (*DevPayment, error) {
	_, err := db.NewUpdate().Model((*DevPayment)(nil)).
		Set("state = ?", state).Set("updated_at = ?", now).
		Where("reference = ?", ref).Where("state = ?", DevPaymentPending).Exec(ctx)
	if err != nil {
		return nil, translate(err)
	}
	return DevPaymentByReference(ctx, db, ref)
}

// InsertDevPayments stores several payments in one statement.
func InsertDevPayments(ctx context.Context, db bun.IDB, ps []DevPayment) error {
	if len(ps) == 0 {
		return nil
	}
	_, err := db.NewInsert().Model(&ps).Exec(ctx)
	return translate(err)
}
