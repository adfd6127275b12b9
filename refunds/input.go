package refunds

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
)

// MaxTickets bounds the tickets one refund names.
const MaxTickets = 200

// maxTicketID bounds a named ticket id, in characters: ids are itk_ and
// 26 characters, so anything much longer names no ticket.
const maxTicketID = 64

// Reasons are the reasons a refund may give, the default first.
var Reasons = []string{store.RefundRequestedByCustomer, store.RefundEventCancelled, store.RefundDuplicate,
	store.RefundFraudulent, store.RefundOther}

// Input is a refund request's body: POST /orders/{reference}/refunds and
// createRefund's input alike. Every field is optional; a nil Tickets means
// every ticket of the order that is not void, a nil Amount the sum of the
// unit prices of the tickets cancelled.
type Input struct {
	Tickets  []*string `json:"tickets"`
	Amount   *string   `json:"amount"`
	Reason   *string   `json:"reason"`
	Metadata any       `json:"metadata"`
}

// request is a validated Input.
type request struct {
	tickets   []string // nil when omitted
	amount    int64
	hasAmount bool
	reason    string
	metadata  map[string]any
}

// validate checks a refund's body; decoded holds what the API's decoding
// found (a field of the wrong type), reported with the rest.
// Errors: validation_failed with details keyed by field path.
func validate(in *Input, decoded apperr.Details) (*request, error) {
	d := apperr.Details{}
	r := &request{reason: store.RefundRequestedByCustomer}
	if in == nil {
		in = &Input{}
	}
	if in.Tickets != nil {
		r.tickets = make([]string, 0, len(in.Tickets))
		seen := make(map[string]bool, len(in.Tickets))
		if len(in.Tickets) > MaxTickets {
			d.Add("tickets", "must list at most "+strconv.Itoa(MaxTickets)+" tickets")
		}
		for i, t := range in.Tickets {
			field := "tickets." + strconv.Itoa(i)
			switch {
			case i >= MaxTickets:
			case t == nil:
				d.Add(field, "must be a ticket id (itk_…)")
			case *t == "" || utf8.RuneCountInString(*t) > maxTicketID || !utf8.ValidString(*t) ||
				strings.ContainsFunc(*t, unicode.IsControl):
				d.Add(field, "must be a ticket id (itk_…)")
			case seen[*t]:
				d.Add(field, "is listed twice")
			default:
				seen[*t] = true
				r.tickets = append(r.tickets, *t)
			}
		}
	}
	if in.Amount != nil {
		a, err := catalog.ParseAmount(*in.Amount)
		if err != nil {
			d.Add("amount", `must be a decimal amount of at least 0 with at most 2 places, such as "25.00"`)
		}
		r.amount, r.hasAmount = a, true
	}
	if in.Reason != nil {
		if !validReason(*in.Reason) {
			d.Add("reason", "must be one of "+strings.Join(Reasons, ", "))
		}
		r.reason = *in.Reason
	}
	r.metadata = checkout.CheckMetadataShape(d, "metadata", in.Metadata)
	// What decoding found replaces what validation says of the same
	// field: a field of the wrong type is named once.
	for k, v := range decoded {
		d[k] = v
	}
	if err := apperr.Validation(d); err != nil {
		return nil, err
	}
	if err := checkout.CheckMetadata(r.metadata, "", ""); err != nil {
		return nil, err
	}
	return r, nil
}

func validReason(s string) bool {
	for _, r := range Reasons {
		if r == s {
			return true
		}
	}
	return false
}

// canonical is the request's fingerprint source: the order's reference
// (the path names it, not the body) and the body as JSON.
func canonical(ref string, in *Input) []byte {
	b, _ := json.Marshal(struct {
		Kind      string `json:"kind"`
		Reference string `json:"reference"`
		Input     *Input `json:"input"`
	}{"refund", ref, in})
	return b
}

// errNothing is the refusal of a refund that would do nothing.
func errNothing() error {
	return apperr.Validation(apperr.Details{"tickets": {"or amount: nothing to refund (no ticket to cancel and an amount of 0.00)"}})
}

// asRefundError marks a refusal as a refund's, for its HTTP status.
func asRefundError(err error) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		apperr.ForRefund(ae)
	}
	return err
}
