package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
)

// DocumentLimits bound a GraphQL document before it is parsed or
// validated. Parsing and validation cost more than linear time on some
// shapes (validation compares every pair of fields of a selection; a
// fragment spread many times is walked each time), so a document is first
// read once, token by token, and refused when it is bigger than any real
// dashboard query. Zero fields take DefaultDocumentLimits' values.
type DocumentLimits struct {
	// Bytes bounds the document's text.
	Bytes int
	// Tokens bounds its lexical tokens (comments and commas excluded).
	Tokens int
	// Fields bounds the field selections with every fragment spread
	// expanded where it is spread: what validation and execution walk.
	Fields int
	// Aliases bounds the aliased fields written in the document.
	Aliases int
	// Fragments bounds fragment definitions.
	Fragments int
	// Spreads bounds the fragment spreads written in the document.
	Spreads int
	// Depth bounds the nesting of selection sets as written.
	Depth int
}

// DefaultDocumentLimits are generous for dashboards: the nested catalog
// query of the benchmark is ~60 tokens and 40 fields.
func DefaultDocumentLimits() DocumentLimits {
	return DocumentLimits{Bytes: 64 << 10, Tokens: 10_000, Fields: 2_000, Aliases: 500, Fragments: 200, Spreads: 1_000, Depth: 32}
}

func (l DocumentLimits) withDefaults() DocumentLimits {
	d := DefaultDocumentLimits()
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return DocumentLimits{
		Bytes: pick(l.Bytes, d.Bytes), Tokens: pick(l.Tokens, d.Tokens), Fields: pick(l.Fields, d.Fields),
		Aliases: pick(l.Aliases, d.Aliases), Fragments: pick(l.Fragments, d.Fragments),
		Spreads: pick(l.Spreads, d.Spreads), Depth: pick(l.Depth, d.Depth),
	}
}

func init() {
	// gqlgen answers operation errors of a protocol kind with a 4xx.
	errcode.RegisterErrorType(string(apperr.DocumentTooLarge), errcode.KindProtocol)
}

// documentGuard is the extension that applies DocumentLimits. It runs as an
// operation parameter mutator, after automatic persisted queries have
// filled in the text and before gqlgen parses it.
type documentGuard struct{ limits DocumentLimits }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentGuard{}

func (documentGuard) ExtensionName() string                   { return "DocumentLimits" }
func (documentGuard) Validate(graphql.ExecutableSchema) error { return nil }

func (g documentGuard) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if err := g.limits.Check(p.Query); err != nil {
		return &gqlerror.Error{Message: err.Message, Err: err,
			Extensions: map[string]any{"code": string(apperr.DocumentTooLarge)}}
	}
	return nil
}

// Check reads query once and returns document_too_large naming the first
// limit it exceeds, or nil. Its cost is linear in the text and it holds
// memory linear in the number of fragments only.
func (l DocumentLimits) Check(query string) *apperr.Error {
	l = l.withDefaults()
	refuse := func(what string, limit int) *apperr.Error {
		return apperr.New(apperr.DocumentTooLarge,
			"The GraphQL document has more %s than the limit of %d; split the query or ask for fewer fields.", what, limit)
	}
	if len(query) > l.Bytes {
		return refuse("bytes", l.Bytes)
	}
	c := docCounter{frags: map[string]int{}}
	lex := lexer.New(&ast.Source{Input: query})
	var prev lexer.Token
	for tokens := 0; ; tokens++ {
		tok, err := lex.ReadToken()
		if err != nil {
			return nil // a syntax error: the parser reports it, cheaply
		}
		if tok.Kind == lexer.EOF {
			break
		}
		if tokens >= l.Tokens {
			return refuse("tokens", l.Tokens)
		}
		c.read(prev, tok)
		prev = tok
		switch {
		case c.depth > l.Depth:
			return refuse("levels of nesting", l.Depth)
		case c.aliases > l.Aliases:
			return refuse("aliases", l.Aliases)
		case c.fragDefs > l.Fragments:
			return refuse("fragment definitions", l.Fragments)
		case c.spreadCount > l.Spreads:
			return refuse("fragment spreads", l.Spreads)
		}
	}
	if n := c.expandedFields(l.Fields); n > l.Fields {
		return refuse("fields (fragments counted where they are spread)", l.Fields)
	}
	return nil
}

// docDef is one definition of a document: an operation or a fragment,
// with the fields written in it and the fragments it spreads.
type docDef struct {
	fragment bool
	fields   int
	spreads  []string
}

// docCounter follows the tokens of a document with a few bits of state:
// enough to tell a field from an argument, an alias, a directive or a
// type condition.
type docCounter struct {
	defs        []docDef
	frags       map[string]int // fragment name → index in defs
	depth       int            // selection-set nesting
	valueDepth  int            // nesting of parentheses and of braces/brackets inside them
	aliases     int
	spreadCount int
	fragDefs    int
	pendingDef  bool // a definition has begun; its selection set has not
	afterSpread bool // the previous token was "..."
	afterOn     bool // the previous token was "on" of a type condition
}

func (c *docCounter) read(prev, tok lexer.Token) {
	if c.valueDepth > 0 { // inside arguments, variable definitions or values
		switch tok.Kind {
		case lexer.ParenL, lexer.BraceL, lexer.BracketL:
			c.valueDepth++
		case lexer.ParenR, lexer.BraceR, lexer.BracketR:
			c.valueDepth--
		}
		return
	}
	switch tok.Kind {
	case lexer.ParenL:
		c.valueDepth = 1
	case lexer.BraceL:
		if c.depth == 0 {
			if !c.pendingDef {
				c.defs = append(c.defs, docDef{}) // a shorthand query
			}
			c.pendingDef = false
		}
		c.depth++
	case lexer.BraceR:
		c.depth--
	case lexer.Spread:
		c.afterSpread = true
		return
	case lexer.Name:
		switch {
		case c.depth == 0:
			c.topLevelName(prev, tok)
		case prev.Kind == lexer.At:
			// a directive's name
		case c.afterSpread && tok.Value == "on":
			c.afterOn = true
			c.afterSpread = false
			return
		case c.afterSpread:
			c.spreadCount++
			c.current().spreads = append(c.current().spreads, tok.Value)
		case c.afterOn:
			// the type of an inline fragment
		default:
			c.current().fields++
		}
	case lexer.Colon:
		if c.depth > 0 {
			// "alias: field": the alias was counted as a field; the field
			// name that follows will be counted again.
			c.aliases++
			c.current().fields--
		}
	}
	c.afterSpread, c.afterOn = false, false
}

// topLevelName notes the start of a definition and a fragment's name.
func (c *docCounter) topLevelName(prev, tok lexer.Token) {
	switch {
	case c.pendingDef:
		if prev.Kind == lexer.Name && prev.Value == "fragment" && len(c.defs) > 0 && c.defs[len(c.defs)-1].fragment {
			c.frags[tok.Value] = len(c.defs) - 1
		}
	case tok.Value == "fragment":
		c.defs = append(c.defs, docDef{fragment: true})
		c.fragDefs++
		c.pendingDef = true
	case tok.Value == "query" || tok.Value == "mutation" || tok.Value == "subscription":
		c.defs = append(c.defs, docDef{})
		c.pendingDef = true
	}
}

func (c *docCounter) current() *docDef {
	if len(c.defs) == 0 {
		c.defs = append(c.defs, docDef{})
	}
	return &c.defs[len(c.defs)-1]
}

// expandedFields counts the fields of every operation with each spread
// fragment counted wherever it is spread, stopping once past limit (so a
// chain of fragments that each spread the next twice costs no more than
// limit steps). Cycles count once; validation refuses them.
func (c *docCounter) expandedFields(limit int) int {
	memo := make(map[int]int, len(c.frags))
	const visiting = -1
	var size func(i int) int
	size = func(i int) int {
		if v, ok := memo[i]; ok {
			if v == visiting {
				return 0
			}
			return v
		}
		memo[i] = visiting
		n := c.defs[i].fields
		for _, name := range c.defs[i].spreads {
			if j, ok := c.frags[name]; ok {
				n += size(j)
			}
			if n > limit {
				break
			}
		}
		n = min(n, limit+1)
		memo[i] = n
		return n
	}
	total := 0
	for i := range c.defs {
		if !c.defs[i].fragment {
			total += size(i)
		}
		if total > limit {
			return total
		}
	}
	// Fragments validation walks even when no operation spreads them.
	for _, i := range c.frags {
		total += size(i)
		if total > limit {
			return total
		}
	}
	return total
}

// String describes the limits, for logs and documentation.
func (l DocumentLimits) String() string {
	l = l.withDefaults()
	return fmt.Sprintf("%d bytes, %d tokens, %d fields, %d aliases, %d fragments, %d spreads, depth %d",
		l.Bytes, l.Tokens, l.Fields, l.Aliases, l.Fragments, l.Spreads, l.Depth)
}
