package checkout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
)

// Source yields a request's Input once the steps before body validation
// (rate limit, Idempotency-Key) have passed, with the problems its decoding
// found keyed by field path (a JSON type error, a body that is not JSON).
// A decoder that found the body unreadable returns a nil Input.
type Source func() (*Input, apperr.Details)

// Given is the Source of an Input an API has already decoded (GraphQL
// coerces its arguments before the resolver runs).
func Given(in *Input) Source {
	return func() (*Input, apperr.Details) { return in, nil }
}

// DecodeJSON is the Source of a JSON request body (POST
// /api/v1/checkout-sessions), read only when called. Every type error is
// reported at once with its full path (items.0.quantity: must be an
// integer); fields of the wrong type are left unset, so validation names
// them once. Unknown fields are ignored.
func DecodeJSON(body io.Reader) Source {
	return func() (*Input, apperr.Details) {
		d := apperr.Details{}
		dec := json.NewDecoder(body)
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		if err == nil && dec.More() {
			err = errors.New("trailing data after the JSON object")
		}
		if err != nil {
			d.Add("body", bodyProblem(err))
			return nil, d
		}
		obj, ok := v.(map[string]any)
		if !ok {
			d.Add("body", "must be a JSON object")
			return nil, d
		}
		in := &Input{
			EventID:     jsonInt(d, obj, "event_id", "event_id"),
			EventdateID: jsonInt(d, obj, "eventdate_id", "eventdate_id"),
			SuccessURL:  jsonString(d, obj, "success_url", "success_url"),
			CancelURL:   jsonString(d, obj, "cancel_url", "cancel_url"),
			Metadata:    obj["metadata"],
		}
		if raw, ok := obj["items"]; ok && raw != nil {
			list, ok := raw.([]any)
			if !ok {
				d.Add("items", "must be an array")
			} else {
				in.Items = make([]*Item, len(list))
				for i, x := range list {
					at := "items." + strconv.Itoa(i)
					switch o := x.(type) {
					case map[string]any:
						in.Items[i] = &Item{
							TicketID: jsonInt(d, o, "ticket_id", at+".ticket_id"),
							Quantity: jsonInt(d, o, "quantity", at+".quantity"),
						}
					case nil:
					default:
						d.Add(at, "must be an object with ticket_id and quantity")
					}
				}
			}
		}
		if raw, ok := obj["customer"]; ok && raw != nil {
			o, ok := raw.(map[string]any)
			if !ok {
				d.Add("customer", "must be an object")
			} else {
				in.Customer = &Customer{
					Name:  jsonString(d, o, "name", "customer.name"),
					Email: jsonString(d, o, "email", "customer.email"),
					Phone: jsonString(d, o, "phone", "customer.phone"),
				}
			}
		}
		return in, d
	}
}

// bodyProblem says why a body could not be read as JSON.
func bodyProblem(err error) string {
	var maxErr *http.MaxBytesError
	switch {
	case errors.Is(err, io.EOF):
		return "is required"
	case errors.As(err, &maxErr):
		return fmt.Sprintf("must be at most %d bytes", maxErr.Limit)
	}
	return fmt.Sprintf("is not valid JSON (%s)", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonInt reads an integer member; null or absent is nil.
func jsonInt(d apperr.Details, obj map[string]any, name, path string) *int {
	raw, ok := obj[name]
	if !ok || raw == nil {
		return nil
	}
	n, ok := raw.(json.Number)
	if !ok {
		d.Add(path, "must be an integer")
		return nil
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
			d.Add(path, "must be an integer")
			return nil
		}
		i = int64(f)
	}
	if i > math.MaxInt32 || i < math.MinInt32 {
		d.Add(path, "must be an integer between -2147483648 and 2147483647")
		return nil
	}
	v := int(i)
	return &v
}

// jsonString reads a string member; null or absent is nil.
func jsonString(d apperr.Details, obj map[string]any, name, path string) *string {
	raw, ok := obj[name]
	if !ok || raw == nil {
		return nil
	}
	s, ok := raw.(string)
	if !ok {
		d.Add(path, "must be a string")
		return nil
	}
	return &s
}
