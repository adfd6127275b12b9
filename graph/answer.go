package graph

import (
	"context"
	"maps"

	"github.com/99designs/gqlgen/graphql"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// MaxAnswerBytes bounds the data of one answer: a query's or a mutation's
// over HTTP, each result of a subscription. The nested catalog query of
// the benchmark answers 90 KB for 50 events; complexity bounds the fields
// of an answer, not the length of their text.
const MaxAnswerBytes = 4 << 20

// answerLimits is the extension that bounds every answer, over HTTP and
// over WebSocket: at most MaxErrors errors, and one more saying the rest
// were left out; data of at most MaxAnswerBytes, or none and an error
// saying so. A query's answer is cut while it is written (answerBuffer),
// so it is never held whole either.
type answerLimits struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = answerLimits{}

func (answerLimits) ExtensionName() string                   { return "AnswerLimits" }
func (answerLimits) Validate(graphql.ExecutableSchema) error { return nil }

type answerKey struct{}

// answerLimit is the bound of one answer being written.
type answerLimit struct {
	max      int
	exceeded bool
}

func answerLimitOf(ctx context.Context) *answerLimit {
	l, _ := ctx.Value(answerKey{}).(*answerLimit)
	return l
}

func (answerLimits) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	limit := &answerLimit{max: MaxAnswerBytes}
	resp := next(context.WithValue(ctx, answerKey{}, limit))
	if resp == nil {
		return nil
	}
	if limit.exceeded || len(resp.Data) > MaxAnswerBytes {
		ae := apperr.New(apperr.DocumentTooLarge,
			"The answer would be larger than %d MiB; ask for fewer fields or smaller pages.", MaxAnswerBytes>>20)
		resp.Data = nil
		resp.Errors = append(resp.Errors[:0:0], &gqlerror.Error{Message: ae.Message, Extensions: extensions(ae)})
	}
	resp.Errors = capErrors(resp.Errors)
	return resp
}

// capErrors keeps the first MaxErrors of errs and one more, with the code
// of the first left out, saying that the rest were left out.
func capErrors(errs gqlerror.List) gqlerror.List {
	if len(errs) <= MaxErrors {
		return errs
	}
	if errs[MaxErrors].Message == omittedErrors { // already capped, in validation
		return errs[:MaxErrors+1]
	}
	ext := maps.Clone(errs[MaxErrors].Extensions)
	return append(errs[:MaxErrors:MaxErrors], &gqlerror.Error{Message: omittedErrors, Extensions: ext})
}
