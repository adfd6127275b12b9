package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// persistedQueries is automatic persisted queries (gqlgen's extension:
// clients may send a query's hash alone once the query is known) that
// keeps only documents that passed validation. gqlgen's extension stores a
// document as soon as its hash checks out, before it is parsed: a
// document that fails validation would then be validated again for every
// 200-byte request naming its hash. Here a document is stored once its
// operation context is made (it parsed, validated and passed the
// document limits), and the hash of one that failed is remembered, so
// that a request naming it is refused at once with validation_failed,
// without the document being read again. Both stores are per instance and
// bounded.
type persistedQueries struct {
	apq     extension.AutomaticPersistedQuery
	queries *boundedCache[string]   // hash → a document that validated
	refused *boundedCache[struct{}] // hashes of documents that did not
}

// refusedHashBytes bounds the memory of refused hashes: about ten
// thousand of them.
const refusedHashBytes = 1 << 20

func newPersistedQueries(maxBytes int) persistedQueries {
	queries := newBoundedCache(maxBytes, func(h, q string) int { return len(h) + len(q) })
	return persistedQueries{
		apq:     extension.AutomaticPersistedQuery{Cache: deferredAdds{queries}},
		queries: queries,
		refused: newBoundedCache(refusedHashBytes, func(h string, _ struct{}) int { return len(h) + 64 }),
	}
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = persistedQueries{}

func (persistedQueries) ExtensionName() string { return "AutomaticPersistedQuery" }

func (p persistedQueries) Validate(s graphql.ExecutableSchema) error { return p.apq.Validate(s) }

// MutateOperationParameters fills in the document of a known hash, as
// gqlgen's extension does, unless the hash is of a document that failed:
// then it refuses, whether the document came with it or not.
func (p persistedQueries) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if hash := persistedHash(params); hash != "" {
		if _, bad := p.refused.Get(ctx, hash); bad && (params.Query == "" || queryHash(params.Query) == hash) {
			err := gqlerror.Errorf("This persisted query failed validation; correct the document and send it again with its new hash.")
			errcode.Set(err, errcode.ValidationFailed)
			return err
		}
	}
	return p.apq.MutateOperationParameters(ctx, params)
}

// MutateOperationContext stores a document sent with its hash once it has
// parsed and validated.
func (p persistedQueries) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if s := extension.GetApqStats(ctx); s != nil && s.SentQuery {
		p.queries.Add(ctx, s.Hash, oc.RawQuery)
	}
	return nil
}

// InterceptResponse remembers the hash of a document sent with it that
// did not make an operation context: it did not parse, did not validate
// or was over the document limits, all of which depend on the document
// alone. (Its variables, checked later, may differ from one request to
// the next, so a document whose variables failed is not refused.)
func (p persistedQueries) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if !graphql.HasOperationContext(ctx) {
		return resp
	}
	if oc := graphql.GetOperationContext(ctx); oc.Doc == nil && resp != nil && documentRefused(resp.Errors) {
		if s := extension.GetApqStats(ctx); s != nil && s.SentQuery {
			p.refused.Add(ctx, s.Hash, struct{}{})
		}
	}
	return resp
}

// documentRefused reports whether errs (as presented) refuse a document
// for what it is: validation_failed, document_too_large.
func documentRefused(errs gqlerror.List) bool {
	for _, e := range errs {
		switch e.Extensions["code"] {
		case string(apperr.ValidationFailed), string(apperr.DocumentTooLarge):
		default:
			return false
		}
	}
	return len(errs) > 0
}

// deferredAdds is the store as gqlgen's extension sees it: it reads
// stored documents, but what it adds is left to MutateOperationContext.
type deferredAdds struct{ *boundedCache[string] }

// Add implements graphql.Cache: it does nothing.
func (deferredAdds) Add(context.Context, string, string) {}

// persistedHash is the sha256Hash of a request's persistedQuery
// extension, or "".
func persistedHash(params *graphql.RawParams) string {
	pq, _ := params.Extensions["persistedQuery"].(map[string]any)
	h, _ := pq["sha256Hash"].(string)
	return h
}

func queryHash(q string) string {
	sum := sha256.Sum256([]byte(q))
	return hex.EncodeToString(sum[:])
}
