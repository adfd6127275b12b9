package graph

import (
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
)

// Scalars read straight from an object's struct field. gqlgen's
// MarshalInt, MarshalString and MarshalBoolean each return a closure over
// the value, one allocation per scalar of the answer (and MarshalInt
// another for its digits). `make generate` rewrites the scalar struct
// fields (graph/sequential) to return a pointer to the field itself,
// typed as one of these: no allocation, and the field is read when the
// answer is written, after every resolver of the operation has run.
// Floats keep gqlgen's marshaller.

type (
	intValue    int
	stringValue string
	boolValue   bool
	// int64Value is an Int held as int64: the counts and ids of the
	// capability packages' contract types (checkout, tickets, checkin).
	int64Value int64
)

func (v *intValue) MarshalGQL(w io.Writer) { writeInt(w, int64(*v)) }

func (v *int64Value) MarshalGQL(w io.Writer) { writeInt(w, int64(*v)) }

func writeInt(w io.Writer, i int64) {
	if b, ok := w.(interface {
		AvailableBuffer() []byte
		io.Writer
	}); ok { // bytes.Buffer, answerBuffer: no allocation
		_, _ = b.Write(strconv.AppendInt(b.AvailableBuffer(), i, 10))
		return
	}
	_, _ = io.WriteString(w, strconv.FormatInt(i, 10))
}

func (v *boolValue) MarshalGQL(w io.Writer) {
	if *v {
		_, _ = io.WriteString(w, "true")
	} else {
		_, _ = io.WriteString(w, "false")
	}
}

const hexDigits = "0123456789ABCDEF"

// MarshalGQL writes the string quoted as gqlgen's MarshalString does:
// quote, backslash and control characters escaped, the rest as it is.
func (v *stringValue) MarshalGQL(w io.Writer) {
	s := string(*v)
	_, _ = io.WriteString(w, `"`)
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		_, _ = io.WriteString(w, s[start:i])
		switch c {
		case '\t':
			_, _ = io.WriteString(w, `\t`)
		case '\r':
			_, _ = io.WriteString(w, `\r`)
		case '\n':
			_, _ = io.WriteString(w, `\n`)
		case '\\':
			_, _ = io.WriteString(w, `\\`)
		case '"':
			_, _ = io.WriteString(w, `\"`)
		default:
			_, _ = io.WriteString(w, `\u00`+hexDigits[c>>4:c>>4+1]+hexDigits[c&0xf:c&0xf+1])
		}
		start = i + 1
	}
	_, _ = io.WriteString(w, s[start:])
	_, _ = io.WriteString(w, `"`)
}

// optInt, optString and optBool are the nullable forms: null for nil.
func optInt(p *int) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return (*intValue)(p)
}

func optString(p *string) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return (*stringValue)(p)
}

func optBool(p *bool) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return (*boolValue)(p)
}
