package checkout

import (
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/nyaruka/phonenumbers"
)

// CheckMetadataShape is checkout's rule for the form of metadata, for
// other requests that carry it (a refund's): nil or a JSON object with no
// NUL character in any key or string. It returns the object; the problems
// go to d under field.
func CheckMetadataShape(d apperr.Details, field string, v any) map[string]any {
	var m map[string]any
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		m = x
	default:
		d.Add(field, "must be a JSON object")
		return nil
	}
	for key, v := range m {
		if strings.ContainsRune(key, 0) {
			d.Add(field, "keys must not contain NUL characters")
		}
		if hasNUL(v) {
			d.Add(field+"."+key, "must not contain NUL characters")
		}
	}
	return m
}

// CheckMetadata is checkout's rule for metadata's size and content, for
// other requests that carry it (a refund's): the limits of a checkout's
// metadata, no email address, and not the named customer's name or phone
// number.
// Errors: metadata_too_large, validation_failed.
func CheckMetadata(m map[string]any, customerName, customerPhone string) error {
	req := &request{Metadata: m, Name: customerName}
	if n, err := phonenumbers.Parse(customerPhone, "GH"); err == nil {
		req.Phone = n
	}
	return checkMetadata(req)
}
