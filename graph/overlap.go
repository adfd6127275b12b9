package graph

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// overlappingFields replaces gqlparser's rule of the same name (the
// specification's "Field Selection Merging"), which compares every pair of
// fields that share a response name: 1,000 sibling fields of one name
// cost it half a million comparisons, seconds of CPU and, when their
// arguments differ, half a million errors. This one reaches the same
// verdicts in time linear in the fields of the document, with fragments
// counted where they are spread (what DocumentLimits bounds), by the
// algorithm Sangria and graphql-java use ("Overlapping fields can be
// merged fast", Xing, 2017): the fields of one response name are checked
// as one group, each against the first, since "has the same shape" and
// "has the same name and arguments" are both equivalences; then the
// group's sub-selections are merged and checked the same way, once per
// group rather than once per pair. The shape of the answer (list and
// non-null wrappers, leaf types) must agree across every field of a
// group; name and arguments only among fields whose parent types could be
// the same object, so the check of names is made per concrete parent
// type. It reports one error per conflicting group.
var overlappingFields = core.Rule{
	Name: rules.OverlappingFieldsCanBeMergedRule.Name,
	RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
		// A fragment is checked on its own and again where it is spread,
		// as graphql-js does; a conflict is reported once.
		reported := map[string]bool{}
		// The walker has resolved every field's definition and parent type,
		// in the operation and in each fragment it spreads.
		m := &fieldMerger{budget: maxMergedFields}
		m.addError = func(key, msg string, at *ast.Position) {
			if at != nil {
				key = strconv.Itoa(at.Line) + ":" + strconv.Itoa(at.Column) + " " + key
			}
			if !reported[key] {
				reported[key] = true
				addError(core.Message("%s", msg), core.At(at))
			}
		}
		check := func(w *core.Walker, set ast.SelectionSet, pos *ast.Position) {
			if m.stopped() {
				return // and said so
			}
			m.schema = w.Schema
			root := m.collect(set, nil)
			m.sameShape(root, nil)
			m.sameParents(root, nil)
			switch {
			case !m.stopped() || fragmentCycle(w.Document):
				// Done, or stopped by a cycle of fragments, which
				// NoFragmentCycles reports.
			case m.budget < 0:
				msg := fmt.Sprintf("The document has more than %d fields to compare, counting fragments each time they are spread; ask for fewer.", maxMergedFields)
				m.addError(msg, msg, pos)
			default:
				msg := fmt.Sprintf("The document nests fields more than %d levels deep, counting fragments where they are spread.", maxMergedDepth)
				m.addError(msg, msg, pos)
			}
		}
		observers.OnOperation(func(w *core.Walker, op *ast.OperationDefinition) { check(w, op.SelectionSet, op.Position) })
		observers.OnFragment(func(w *core.Walker, f *ast.FragmentDefinition) { check(w, f.SelectionSet, f.Position) })
	},
}

// Bounds of the check, far beyond what DocumentLimits lets through (its
// fields are counted with every spread expanded): they stop a document
// that bypassed those limits, or a fragment cycle (refused by its own
// rule), from running the check away.
const (
	maxMergedFields = 100_000 // fields collected in a document, over both passes
	maxMergedDepth  = 128
)

// fieldGroup is the fields of one selection (fragments merged in) that
// share a response name.
type fieldGroup struct {
	name   string
	fields []*ast.Field
}

type fieldMerger struct {
	schema   *ast.Schema
	addError func(key, msg string, at *ast.Position) // once per key and position
	budget   int
	tooDeep  bool
}

func (m *fieldMerger) stopped() bool { return m.budget < 0 || m.tooDeep }

// collect groups by response name the fields of set and, when set is nil,
// of the sub-selections of parents: fields of inline fragments and
// spread fragments are merged in, as the specification's CollectFields
// does (a fragment spread twice in one selection is taken once). Fields
// whose parent type is unknown are left to the rules that report it.
func (m *fieldMerger) collect(set ast.SelectionSet, parents []*ast.Field) []fieldGroup {
	var groups []fieldGroup
	index := map[string]int{}
	var visited map[string]bool
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			if m.stopped() {
				return
			}
			switch s := sel.(type) {
			case *ast.Field:
				if s.ObjectDefinition == nil {
					continue
				}
				m.budget--
				name := cmp.Or(s.Alias, s.Name)
				i, ok := index[name]
				if !ok {
					i = len(groups)
					index[name] = i
					groups = append(groups, fieldGroup{name: name})
				}
				groups[i].fields = append(groups[i].fields, s)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if s.Definition == nil || visited[s.Name] {
					continue
				}
				if visited == nil {
					visited = map[string]bool{}
				}
				visited[s.Name] = true
				walk(s.Definition.SelectionSet)
			}
		}
	}
	walk(set)
	for _, p := range parents {
		clear(visited)
		walk(p.SelectionSet)
	}
	return groups
}

// sameShape checks that the fields of each group answer values of one
// shape, then the groups of their merged sub-selections, whatever the
// parent types.
func (m *fieldMerger) sameShape(groups []fieldGroup, path []string) {
	if len(path) > maxMergedDepth {
		m.tooDeep = true
		return
	}
	for _, g := range groups {
		if m.stopped() {
			return
		}
		if m.shapeConflict(g, path) {
			continue
		}
		m.sameShape(m.collect(nil, g.fields), append(path, g.name))
	}
}

// sameParents checks that the fields of each group that could be
// selected on the same object have the same name and arguments, then
// their merged sub-selections. Fields selected on two different object
// types never both answer (their parents are mutually exclusive), so
// they are grouped by parent object type, each group joined by the fields
// selected on an interface or union, which any object may answer.
func (m *fieldMerger) sameParents(groups []fieldGroup, path []string) {
	if len(path) > maxMergedDepth {
		m.tooDeep = true
		return
	}
	for _, g := range groups {
		for _, fields := range byParentObject(g.fields) {
			if m.stopped() {
				return
			}
			sub := fieldGroup{name: g.name, fields: fields}
			if m.nameConflict(sub, path) {
				continue
			}
			m.sameParents(m.collect(nil, fields), append(path, g.name))
		}
	}
}

// fragmentCycle reports whether a fragment of doc spreads itself,
// directly or through others.
func fragmentCycle(doc *ast.QueryDocument) bool {
	const (
		unseen = iota
		visiting
		done
	)
	state := map[string]int{}
	byName := make(map[string]*ast.FragmentDefinition, len(doc.Fragments))
	for _, f := range doc.Fragments {
		if byName[f.Name] == nil {
			byName[f.Name] = f
		}
	}
	var visit func(name string) bool
	var inSet func(set ast.SelectionSet) bool
	visit = func(name string) bool {
		switch state[name] {
		case visiting:
			return true
		case done:
			return false
		}
		f := byName[name]
		if f == nil {
			state[name] = done
			return false
		}
		state[name] = visiting
		if inSet(f.SelectionSet) {
			return true
		}
		state[name] = done
		return false
	}
	inSet = func(set ast.SelectionSet) bool {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if inSet(s.SelectionSet) {
					return true
				}
			case *ast.InlineFragment:
				if inSet(s.SelectionSet) {
					return true
				}
			case *ast.FragmentSpread:
				if visit(s.Name) {
					return true
				}
			}
		}
		return false
	}
	for _, f := range doc.Fragments {
		if visit(f.Name) {
			return true
		}
	}
	return false
}

// byParentObject splits fields into the sets whose parents could be the
// same object: one per object type, each with the fields of abstract
// parents added, or the fields of abstract parents alone.
func byParentObject(fields []*ast.Field) [][]*ast.Field {
	if len(fields) < 2 {
		return [][]*ast.Field{fields}
	}
	var abstract []*ast.Field
	var objects [][]*ast.Field
	index := map[string]int{}
	for _, f := range fields {
		if f.ObjectDefinition.Kind != ast.Object || f.Definition == nil {
			// An unknown field is taken as selected on any object, as
			// gqlparser's rule takes it.
			abstract = append(abstract, f)
			continue
		}
		i, ok := index[f.ObjectDefinition.Name]
		if !ok {
			i = len(objects)
			index[f.ObjectDefinition.Name] = i
			objects = append(objects, nil)
		}
		objects[i] = append(objects[i], f)
	}
	if len(objects) == 0 {
		return [][]*ast.Field{abstract}
	}
	if len(abstract) > 0 {
		for i := range objects {
			objects[i] = append(objects[i], abstract...)
		}
	}
	return objects
}

// shapeConflict reports whether g's fields answer values of different
// shapes, and if so reports it.
func (m *fieldMerger) shapeConflict(g fieldGroup, path []string) bool {
	var first *ast.Field
	for _, f := range g.fields {
		switch {
		case f.Definition == nil:
		case first == nil:
			first = f
		case m.typesConflict(first.Definition.Type, f.Definition.Type):
			m.conflict(path, g.name, f, `they return conflicting types "`+first.Definition.Type.String()+`" and "`+f.Definition.Type.String()+`"`)
			return true
		}
	}
	return false
}

// typesConflict reports whether two types could not both apply to one
// value: list and non-null wrappers must match, and so must leaf types
// (composite types are compared through their fields).
func (m *fieldMerger) typesConflict(a, b *ast.Type) bool {
	for a.Elem != nil || b.Elem != nil {
		if a.NonNull != b.NonNull || a.Elem == nil || b.Elem == nil {
			return true
		}
		a, b = a.Elem, b.Elem
	}
	if a.NonNull != b.NonNull {
		return true
	}
	ta, tb := m.schema.Types[a.NamedType], m.schema.Types[b.NamedType]
	if ta == nil || tb == nil {
		return false // an unknown type is another rule's to report
	}
	return (ta.IsLeafType() || tb.IsLeafType()) && ta.Name != tb.Name
}

// nameConflict reports whether g's fields differ in name or arguments,
// and if so reports it.
func (m *fieldMerger) nameConflict(g fieldGroup, path []string) bool {
	if len(g.fields) < 2 {
		return false
	}
	first := g.fields[0]
	firstArgs := "" // its key, made when a field with arguments needs it
	for _, f := range g.fields[1:] {
		if f.Name != first.Name {
			m.conflict(path, g.name, f, `"`+first.Name+`" and "`+f.Name+`" are different fields`)
			return true
		}
		if len(f.Arguments) == 0 && len(first.Arguments) == 0 {
			continue
		}
		if firstArgs == "" {
			firstArgs = argumentsKey(first.Arguments)
		}
		if len(f.Arguments) != len(first.Arguments) || argumentsKey(f.Arguments) != firstArgs {
			m.conflict(path, g.name, f, "they have differing arguments")
			return true
		}
	}
	return false
}

// conflict reports that the fields named name under path cannot be
// merged, at field, in the words of gqlparser's rule. A conflict found
// again at the same field (through a fragment checked on its own, so by a
// shorter path, or for its name after its type) is not reported again.
func (m *fieldMerger) conflict(path []string, name string, at *ast.Field, reason string) {
	var b strings.Builder
	names := append(slices.Clone(path), name)
	b.WriteString(`Fields "` + names[0] + `" conflict because `)
	for _, n := range names[1:] {
		b.WriteString(`subfields "` + n + `" conflict because `)
	}
	b.WriteString(reason)
	b.WriteString(". Use different aliases on the fields to fetch both if this was intentional.")
	m.addError(name, b.String(), at.Position)
}

// argumentsKey writes arguments in a canonical form: two fields take the
// same arguments exactly when their keys are equal (arguments and the
// fields of input objects in name order, list items in the order
// written, each value with its kind).
func argumentsKey(args ast.ArgumentList) string {
	sorted := slices.Clone(args)
	slices.SortStableFunc(sorted, func(a, b *ast.Argument) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	for _, a := range sorted {
		writeKeyPart(&b, a.Name)
		writeValueKey(&b, a.Value)
	}
	return b.String()
}

func writeValueKey(b *strings.Builder, v *ast.Value) {
	if v == nil {
		b.WriteByte('-')
		return
	}
	b.WriteString(strconv.Itoa(int(v.Kind)))
	writeKeyPart(b, v.Raw)
	children := v.Children
	if v.Kind == ast.ObjectValue {
		children = slices.Clone(children)
		slices.SortStableFunc(children, func(x, y *ast.ChildValue) int { return strings.Compare(x.Name, y.Name) })
	}
	b.WriteString(strconv.Itoa(len(children)))
	b.WriteByte('[')
	for _, c := range children {
		writeKeyPart(b, c.Name)
		writeValueKey(b, c.Value)
	}
	b.WriteByte(']')
}

// writeKeyPart writes s with its length, so that no two sequences of
// parts write the same key.
func writeKeyPart(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}
