package graph

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// checkInFields are the root fields of the door (spec/fulfilment.md
// section 6): a scanner key may use these and no other, an app's key any
// other and not these, as REST's check-in routes (rest.CheckInRoute).
var checkInFields = map[string]bool{
	"Mutation.checkIn":      true,
	"Query.checkInStats":    true,
	"Subscription.checkIns": true,
}

// CheckInField reports whether field of the root type object (Query,
// Mutation, Subscription) is a check-in field.
func CheckInField(object, field string) bool { return checkInFields[object+"."+field] }

// keyFields gives each kind of key its own root fields: a scanner key is
// refused every field but the check-in ones (scanner_key_not_allowed),
// an app's key the check-in ones (scanner_key_required), each as an error
// of that field alone, so the document's other fields still answer.
// __typename and introspection are every key's. An operation that asks
// only for fields its key may use runs as it is, with no cost per field.
type keyFields struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = keyFields{}

func (keyFields) ExtensionName() string                   { return "KeyFields" }
func (keyFields) Validate(graphql.ExecutableSchema) error { return nil }

func (keyFields) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	p, err := auth.FromContext(ctx)
	if err != nil {
		return nil // not admitted: the resolvers refuse it
	}
	root := rootType(oc.Operation.Operation)
	refused := false
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{root}) {
		if keyRefuses(p, root, f.Name) != nil {
			refused = true
			break
		}
	}
	if !refused {
		return nil
	}
	next := oc.ResolverMiddleware
	oc.ResolverMiddleware = func(ctx context.Context, resolve graphql.Resolver) (any, error) {
		if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Object == root {
			if err := keyRefuses(p, root, fc.Field.Name); err != nil {
				return nil, err
			}
		}
		return next(ctx, resolve)
	}
	return nil
}

// keyRefuses is the refusal of root field field of object to p's kind of
// key, or nil.
// Errors: scanner_key_not_allowed, scanner_key_required.
func keyRefuses(p *auth.Principal, object, field string) error {
	switch {
	case strings.HasPrefix(field, "__"):
		return nil
	case CheckInField(object, field):
		return p.RequireScanner()
	}
	return p.RequireApp()
}

// rootType is the name of an operation's root type.
func rootType(op ast.Operation) string {
	switch op {
	case ast.Mutation:
		return "Mutation"
	case ast.Subscription:
		return "Subscription"
	}
	return "Query"
}
