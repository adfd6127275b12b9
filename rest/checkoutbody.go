package rest

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
	"github.com/boxoffice/boxoffice/graph/model"
)

// decodeCheckout reads the JSON body of POST /api/v1/checkout-sessions as
// the mutation's checkout request, with the problems found keyed by field
// path; the request is nil when the body is not a JSON object at all. Every
// type error is reported at once with its full path (items.0.quantity: must
// be an integer); fields of the wrong type are left unset, so validation
// names them once. Unknown fields are ignored. The problems are the
// service's to report: it checks the Idempotency-Key header first.
func decodeCheckout(body io.Reader) (*model.CheckoutRequest, apperr.Details) {
	obj, d := decodeObject(body)
	if obj == nil {
		return nil, d
	}
	in := &model.CheckoutRequest{
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
			in.Items = make([]*model.CheckoutItemInput, len(list))
			for i, x := range list {
				at := "items." + strconv.Itoa(i)
				switch o := x.(type) {
				case map[string]any:
					in.Items[i] = &model.CheckoutItemInput{
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
			in.Customer = &model.CustomerInput{
				Name:  jsonString(d, o, "name", "customer.name"),
				Email: jsonString(d, o, "email", "customer.email"),
				Phone: jsonString(d, o, "phone", "customer.phone"),
			}
		}
	}
	return in, d
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

// decodeObject reads a body that must be one JSON object (numbers kept as
// json.Number); when it is not, the object is nil and the problem is
// under "body".
func decodeObject(body io.Reader) (map[string]any, apperr.Details) {
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
	return obj, d
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
