package checkout

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/nyaruka/phonenumbers"
)

// Limits of a checkout request (spec section 8).
const (
	MaxItems         = 20
	MaxQuantity      = 50
	MaxMetadataKeys  = 20
	MaxMetadataBytes = 4096
)

// Input is a checkout request as both APIs receive it: the JSON body of
// POST /api/v1/checkout-sessions and the GraphQL CreateCheckoutSessionInput
// (whose idempotencyKey REST sends as a header).
// Every field is optional at this level so that a missing one is reported
// in validation details rather than as a decoding failure. Its JSON is the
// request's fingerprint (canonical), which keys saved before must keep
// matching, so its tags must not change.
type Input struct {
	EventID     *int      `json:"event_id"`
	EventdateID *int      `json:"eventdate_id"`
	Items       []*Item   `json:"items"`
	Customer    *Customer `json:"customer"`
	SuccessURL  *string   `json:"success_url"`
	CancelURL   *string   `json:"cancel_url"`
	// Metadata must be a JSON object; it is typed loosely so that any
	// other value is reported by validation, on both APIs, as a 422.
	Metadata any `json:"metadata"`
}

// Request is a checkout request as an API hands it over: the idempotency
// key, and the input as far as the API could decode it. The API decodes
// the body before the key is checked, but only reports what it found
// through Problems, so that Create answers a bad key before a bad body.
type Request struct {
	// Key is REST's Idempotency-Key header or GraphQL's idempotencyKey.
	Key string
	// Input is the decoded request; nil when the body could not be read as
	// a JSON object at all.
	Input *Input
	// Problems are what decoding found, keyed by field path: a body that is
	// not JSON, a member of the wrong type (items.0.quantity: must be an
	// integer). Validation reports them with its own, a field's decoding
	// problem in place of "is required".
	Problems apperr.Details
}

// Item is one requested ticket type and quantity.
type Item struct {
	TicketID *int `json:"ticket_id"`
	Quantity *int `json:"quantity"`
}

// Customer is the buyer.
type Customer struct {
	Name  *string `json:"name"`
	Email *string `json:"email"`
	Phone *string `json:"phone"`
}

// request is an Input that passed validation, with its values in place.
type request struct {
	EventID     int64
	EventDateID int64
	Items       []item
	Name        string
	Email       string
	Phone       *phonenumbers.PhoneNumber
	PhoneRaw    string
	SuccessURL  string
	CancelURL   string
	Metadata    map[string]any
}

type item struct {
	TicketID int64
	Quantity int64
}

// validate checks the shape and fields of a request. decoded holds the
// problems the API's decoding found (Request.Problems): every problem is
// reported at once, a field's decoding problem in place of "is required".
// Errors: validation_failed with details keyed by field path.
func validate(in *Input, decoded apperr.Details) (*request, error) {
	d := apperr.Details{}
	if in == nil {
		if len(decoded) == 0 {
			d.Add("body", "is required")
			return nil, apperr.Validation(d)
		}
		return nil, apperr.Validation(decoded)
	}
	r := &request{}
	switch m := in.Metadata.(type) {
	case nil:
	case map[string]any:
		r.Metadata = m
	default:
		d.Add("metadata", "must be a JSON object")
	}
	r.EventID = positive(d, "event_id", in.EventID)
	r.EventDateID = positive(d, "eventdate_id", in.EventdateID)

	switch {
	case in.Items == nil:
		d.Add("items", "is required")
	case len(in.Items) == 0:
		d.Add("items", "must contain at least one item")
	case len(in.Items) > MaxItems:
		d.Add("items", fmt.Sprintf("must contain at most %d items", MaxItems))
	default:
		seen := map[int64]int{}
		for i, it := range in.Items {
			at := fmt.Sprintf("items.%d", i)
			if it == nil {
				d.Add(at, "must be an object with ticket_id and quantity")
				continue
			}
			id := positive(d, at+".ticket_id", it.TicketID)
			if first, dup := seen[id]; dup && id > 0 {
				d.Add(at+".ticket_id", fmt.Sprintf("duplicates items.%d.ticket_id; send each ticket once with its total quantity", first))
			} else if id > 0 {
				seen[id] = i
			}
			var qty int64
			switch {
			case it.Quantity == nil:
				d.Add(at+".quantity", "is required")
			case *it.Quantity < 1 || *it.Quantity > MaxQuantity:
				d.Add(at+".quantity", fmt.Sprintf("must be between 1 and %d", MaxQuantity))
			default:
				qty = int64(*it.Quantity)
			}
			r.Items = append(r.Items, item{TicketID: id, Quantity: qty})
		}
	}

	if in.Customer == nil {
		d.Add("customer", "is required")
	} else {
		r.Name = strings.TrimSpace(deref(in.Customer.Name))
		if r.Name == "" {
			d.Add("customer.name", "is required")
		} else if p := clientinput.NameProblem(r.Name); p != "" {
			d.Add("customer.name", p)
		}
		email := strings.TrimSpace(deref(in.Customer.Email))
		if email == "" {
			d.Add("customer.email", "is required")
		} else if p := clientinput.EmailProblem(email); p != "" {
			d.Add("customer.email", p)
		} else {
			r.Email = strings.ToLower(email)
		}
		r.PhoneRaw = strings.TrimSpace(deref(in.Customer.Phone))
		if r.PhoneRaw == "" {
			d.Add("customer.phone", "is required")
		} else if p := clientinput.TooLong(r.PhoneRaw, clientinput.MaxPhone); p != "" {
			d.Add("customer.phone", p)
		} else if n, err := phonenumbers.Parse(r.PhoneRaw, "GH"); err != nil || !phonenumbers.IsPossibleNumber(n) {
			d.Add("customer.phone", "must be a valid phone number")
		} else {
			r.Phone = n
		}
	}

	r.SuccessURL = redirectURL(d, "success_url", in.SuccessURL)
	r.CancelURL = redirectURL(d, "cancel_url", in.CancelURL)
	for key, v := range r.Metadata {
		if strings.ContainsRune(key, 0) {
			d.Add("metadata", "keys must not contain NUL characters")
		}
		if hasNUL(v) {
			d.Add("metadata."+key, "must not contain NUL characters")
		}
	}
	for k, v := range decoded {
		d[k] = v
	}
	if err := apperr.Validation(d); err != nil {
		return nil, err
	}
	return r, nil
}

// canonical is the request's fingerprint source: the Input as JSON, which
// encoding/json writes deterministically (struct order, sorted map keys).
func canonical(in *Input) []byte {
	b, _ := json.Marshal(in)
	return b
}

// ghanaMobile reports whether a validated phone number is a Ghanaian mobile
// number, as live free checkout requires.
func ghanaMobile(n *phonenumbers.PhoneNumber) bool {
	return n != nil && phonenumbers.IsValidNumberForRegion(n, "GH") &&
		phonenumbers.GetNumberType(n) == phonenumbers.MOBILE
}

// redirectURL reads success_url or cancel_url: required, and at most
// clientinput.MaxURL characters. Whether it is a usable HTTPS URL is a rule
// of its own, checked later (invalid_redirect_url).
func redirectURL(d apperr.Details, field string, v *string) string {
	u := strings.TrimSpace(deref(v))
	if u == "" {
		d.Add(field, "is required")
	} else if p := clientinput.TooLong(u, clientinput.MaxURL); p != "" {
		d.Add(field, p)
	}
	return u
}

// hasNUL reports whether a metadata value holds a NUL character in any
// string or in any key of a nested object. A NUL must not reach the store:
// PostgreSQL's JSON refuses \u0000, so Bun escapes every JSON \u0000 once
// more, as \\u0000 (schema.BaseDialect.AppendJSON), and the order would keep
// the six characters \u0000 where the partner sent a NUL.
func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case map[string]any:
		for k, x := range v {
			if strings.ContainsRune(k, 0) || hasNUL(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasNUL(x) {
				return true
			}
		}
	}
	return false
}

func positive(d apperr.Details, field string, v *int) int64 {
	switch {
	case v == nil:
		d.Add(field, "is required")
	case *v < 1:
		d.Add(field, "must be a positive integer")
	default:
		return int64(*v)
	}
	return 0
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
