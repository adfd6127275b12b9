package graph

import (
	"regexp"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/stretchr/testify/require"
)

// introspection asks for everything the schema's documentation consists of.
const schemaDocsQuery = `{
  __schema {
    description
    types {
      kind name description specifiedByURL
      fields(includeDeprecated: true) {
        name description isDeprecated deprecationReason
        args { name description type { ...Ref } }
        type { ...Ref }
      }
      inputFields { name description type { ...Ref } }
      enumValues(includeDeprecated: true) { name description }
    }
  }
}
fragment Ref on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`

type typeRef struct {
	Kind   string
	Name   *string
	OfType *typeRef
}

// String writes a reference as the schema does: [Ticket!]!.
func (r *typeRef) String() string {
	switch r.Kind {
	case "NON_NULL":
		return r.OfType.String() + "!"
	case "LIST":
		return "[" + r.OfType.String() + "]"
	}
	return *r.Name
}

type introspected struct {
	Schema struct {
		Description string
		Types       []struct {
			Kind, Name, Description string
			SpecifiedByURL          *string
			Fields                  []struct {
				Name, Description string
				IsDeprecated      bool
				DeprecationReason *string
				Args              []struct {
					Name, Description string
					Type              typeRef
				}
				Type typeRef
			}
			InputFields []struct {
				Name, Description string
				Type              typeRef
			}
			EnumValues []struct{ Name, Description string }
		}
	} `json:"__schema"`
}

// introspect runs the introspection query against the executable schema,
// as a frontend's tools do.
func introspect(t *testing.T) introspected {
	t.Helper()
	srv := handler.New(NewExecutableSchema(Config{}))
	srv.AddTransport(httpTransport{})
	srv.Use(extension.Introspection{})
	var out introspected
	client.New(srv).MustPost(schemaDocsQuery, &out)
	require.NotEmpty(t, out.Schema.Types)
	return out
}

// TestSchemaDescribed fails when the schema, or any type, field, argument,
// input field or enum value of it, has no description: the schema is the
// documentation frontend engineers read in the playground and their tools.
func TestSchemaDescribed(t *testing.T) {
	s := introspect(t).Schema
	var missing []string
	if strings.TrimSpace(s.Description) == "" {
		missing = append(missing, "the schema")
	}
	undescribed := func(what, d string) {
		if strings.TrimSpace(d) == "" {
			missing = append(missing, what)
		}
	}
	for _, ty := range s.Types {
		if strings.HasPrefix(ty.Name, "__") {
			continue
		}
		undescribed("type "+ty.Name, ty.Description)
		for _, f := range ty.Fields {
			undescribed("field "+ty.Name+"."+f.Name, f.Description)
			for _, a := range f.Args {
				undescribed("argument "+ty.Name+"."+f.Name+"("+a.Name+")", a.Description)
			}
		}
		for _, f := range ty.InputFields {
			undescribed("input field "+ty.Name+"."+f.Name, f.Description)
		}
		for _, v := range ty.EnumValues {
			undescribed("enum value "+ty.Name+"."+v.Name, v.Description)
		}
	}
	require.Empty(t, missing, "schema.graphql: describe these for the frontend engineers who read them")
}

// TestSchemaConventions checks the rules README's GraphQL section states.
func TestSchemaConventions(t *testing.T) {
	s := introspect(t).Schema
	types := map[string]int{}
	for i, ty := range s.Types {
		types[ty.Name] = i
	}
	upper := regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	fieldType := func(typeName, field string) string {
		for _, f := range s.Types[types[typeName]].Fields {
			if f.Name == field {
				return f.Type.String()
			}
		}
		t.Fatalf("%s.%s is missing", typeName, field)
		return ""
	}

	t.Run("EnumValuesUpperCase", func(t *testing.T) {
		for _, ty := range s.Types {
			for _, v := range ty.EnumValues {
				require.Regexp(t, upper, v.Name, ty.Name)
			}
		}
		require.Equal(t, "OrderStatus!", fieldType("Order", "status"))
		require.Equal(t, "Environment!", fieldType("Order", "environment"))
		require.Equal(t, "CheckoutSessionStatus!", fieldType("CheckoutSession", "status"))
		require.Equal(t, "Environment!", fieldType("CheckoutSession", "environment"))
	})
	t.Run("DateTime", func(t *testing.T) {
		dt := s.Types[types["DateTime"]]
		require.Equal(t, "SCALAR", dt.Kind)
		require.NotNil(t, dt.SpecifiedByURL)
		require.Equal(t, "https://www.rfc-editor.org/rfc/rfc3339", *dt.SpecifiedByURL)
		// Every field named like an instant is one; wall-clock and display
		// strings are not.
		for _, ty := range s.Types {
			for _, f := range ty.Fields {
				instant := strings.HasSuffix(f.Name, "Iso") || f.Name == "createdAt" || f.Name == "updatedAt" || f.Name == "expiresAt"
				if instant {
					require.Equal(t, "DateTime", strings.TrimSuffix(f.Type.String(), "!"), "%s.%s", ty.Name, f.Name)
				}
			}
		}
	})
	t.Run("Money", func(t *testing.T) {
		for _, ty := range s.Types {
			for _, f := range ty.Fields {
				if strings.HasSuffix(f.Name, "Money") {
					require.Equal(t, "Money", strings.TrimSuffix(f.Type.String(), "!"), "%s.%s", ty.Name, f.Name)
				}
			}
		}
		require.Equal(t, "Money!", fieldType("Ticket", "effectivePriceMoney"))
		require.Equal(t, "String!", fieldType("Money", "amount"))
		require.Equal(t, "String!", fieldType("Money", "currency"))
	})
	t.Run("Deprecated", func(t *testing.T) {
		for _, f := range s.Types[types["Ticket"]].Fields {
			if f.Name == "free" {
				require.True(t, f.IsDeprecated)
				require.Contains(t, *f.DeprecationReason, "isFree")
				return
			}
		}
		t.Fatal("Ticket.free is missing")
	})
	t.Run("PageInfoIsRelays", func(t *testing.T) {
		// Relay and Apollo read a type named PageInfo as a cursor
		// connection's; page numbers have a name of their own.
		require.Equal(t, "PageNumbers!", fieldType("EventPage", "pageInfo"))
		if i, ok := types["PageInfo"]; ok {
			var names []string
			for _, f := range s.Types[i].Fields {
				names = append(names, f.Name)
			}
			require.Subset(t, names, []string{"hasNextPage", "hasPreviousPage", "startCursor", "endCursor"})
		}
	})
	t.Run("Mutation", func(t *testing.T) {
		// Nullable, so that a top-level error of one checkout never nulls
		// the data of another in the same document.
		require.Equal(t, "CreateCheckoutSessionPayload", fieldType("Mutation", "createCheckoutSession"))
		for _, f := range s.Types[types["Mutation"]].Fields {
			require.Len(t, f.Args, 1, f.Name)
			require.Equal(t, "input", f.Args[0].Name)
		}
		in := map[string]string{}
		for _, f := range s.Types[types["CreateCheckoutSessionInput"]].InputFields {
			in[f.Name] = f.Type.String()
		}
		require.Equal(t, "String!", in["idempotencyKey"])
		require.Equal(t, "CheckoutSession", fieldType("CreateCheckoutSessionPayload", "checkoutSession"))
		require.Equal(t, "Boolean!", fieldType("CreateCheckoutSessionPayload", "replayed"))
		require.Equal(t, "[UserError!]!", fieldType("CreateCheckoutSessionPayload", "userErrors"))
		require.Equal(t, "String!", fieldType("UserError", "code"))
		require.Equal(t, "[String!]", fieldType("UserError", "field"))
		require.Equal(t, "String!", fieldType("UserError", "message"))
	})
}
