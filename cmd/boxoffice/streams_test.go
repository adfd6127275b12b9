package main

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// sseStream is a raw client of the event stream.
type sseStream struct {
	res *http.Response
	r   *bufio.Reader
}

type sseMessage struct{ id, event, data string }

// openStream opens the event stream with key; query and headers are added.
// The stream ends after a minute at most, so a test waiting for a message
// that never comes fails instead of hanging (20 s was too short for what a
// test does while it listens, under a full make test on a loaded machine).
func (tb *testBundle) openStream(t testing.TB, key, query string, headers ...string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, tb.srv.URL+"/api/v1/webhook-events/stream"+query, nil)
	require.NoError(t, err)
	req.Header.Set("X-API-Key", key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close(); cancel() })
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	return &sseStream{res: res, r: bufio.NewReader(res.Body)}
}

// next reads the next message, skipping comments.
func (s *sseStream) next(t testing.TB) sseMessage {
	t.Helper()
	var m sseMessage
	for {
		line, err := s.r.ReadString('\n')
		require.NoError(t, err, "reading the stream")
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && (m.event != "" || m.data != ""):
			return m
		case strings.HasPrefix(line, "id: "):
			m.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			m.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			m.data = strings.TrimPrefix(line, "data: ")
		}
	}
}

func (s *sseStream) close() { s.res.Body.Close() }

// emitTest emits a webhook.test event of the demo app and returns its id.
func (tb *testBundle) emitTest(t testing.TB, env string) string {
	t.Helper()
	// A test event needs a webhook URL (webhook.Service.EmitTest); the
	// demo app has none. No delivery job runs in these tests unless one
	// starts them, and then AppDeliveriesUnaffected points it elsewhere.
	_, err := tb.db.NewUpdate().Model((*store.App)(nil)).Set("webhook_url = ?", "https://hooks.partner.example/in").
		Where("id = ? AND (webhook_url IS NULL OR webhook_url = '')", tb.demo.App.App.ID).Exec(context.Background())
	require.NoError(t, err)
	id, err := tb.m.Webhooks.EmitTest(context.Background(), tb.demo.App.App.ID, env)
	require.NoError(t, err)
	return id
}

// streamsClosed waits until the server has noticed that every stream of
// the demo app is closed, so the next ones count from zero.
func (tb *testBundle) streamsClosed(t testing.TB) {
	t.Helper()
	waitFor(t, 10*time.Second, "the demo app's streams to close", func() bool {
		return tb.m.Streams.Open(tb.demo.App.App.ID) == 0
	})
}

// TestWebhookStreams: the event stream `boxoffice listen` reads (the
// command itself is tested in boxcli): resuming after Last-Event-ID, its
// refusals, and the streams one app may hold open.
func TestWebhookStreams(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, fastJobs, func(c *Config) { c.WebhookStreams.PerApp = 2 })

		t.Run("ResumesAfterLastEventID", func(t *testing.T) {
			tb.streamsClosed(t)
			first, second, third := tb.emitTest(t, store.EnvTest), tb.emitTest(t, store.EnvTest), tb.emitTest(t, store.EnvTest)
			s := tb.openStream(t, tb.testKey, "", "Last-Event-ID", first)
			ready := s.next(t)
			require.Equal(t, "ready", ready.event)
			require.JSONEq(t, `{"app_id": 1, "environment": "test", "types": []}`, ready.data)
			for _, want := range []string{second, third} {
				m := s.next(t)
				require.Equal(t, sseMessage{id: want, event: "webhook.test", data: tb.eventOf(t, want).Payload}, m)
			}
			s.close()

			typed := tb.openStream(t, tb.testKey, "?types=order.paid,order.failed", "Last-Event-ID", first)
			require.JSONEq(t, `{"app_id": 1, "environment": "test", "types": ["order.paid", "order.failed"]}`, typed.next(t).data)
			ref := tb.emitFree(t)
			m := typed.next(t)
			require.Equal(t, "order.paid", m.event, "webhook.test events after the cursor are skipped")
			require.Contains(t, m.data, ref)
			typed.close()
		})

		t.Run("ErrRefused", func(t *testing.T) {
			tb.streamsClosed(t)
			path := "/api/v1/webhook-events/stream"
			res := tb.get(t, path, "")
			require.Equal(t, http.StatusUnauthorized, res.Status)
			require.Equal(t, "missing_api_key", res.errorCode())

			res = tb.get(t, path+"?types=order.paid,order.bogus", tb.testKey)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Equal(t, "validation_failed", res.errorCode())
			require.Equal(t, map[string]any{"types": []any{`"order.bogus" is not an event type (order.paid, order.completed, order.failed, order.expired, ticket.checked_in, ticket.voided, refund.created, refund.succeeded, refund.failed, webhook.test)`}},
				res.Body["error"].(map[string]any)["details"])

			live := tb.emitTest(t, store.EnvLive)
			for _, id := range []string{"evt_nope", live} {
				res = tb.do(t, http.MethodGet, path, tb.testKey, nil, "Last-Event-ID", id)
				require.Equal(t, http.StatusUnprocessableEntity, res.Status, id)
				require.Equal(t, map[string]any{"Last-Event-ID": []any{`"` + id + `" is not an event of this app in the test environment`}},
					res.Body["error"].(map[string]any)["details"])
			}

			res = tb.do(t, http.MethodPost, path, tb.testKey, nil)
			require.Equal(t, http.StatusMethodNotAllowed, res.Status)
		})

		t.Run("ErrTooManyStreams", func(t *testing.T) {
			tb.streamsClosed(t)
			// PerApp is 2 here, and streams of both environments count.
			a, b := tb.openStream(t, tb.testKey, ""), tb.openStream(t, tb.liveKey, "")
			a.next(t)
			b.next(t)
			res := tb.get(t, "/api/v1/webhook-events/stream", tb.testKey)
			require.Equal(t, http.StatusTooManyRequests, res.Status)
			require.Equal(t, "rate_limit_exceeded", res.errorCode())
			require.Equal(t, "This app already has 2 webhook event streams open, the most allowed; close one and try again.", res.errorMessage())
			require.NotEmpty(t, res.Header.Get("Retry-After"))

			a.close() // the server notices a closed connection by itself
			waitFor(t, 10*time.Second, "the closed stream's place to free", func() bool {
				return tb.m.Streams.Open(tb.demo.App.App.ID) == 1
			})
			c := tb.openStream(t, tb.testKey, "")
			require.Equal(t, "ready", c.next(t).event)
			b.close()
			c.close()
		})

	})
}
