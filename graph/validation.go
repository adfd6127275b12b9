package graph

import (
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// MaxErrors bounds the errors of one answer, as graphql-js does: a
// document with a thousand mistakes is answered with the first hundred and
// one more error saying the rest were left out.
const MaxErrors = 100

// omittedErrors is the message of the error that stands for those left out.
var omittedErrors = fmt.Sprintf("More errors were found and left out; only the first %d are listed.", MaxErrors)

// validationRules returns the rules a document is validated with:
// gqlparser's, with its quadratic overlapping-fields rule replaced by
// overlappingFields, and their errors counted together so that past
// MaxErrors none is even formatted, each message clipped like Present
// clips it (the WebSocket transport sends some unpresented). gqlgen
// calls it for every document it validates, so the count is per
// document.
func validationRules() *rules.Rules {
	defaults := rules.NewDefaultRules()
	defaults.ReplaceRule(overlappingFields.Name, overlappingFields.RuleFunc)
	defaults.AddRule(noDefer.Name, noDefer.RuleFunc)
	n := 0
	out := rules.NewRules()
	for name, rule := range defaults.GetInner() { // validation sorts them by name
		out.AddRule(name, func(observers *core.Events, addError core.AddErrFunc) {
			rule(observers, func(options ...core.ErrorOption) {
				n++
				switch {
				case n <= MaxErrors:
					addError(append(options, clipMessage)...)
				case n == MaxErrors+1:
					addError(core.Message("%s", omittedErrors))
				}
			})
		})
	}
	return out
}

// noDefer refuses @defer, which gqlparser's prelude declares: every
// transport here answers an operation in one response, so a deferred
// fragment would come back null with a promise of a later part
// ("hasNext": true) that never came.
var noDefer = core.Rule{Name: "NoDefer", RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
	observers.OnDirective(func(_ *core.Walker, d *ast.Directive) {
		if d.Name == "defer" {
			addError(core.Message("@defer is not supported: an operation is answered in one response; ask for the fields without it."),
				core.At(d.Position))
		}
	})
}}

func clipMessage(err *gqlerror.Error) { err.Message = clip(err.Message) }
