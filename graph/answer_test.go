package graph

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestAnswerLimits: answers over MaxAnswerBytes become one error, cut
// while written when they are written into responseBuffer; answers with
// more than MaxErrors errors keep the first ones.
func TestAnswerLimits(t *testing.T) {
	t.Parallel()
	intercept := func(next graphql.ResponseHandler) *graphql.Response {
		return answerLimits{}.InterceptResponse(context.Background(), next)
	}
	tooLarge := func(t *testing.T, resp *graphql.Response) {
		t.Helper()
		require.Nil(t, resp.Data)
		require.Len(t, resp.Errors, 1)
		require.Equal(t, "document_too_large", resp.Errors[0].Extensions["code"])
		require.Equal(t, "The answer would be larger than 4 MiB; ask for fewer fields or smaller pages.", resp.Errors[0].Message)
	}

	t.Run("OK", func(t *testing.T) {
		resp := intercept(func(ctx context.Context) *graphql.Response {
			buf := responseBuffer(ctx)
			_, _ = buf.WriteString(`{"a":`)
			v := intValue(42)
			v.MarshalGQL(buf)
			_, _ = buf.Write([]byte(`}`))
			return &graphql.Response{Data: buf.Bytes()}
		})
		require.JSONEq(t, `{"a":42}`, string(resp.Data))
		require.Empty(t, resp.Errors)
	})
	t.Run("ErrTooLargeWhileWritten", func(t *testing.T) {
		resp := intercept(func(ctx context.Context) *graphql.Response {
			buf := responseBuffer(ctx)
			mb := strings.Repeat("x", 1<<20)
			for range 10 {
				_, _ = buf.WriteString(mb)
			}
			require.LessOrEqual(t, buf.buf.Len(), MaxAnswerBytes, "nothing is kept past the limit")
			return &graphql.Response{Data: buf.Bytes()}
		})
		tooLarge(t, resp)
	})
	t.Run("ErrTooLargeWritten", func(t *testing.T) {
		// A subscription's result, written into a buffer of its own.
		resp := intercept(func(context.Context) *graphql.Response {
			return &graphql.Response{Data: make([]byte, MaxAnswerBytes+1)}
		})
		tooLarge(t, resp)
	})
	t.Run("ErrorsCapped", func(t *testing.T) {
		resp := intercept(func(context.Context) *graphql.Response {
			var errs gqlerror.List
			for i := range 250 {
				errs = append(errs, &gqlerror.Error{Message: strconv.Itoa(i), Extensions: map[string]any{"code": "event_not_found"}})
			}
			return &graphql.Response{Data: []byte(`{}`), Errors: errs}
		})
		require.Len(t, resp.Errors, MaxErrors+1)
		require.Equal(t, "99", resp.Errors[MaxErrors-1].Message)
		require.Equal(t, omittedErrors, resp.Errors[MaxErrors].Message)
		require.Equal(t, "event_not_found", resp.Errors[MaxErrors].Extensions["code"])
		require.Equal(t, `{}`, string(resp.Data))
	})
}
