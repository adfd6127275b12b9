package refunds

import (
	"context"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Preview is what a refund would do, for a person to confirm first.
type Preview struct {
	// Tickets are the ids (itk_…) it would cancel, by position.
	Tickets []string
	// Amount is the money it would return, as the API writes amounts.
	Amount   string
	Currency string
}

// Preview answers what Create would do now with a refund of the caller's
// order, without doing it: the rule's own plan, read in a transaction
// that writes nothing, or the refusal Create would give (those of the
// body and the order; the key's are Create's alone). A refund made after
// a Preview is decided again, so a door scan or another refund in between
// is still refused then. Errors: environment_mismatch, validation_failed,
// order_not_found, metadata_too_large, order_not_refundable,
// ticket_not_found, ticket_already_void, ticket_checked_in,
// refund_exceeds_balance.
func (s *Service) Preview(ctx context.Context, c checkout.Caller, ref string, in *Input) (*Preview, error) {
	p, err := s.preview(ctx, c, ref, in)
	return p, asRefundError(err)
}

func (s *Service) preview(ctx context.Context, c checkout.Caller, ref string, in *Input) (*Preview, error) {
	if env := checkout.ReferenceEnvironment(ref); env != "" && env != c.Environment {
		_, err := s.Orders.Order(ctx, c, ref)
		return nil, err
	}
	req, err := validate(in, nil)
	if err != nil {
		return nil, err
	}
	o, err := s.order(ctx, c, ref, req)
	if err != nil {
		return nil, err
	}
	var out *Preview
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		locked, err := store.OrderByID(ctx, tx, o.ID)
		if err != nil {
			return err
		}
		p, err := s.plan(ctx, tx, locked, req)
		if err != nil {
			return err
		}
		out = &Preview{Tickets: []string{}, Amount: catalog.FormatAmount(p.amount), Currency: locked.Currency}
		for _, t := range p.tickets {
			out.Tickets = append(out.Tickets, t.PublicID)
		}
		return nil
	})
	return out, err
}
