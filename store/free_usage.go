package store

import (
	"context"
	"strconv"

	"github.com/uptrace/bun"
)

// BuyerScope is the counter scope of one buyer's live free tickets for one
// event; buyer is the normalised email address (clientinput.BuyerEmail).
func BuyerScope(buyer string, eventID int64) string {
	return "buyer:" + buyer + ":event:" + strconv.FormatInt(eventID, 10)
}

// AddFreeUsage adds qty to a daily counter of live free tickets if the
// result stays within limit, and reports whether it did. Counters are
// (scope, UTC day) rows, updated atomically so concurrent orders cannot
// overshoot a cap.
func AddFreeUsage(ctx context.Context, db bun.IDB, scope, day string, qty, limit int64) (bool, error) {
	if qty > limit {
		return false, nil
	}
	var got []int64
	err := db.NewRaw(`INSERT INTO free_ticket_usage AS u (scope, day, quantity) VALUES (?, ?, ?)
		ON CONFLICT (scope, day) DO UPDATE SET quantity = u.quantity + excluded.quantity
		WHERE u.quantity + excluded.quantity <= ?
		RETURNING quantity`, scope, day, qty, limit).Scan(ctx, &got)
	if err != nil {
		return false, translate(err)
	}
	return len(got) == 1, nil
}

// FreeUsage returns a daily counter of live free tickets (0 when absent).
func FreeUsage(ctx context.Context, db bun.IDB, scope, day string) (int64, error) {
	var got []int64
	err := db.NewSelect().TableExpr("free_ticket_usage").Column("quantity").
		Where("scope = ?", scope).Where("day = ?", day).Scan(ctx, &got)
	if err != nil || len(got) == 0 {
		return 0, translate(err)
	}
	return got[0], nil
}
