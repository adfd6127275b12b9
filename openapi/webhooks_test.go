package openapi

import (
	"sort"
	"testing"

	"github.com/boxoffice/boxoffice/webhook"
	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/stretchr/testify/require"
)

// TestWebhooks checks that the document describes every event type the
// webhook package sends, each with the headers verify reads and signs.
func TestWebhooks(t *testing.T) {
	doc := load(t)
	types := append([]string(nil), webhook.Types...)
	sort.Strings(types)
	var got []string
	for name := range doc.Webhooks {
		got = append(got, name)
	}
	sort.Strings(got)
	require.Equal(t, types, got, "webhooks: one entry per event type")
	require.Equal(t, types, enumStrings(t, doc.Components.Schemas["WebhookEventType"].Value))

	headers := []string{verify.HeaderTimestamp, verify.HeaderSignature, verify.HeaderEventID, verify.HeaderEventType,
		verify.HeaderStandardID, verify.HeaderStandardTimestamp, verify.HeaderStandardSignature}
	for name, item := range doc.Webhooks {
		require.Len(t, item.Operations(), 1, name)
		op := item.Post
		require.NotNil(t, op, "%s is a POST", name)
		require.NotEmpty(t, op.OperationID, name)
		require.Equal(t, []string{"Webhooks"}, op.Tags, name)
		for _, h := range headers {
			p := op.Parameters.GetByInAndName("header", h)
			require.NotNil(t, p, "%s: header %s", name, h)
			require.True(t, p.Required, "%s: header %s is always sent", name, h)
		}
		require.Len(t, op.Parameters, len(headers), name)
		body := op.RequestBody.Value.Content.Get("application/json").Schema.Value
		// The body's type names the event: directly, or in an allOf branch.
		var consts []any
		if p := body.Properties["type"]; p != nil {
			consts = append(consts, p.Value.Const)
		}
		for _, sub := range body.AllOf {
			if p := sub.Value.Properties["type"]; p != nil && p.Value.Const != nil {
				consts = append(consts, p.Value.Const)
			}
		}
		require.Equal(t, []any{name}, consts, "%s: the body's type", name)
		require.NotNil(t, op.Responses.Status(200), name)
	}
}
