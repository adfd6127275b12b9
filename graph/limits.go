package graph

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Query limits: dashboards run deep catalog queries, but no single request
// may ask for unbounded work.
const (
	// MaxDepth is the deepest selection allowed (introspection fields
	// excepted): events → nodes → dates → tickets → field is 5.
	MaxDepth = 10
	// MaxComplexity bounds the estimated fields resolved: 100 events with
	// their dates, venues and tickets fit comfortably.
	MaxComplexity = 50_000
)

// depthLimit refuses operations nested deeper than max.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if depth := selectionDepth(oc.Operation.SelectionSet, oc.Doc.Fragments, 0); depth > d.max {
		return gqlerror.Errorf("operation is nested %d levels deep, which exceeds the limit of %d", depth, d.max)
	}
	return nil
}

func selectionDepth(set ast.SelectionSet, frags ast.FragmentDefinitionList, seen int) int {
	if seen > 64 {
		return seen // fragment cycles are refused by validation; never loop
	}
	deepest := 0
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			d = 1 + selectionDepth(s.SelectionSet, frags, seen+1)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, frags, seen+1)
		case *ast.FragmentSpread:
			if f := frags.ForName(s.Name); f != nil {
				d = selectionDepth(f.SelectionSet, frags, seen+1)
			}
		}
		deepest = max(deepest, d)
	}
	return deepest
}
