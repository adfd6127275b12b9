package resolvers

import (
	"errors"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
)

// graphQLPaths rewrites the field paths of a validation error from the
// REST contract's names (items.0.ticket_id, per_page) to the GraphQL
// argument's own (input.items.0.ticketId, perPage), which is what a
// frontend maps onto its form. Metadata keys are the client's own and are
// kept as sent. Other errors pass through.
func graphQLPaths(err error, arg string) error {
	var ae *apperr.Error
	if !errors.As(err, &ae) || len(ae.Details) == 0 {
		return err
	}
	out := *ae
	out.Details = make(apperr.Details, len(ae.Details))
	for path, msgs := range ae.Details {
		out.Details[graphQLPath(path, arg)] = msgs
	}
	return &out
}

func graphQLPath(path, arg string) string {
	return strings.Join(graphQLField(path, arg), ".")
}

// graphQLField is a REST field path as the list of GraphQL names from the
// argument arg down: items.0.ticket_id → [input items 0 ticketId]. What
// follows "metadata" is one of the client's keys, kept whole and as sent.
func graphQLField(path, arg string) []string {
	var out []string
	if arg != "" {
		out = append(out, arg)
	}
	segs := strings.Split(path, ".")
	for i, s := range segs {
		out = append(out, camel(s))
		if s == "metadata" && i+1 < len(segs) {
			return append(out, strings.Join(segs[i+1:], "."))
		}
	}
	return out
}

// camel turns snake_case into camelCase.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
