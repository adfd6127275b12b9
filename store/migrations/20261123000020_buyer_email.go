package migrations

import (
	"context"
	"strings"

	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/uptrace/bun"
)

// Buyer email: the per-buyer cap of live free tickets counts one buyer per
// normalised email address (clientinput.BuyerEmail: case and a "+tag" of
// the local part ignored). Counters written before were keyed by the
// lower-cased address as sent, so cap+1@example.com had an allowance of its
// own; this moves each such counter onto its buyer's scope, adding its
// quantity to any counter already there for that day, so a buyer keeps
// today's count across the upgrade. Addresses were already lower-cased, so
// only scopes with a "+" can change.
//
// Down leaves the merged counters as they are: which tagged address took
// which part of a merged count is no longer known, and the merged count is
// the stricter one.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var rows []struct {
				Scope    string `bun:"scope"`
				Day      string `bun:"day"`
				Quantity int64  `bun:"quantity"`
			}
			err := tx.NewSelect().TableExpr("free_ticket_usage").Column("scope", "day", "quantity").
				Where("scope LIKE ?", "buyer:%+%").Scan(ctx, &rows)
			if err != nil {
				return err
			}
			for _, r := range rows {
				to, ok := buyerScope(r.Scope)
				if !ok || to == r.Scope {
					continue
				}
				if _, err := tx.NewDelete().TableExpr("free_ticket_usage").
					Where("scope = ?", r.Scope).Where("day = ?", r.Day).Exec(ctx); err != nil {
					return err
				}
				if _, err := tx.NewRaw(`INSERT INTO free_ticket_usage AS u (scope, day, quantity) VALUES (?, ?, ?)
					ON CONFLICT (scope, day) DO UPDATE SET quantity = u.quantity + excluded.quantity`,
					to, r.Day, r.Quantity).Exec(ctx); err != nil {
					return err
				}
			}
			return nil
		})
	}, func(ctx context.Context, db *bun.DB) error { return nil })
}

// buyerScope returns the normalised form of a counter scope
// "buyer:EMAIL:event:ID" (store.BuyerScope), and false for any other scope.
func buyerScope(scope string) (string, bool) {
	rest, ok := strings.CutPrefix(scope, "buyer:")
	at := strings.LastIndex(rest, ":event:")
	if !ok || at < 0 {
		return "", false
	}
	return "buyer:" + clientinput.BuyerEmail(rest[:at]) + rest[at:], true
}
