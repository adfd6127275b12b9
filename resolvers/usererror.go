package resolvers

import (
	"errors"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph/model"
)

// checkoutPayload is the answer of Mutation.createCheckoutSession: the
// session, or the refusal as user errors. Refusals that are not about the
// input (topLevel) are returned as the error, for the top-level errors list.
func checkoutPayload(sess *checkout.Session, replayed bool, err error) (*model.CreateCheckoutSessionPayload, error) {
	if err == nil {
		return &model.CreateCheckoutSessionPayload{CheckoutSession: sess, Replayed: replayed, UserErrors: []*model.UserError{}}, nil
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || topLevel(ae) {
		return nil, err
	}
	return &model.CreateCheckoutSessionPayload{Replayed: replayed, UserErrors: userErrors(ae, "input")}, nil
}

// expirePayload is the answer of Mutation.expireCheckoutSession: the
// order, or the refusal as user errors (top-level refusals as the error).
func expirePayload(o *checkout.OrderView, err error) (*model.ExpireCheckoutSessionPayload, error) {
	if err == nil {
		return &model.ExpireCheckoutSessionPayload{Order: o, UserErrors: []*model.UserError{}}, nil
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || topLevel(ae) {
		return nil, err
	}
	return &model.ExpireCheckoutSessionPayload{UserErrors: userErrors(ae, "input")}, nil
}

// topLevel reports whether a refusal concerns the request rather than its
// input: authentication (a key of the wrong kind included), the request
// rate limit, and failures of the
// service (5xx), which the client retries unchanged. free_order_limit_reached
// is a 429 too, but a business rule about this cart and buyer.
func topLevel(ae *apperr.Error) bool {
	switch ae.Code {
	case apperr.RateLimitExceeded, apperr.MissingAPIKey, apperr.InvalidAPIKey, apperr.Unauthorized,
		apperr.AppSuspended, apperr.AccountDisabled, apperr.AccountPendingApproval,
		apperr.ScannerKeyNotAllowed, apperr.ScannerKeyRequired:
		return true
	}
	return ae.Status() >= 500
}

// codeFields name the input field a business refusal is about, for the
// codes that are about exactly one field and carry no details.
var codeFields = map[apperr.Code]string{
	apperr.MissingIdempotencyKey: "idempotency_key",
	apperr.InvalidIdempotencyKey: "idempotency_key",
	apperr.IdempotencyConflict:   "idempotency_key",
	apperr.IdempotencyInProgress: "idempotency_key",
	apperr.EventNotFound:         "event_id",
	apperr.EventNotAvailable:     "event_id",
	apperr.EventDateNotFound:     "eventdate_id",
	apperr.EventDateNotAvailable: "eventdate_id",
	apperr.MetadataTooLarge:      "metadata",
	apperr.OrderNotPending:       "reference",
	apperr.EnvironmentMismatch:   "reference",
	apperr.OrderNotFound:         "reference",
	apperr.OrderNotRefundable:    "reference",
	apperr.TicketAlreadyVoid:     "tickets",
	apperr.TicketCheckedIn:       "tickets",
	apperr.RefundExceedsBalance:  "amount",
}

// userErrors turns a refusal into user errors under the argument arg:
// validation_failed gives one per field and message (the message completes
// the field: "must be between 1 and 50"); any other code gives one, naming
// its field where the refusal names one.
func userErrors(ae *apperr.Error, arg string) []*model.UserError {
	if ae.Code == apperr.ValidationFailed && len(ae.Details) > 0 {
		var out []*model.UserError
		for _, path := range ae.Details.Fields() {
			for _, msg := range ae.Details[path] {
				out = append(out, &model.UserError{Code: string(ae.Code), Field: graphQLField(path, arg), Message: msg})
			}
		}
		return out
	}
	ue := &model.UserError{Code: string(ae.Code), Message: ae.Message}
	if f := ae.Details.Fields(); len(f) == 1 {
		ue.Field = graphQLField(f[0], arg)
	} else if f, ok := codeFields[ae.Code]; ok {
		ue.Field = graphQLField(f, arg)
	}
	if ue.Field != nil && ue.Field[len(ue.Field)-1] == "idempotencyKey" {
		// The idempotency package speaks of REST's header.
		ue.Message = strings.Replace(ue.Message, "The Idempotency-Key header", "idempotencyKey", 1)
	}
	return []*model.UserError{ue}
}
