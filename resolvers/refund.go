package resolvers

import (
	"context"
	"errors"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/refunds"
)

// CreateRefund is POST /orders/{reference}/refunds and
// Mutation.createRefund: a refund of an order of the calling app under
// its idempotency key. in is nil when REST could not read its body as a
// JSON object; problems are what REST's decoding found. replayed reports
// that the answer, refund or refusal, is the one saved for the key.
// Errors: unauthorized, scanner_key_not_allowed, and those of
// refunds.Service.Create.
func (r *Resolver) CreateRefund(ctx context.Context, ref, key string, in *refunds.Input, problems apperr.Details) (*checkout.Refund, bool, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, false, err
	}
	return r.Refunds.Create(ctx, c, refunds.Request{Reference: ref, Key: key, Input: in, Problems: problems})
}

// OrderRefunds is GET /orders/{reference}/refunds: an order's refunds,
// oldest first.
// Errors: unauthorized, scanner_key_not_allowed, environment_mismatch,
// order_not_found.
func (r *Resolver) OrderRefunds(ctx context.Context, ref string) ([]*checkout.Refund, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Refunds.OfOrder(ctx, c, ref)
}

// Refund is GET /refunds/{id}: one refund of the calling app.
// Errors: unauthorized, scanner_key_not_allowed, environment_mismatch,
// refund_not_found.
func (r *Resolver) Refund(ctx context.Context, id string) (*checkout.Refund, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return r.Refunds.Get(ctx, c, id)
}

// toRefundInput converts createRefund's input into the refund rule's,
// keeping an omitted tickets list nil (every ticket) apart from [] (none).
func toRefundInput(in model.CreateRefundInput) *refunds.Input {
	out := &refunds.Input{Amount: in.Amount, Reason: in.Reason, Metadata: in.Metadata}
	if in.Tickets != nil {
		out.Tickets = make([]*string, len(in.Tickets))
		for i := range in.Tickets {
			out.Tickets[i] = &in.Tickets[i]
		}
	}
	return out
}

// refundPayload is the answer of Mutation.createRefund: the refund, or
// the refusal as user errors (top-level refusals as the error).
func refundPayload(v *checkout.Refund, replayed bool, err error) (*model.CreateRefundPayload, error) {
	if err == nil {
		return &model.CreateRefundPayload{Refund: v, Replayed: replayed, UserErrors: []*model.UserError{}}, nil
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || topLevel(ae) {
		return nil, err
	}
	return &model.CreateRefundPayload{Replayed: replayed, UserErrors: userErrors(ae, "input")}, nil
}
