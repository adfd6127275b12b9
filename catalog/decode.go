package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decoding a catalog file is done by hand rather than by encoding/json's
// Unmarshal, which stops at the first value of a wrong type and names it
// by Go struct path ("Go struct field TicketSpec.events.dates.tickets.quantity
// of type int64"). An operator needs every problem at once, named the way
// the file names things: by the reference of the object and the field, with
// its line. So the file is first read into a tree of values that remember
// their lines, then bound onto File field by field, each wrong type becoming
// one problem.

// nodeKind is the JSON type of a value.
type nodeKind int

const (
	nullNode nodeKind = iota
	boolNode
	numberNode
	stringNode
	arrayNode
	objectNode
)

// node is one JSON value of a file and the line it is on.
type node struct {
	kind  nodeKind
	line  int
	text  string // a string's value, or a number's literal
	b     bool
	keys  []string // an object's keys, in file order
	lines []int    // the line of each key
	vals  []*node  // an object's values or an array's elements
}

// field returns an object's value of key, nil when it has none. A key given
// twice counts by its last value, as with encoding/json.
func (n *node) field(key string) *node {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return n.vals[i]
		}
	}
	return nil
}

// describe names a value for a message: `a string ("500")`, `a number (1.5)`.
func (n *node) describe() string {
	switch n.kind {
	case nullNode:
		return "null"
	case boolNode:
		return strconv.FormatBool(n.b)
	case numberNode:
		return "a number (" + clip(n.text) + ")"
	case stringNode:
		return "a string (" + strconv.Quote(clip(n.text)) + ")"
	case arrayNode:
		return "a list"
	}
	return "an object"
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:40]) + "…"
}

// lineIndex turns byte offsets into 1-based line numbers.
type lineIndex []int

func newLineIndex(data []byte) lineIndex {
	var nl lineIndex
	for i, c := range data {
		if c == '\n' {
			nl = append(nl, i)
		}
	}
	return nl
}

func (l lineIndex) at(offset int64) int { return sort.SearchInts(l, int(offset)) + 1 }

// readTree reads a whole JSON document. A syntax error is the one problem
// that stops reading, and is reported with its line.
func readTree(data []byte) (*node, error) {
	lines := newLineIndex(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("not a valid catalog file: it is empty")
	}
	root, err := readNode(dec, lines)
	if err != nil {
		return nil, syntaxProblem(err, dec, lines)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("not a valid catalog file: data after the top-level object (line %d)", lines.at(dec.InputOffset()))
	}
	return root, nil
}

func syntaxProblem(err error, dec *json.Decoder, lines lineIndex) error {
	offset := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not valid JSON: the file ends in the middle of a value")
	}
	return fmt.Errorf("not valid JSON at line %d: %s", lines.at(max(offset-1, 0)), strings.TrimPrefix(err.Error(), "json: "))
}

// readNode reads the next value from dec.
func readNode(dec *json.Decoder, lines lineIndex) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	// The offset is just past the token, so its last byte is on its line.
	n := &node{line: lines.at(dec.InputOffset() - 1)}
	switch v := tok.(type) {
	case nil:
		n.kind = nullNode
	case bool:
		n.kind, n.b = boolNode, v
	case json.Number:
		n.kind, n.text = numberNode, string(v)
	case string:
		n.kind, n.text = stringNode, v
	case json.Delim:
		if v == '[' {
			n.kind = arrayNode
			for dec.More() {
				elem, err := readNode(dec, lines)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, elem)
			}
		} else {
			n.kind = objectNode
			for dec.More() {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key.(string))
				n.lines = append(n.lines, lines.at(dec.InputOffset()-1))
				val, err := readNode(dec, lines)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, val)
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	}
	return n, nil
}

// kinds name the objects of a catalog file in messages.
var kinds = map[reflect.Type]string{
	reflect.TypeFor[File]():       "catalog file",
	reflect.TypeFor[VenueSpec]():  "venue",
	reflect.TypeFor[EventSpec]():  "event",
	reflect.TypeFor[DateSpec]():   "date",
	reflect.TypeFor[TicketSpec](): "ticket",
}

func withArticle(kind string) string {
	switch kind {
	case "catalog file":
		return "the catalog file"
	case "event":
		return "an event"
	}
	return "a " + kind
}

// binder fills a File from a tree, collecting a problem for every value of
// the wrong type and every unknown key, and recording where each object and
// field is so later checks can name lines too.
type binder struct {
	pos      positions
	problems problems
}

// bindStruct fills the struct v from an object n, located at.
func (b *binder) bindStruct(n *node, v reflect.Value, label string) {
	at := &objectPos{label: label, line: n.line, fields: map[string]int{}, bad: map[string]bool{}}
	b.pos[v.Addr().Interface()] = at
	fields := jsonFields(v.Type())
	for i, key := range n.keys {
		idx, ok := fields[key]
		if !ok {
			// encoding/json matched keys case-insensitively; files
			// written against it keep working.
			for name, i := range fields {
				if strings.EqualFold(name, key) {
					idx, ok = i, true
					break
				}
			}
		}
		if !ok {
			at.fields[key] = n.lines[i]
			msg := "is not a field of " + withArticle(kinds[v.Type()])
			if s := suggest(key, fields); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			b.problems.add(at, strconv.Quote(key), "%s", msg)
			continue
		}
		name := v.Type().Field(idx).Tag.Get("json")
		name, _, _ = strings.Cut(name, ",")
		at.fields[name] = n.lines[i]
		if b.bindValue(n.vals[i], v.Field(idx), name, at) != "" {
			at.bad[name] = true
		}
	}
}

// bindValue fills v from n, or reports why it cannot: it returns the
// expectation that failed ("" when none did).
func (b *binder) bindValue(n *node, v reflect.Value, field string, at *objectPos) string {
	t := v.Type()
	nullable := t.Kind() == reflect.Pointer
	if n.kind == nullNode {
		// null leaves the zero value, as encoding/json does: nil for an
		// optional field; the checks that follow decide if it was required.
		return ""
	}
	if nullable {
		t = t.Elem()
	}
	want, ok := "", false
	var set func(reflect.Value)
	switch t.Kind() {
	case reflect.String:
		want, ok = "a string", n.kind == stringNode
		set = func(e reflect.Value) { e.SetString(n.text) }
	case reflect.Bool:
		want, ok = "true or false", n.kind == boolNode
		set = func(e reflect.Value) { e.SetBool(n.b) }
	case reflect.Int64:
		want = "a whole number"
		i, err := strconv.ParseInt(n.text, 10, 64)
		ok = n.kind == numberNode && err == nil
		set = func(e reflect.Value) { e.SetInt(i) }
	case reflect.Float64:
		want = "a number"
		f, err := strconv.ParseFloat(n.text, 64)
		ok = n.kind == numberNode && err == nil
		set = func(e reflect.Value) { e.SetFloat(f) }
	case reflect.Slice:
		want, ok = "a list ([…])", n.kind == arrayNode
		set = func(e reflect.Value) { b.bindList(n, e) }
	default:
		panic(fmt.Sprintf("catalog: no binding for %s", t))
	}
	if !ok {
		if nullable {
			want += " or null"
		}
		b.problems.add(at, field, "must be %s, not %s", want, n.describe())
		return want
	}
	if nullable {
		p := reflect.New(t)
		set(p.Elem())
		v.Set(p)
	} else {
		set(v)
	}
	return ""
}

// bindList fills a slice of objects, each named by its own reference.
func (b *binder) bindList(n *node, v reflect.Value) {
	elem := v.Type().Elem()
	kind := kinds[elem]
	list := reflect.MakeSlice(v.Type(), len(n.vals), len(n.vals))
	v.Set(list) // before binding: positions are keyed by the elements' addresses
	for i, e := range n.vals {
		ref := ""
		if r := e.field("reference"); e.kind == objectNode && r != nil && r.kind == stringNode {
			ref = r.text
		}
		label := where(kind, i, ref)
		if e.kind != objectNode {
			// Left as a zero value that no later check looks at.
			at := &objectPos{label: label, line: e.line, unbound: true}
			b.pos[v.Index(i).Addr().Interface()] = at
			b.problems.add(at, "", "must be an object ({…}), not %s", e.describe())
			continue
		}
		b.bindStruct(e, v.Index(i), label)
	}
}

// jsonFields maps the JSON names of a struct's fields to their indexes.
func jsonFields(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = i
		}
	}
	return out
}

// suggest returns the field name a mistyped key most likely meant, if one
// is within two edits of it.
func suggest(key string, fields map[string]int) string {
	best, bestD := "", 3
	for name := range fields {
		if d := editDistance(strings.ToLower(key), name); d < bestD || (d == bestD && name < best) {
			best, bestD = name, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
