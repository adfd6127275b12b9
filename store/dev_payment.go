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

	Reference   string `bun:"reference,pk"`
	Amount      int64  `bun:"amount,notnull"`
	Currency    string `bun:"currency,notnull"`
	CallbackURL string `bun:"callback_url,notnull"`
	State       string `bun:"state,notnull"`
	// RefundOutcome is what the provider does with the next refunds of the
	// payment: DevRefundsSucceed, or DevRefundsFail to try the failure
	// path.
	RefundOutcome string    `bun:"refund_outcome,notnull"`
	CreatedAt     time.Time `bun:"created_at,notnull"`
	UpdatedAt     time.Time `bun:"updated_at,notnull"`
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

// What the development provider does with a payment's refunds.
const (
	DevRefundsSucceed = "succeed"
	DevRefundsFail    = "fail"
)

// SetDevRefundOutcome sets what the next refunds of a payment do
// (DevRefundsSucceed or DevRefundsFail). Errors: ErrNotFound.
func SetDevRefundOutcome(ctx context.Context, db bun.IDB, ref, outcome string, now time.Time) error {
	res, err := db.NewUpdate().Model((*DevPayment)(nil)).
		Set("refund_outcome = ?", outcome).Set("updated_at = ?", now).
		Where("reference = ?", ref).Exec(ctx)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// DevRefund is a refund the development provider made: what a real
// provider would keep, keyed by the service's refund id.
type DevRefund struct {
	bun.BaseModel `bun:"table:dev_refunds,alias:dr"`

	RefundID         string    `bun:"refund_id,pk"`
	PaymentReference string    `bun:"payment_reference,notnull"`
	Amount           int64     `bun:"amount,notnull"`
	Currency         string    `bun:"currency,notnull"`
	State            string    `bun:"state,notnull"`
	FailureReason    *string   `bun:"failure_reason"`
	CreatedAt        time.Time `bun:"created_at,notnull"`
}

// InsertDevRefund stores r unless a refund with its id exists, and returns
// the stored one: asking twice for one refund makes one.
func InsertDevRefund(ctx context.Context, db bun.IDB, r *DevRefund) (*DevRefund, error) {
	if _, err := db.NewInsert().Model(r).On("CONFLICT (refund_id) DO NOTHING").Exec(ctx); err != nil {
		return nil, translate(err)
	}
	got := new(DevRefund)
	if err := db.NewSelect().Model(got).Where("dr.refund_id = ?", r.RefundID).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	got.CreatedAt = got.CreatedAt.UTC()
	return got, nil
}

// DevRefundsOfPayment lists a payment's refunds, oldest first.
func DevRefundsOfPayment(ctx context.Context, db bun.IDB, ref string) ([]DevRefund, error) {
	var rs []DevRefund
	err := db.NewSelect().Model(&rs).Where("dr.payment_reference = ?", ref).
		OrderExpr("dr.created_at, dr.refund_id").Scan(ctx)
	for i := range rs {
		rs[i].CreatedAt = rs[i].CreatedAt.UTC()
	}
	return rs, translate(err)
}
