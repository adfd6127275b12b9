package main

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/boxcli"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/stretchr/testify/require"
)

// listening is `boxoffice listen` running in-process, as a developer runs
// it on a laptop, against a test server.
type listening struct {
	out, errs *syncBuffer
	cancel    context.CancelFunc
	done      chan struct{}
	err       error
}

// listen starts `boxoffice listen --url SERVER args…`; it stops when the
// test ends, before the server does.
func listenTo(t testing.TB, server string, args ...string) *listening {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listening{out: &syncBuffer{}, errs: &syncBuffer{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.err = boxcli.Run(ctx, append([]string{"boxoffice", "listen", "--url", server}, args...), l.out, l.errs)
	}()
	t.Cleanup(l.stop)
	return l
}

// stop ends the listener as Ctrl-C does and waits for it.
func (l *listening) stop() {
	l.cancel()
	<-l.done
}

// listenWait bounds the waits for the listener. It only ends a stuck test:
// an exit takes a moment alone, but ErrRevokedKeyEndsStream once needed
// more than 10 s in a run beside another whole suite (load 13 on 2 cores).
const listenWait = 30 * time.Second

// exited waits for the listener to end by itself and returns its error.
func (l *listening) exited(t testing.TB) error {
	t.Helper()
	select {
	case <-l.done:
		return l.err
	case <-time.After(listenWait):
		t.Fatalf("listen did not exit; stdout: %s stderr: %s", l.out.String(), l.errs.String())
		return nil
	}
}

var secretLine = regexp.MustCompile(`(?m)^Webhook signing secret: (whsec_\S+) `)

// ready waits for the listener's banner and returns the secret it signs with.
func (l *listening) ready(t testing.TB) string {
	t.Helper()
	waitFor(t, listenWait, "listen to connect", func() bool { return secretLine.MatchString(l.out.String()) })
	return secretLine.FindStringSubmatch(l.out.String())[1]
}

// line waits for the output line of an event and returns it.
func (l *listening) line(t testing.TB, eventID string) string {
	t.Helper()
	var found string
	waitFor(t, listenWait, "the line of "+eventID, func() bool {
		for line := range strings.SplitSeq(l.out.String(), "\n") {
			if strings.Contains(line, eventID) {
				found = line
				return true
			}
		}
		return false
	})
	return found
}

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

func TestListen(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db, fastJobs, func(c *Config) { c.WebhookStreams.PerApp = 2 })
		ctx := context.Background()

		t.Run("ForwardsSignedEvents", func(t *testing.T) {
			tb.streamsClosed(t)
			rc := newReceiver(t, ok)
			hooks := rc.srv.URL + "/hooks"
			l := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", hooks)
			secret := l.ready(t)
			require.Contains(t, l.out.String(), "Ready: forwarding test events of app 1 (every event type) to "+hooks+"\n")

			ref := tb.emitFree(t) // a free sandbox cart: order.paid at once
			d := rc.waitType(t, "order.paid")
			require.NoError(t, verify.Verify(secret, d.Header, d.Body), "signed with the secret listen printed")
			require.NoError(t, verify.VerifyStandardAt(secret, d.Header, d.Body, time.Now()))
			require.ErrorIs(t, verify.Verify(tb.demo.App.WebhookSecret, d.Header, d.Body), verify.ErrSignature,
				"not with the app's own secret, which stays the partner's")
			ev := d.event(t)
			require.Equal(t, ref, ev["data"].(map[string]any)["order"].(map[string]any)["reference"])
			id := ev["id"].(string)
			require.Equal(t, id, d.Header.Get("X-SVC-Event-Id"))
			require.Equal(t, id, d.Header.Get("webhook-id"))
			require.Equal(t, "application/json", d.Header.Get("Content-Type"))
			require.JSONEq(t, tb.eventOf(t, ref).Payload, string(d.Body), "the exact body of a real delivery")

			require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  order\.paid {7}`+id+`  POST `+regexp.QuoteMeta(hooks)+` -> 204 No Content$`, l.line(t, id))

			tb.emitTest(t, store.EnvLive)
			test := tb.emitTest(t, store.EnvTest)
			l.line(t, test)
			require.Len(t, rc.deliveries(), 2, "a test key's listener gets test events only")
			l.stop()
			require.NoError(t, l.err, "Ctrl-C ends listen with status 0")
		})

		t.Run("EventTypesAndLocalFailures", func(t *testing.T) {
			tb.streamsClosed(t)
			down := newReceiver(t, ok)
			downURL := down.srv.URL + "/hooks"
			down.srv.Close() // nothing listens on the laptop's port
			l := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", downURL, "--events", "webhook.test")
			l.ready(t)
			require.Contains(t, l.out.String(), "(webhook.test)")
			tb.emitFree(t)
			id := tb.emitTest(t, store.EnvTest)
			require.Regexp(t, `  webhook\.test {5}`+id+`  POST `+regexp.QuoteMeta(downURL)+` -> failed: .*connection refused$`, l.line(t, id))
			require.NotContains(t, l.out.String(), "order.paid", "--events leaves other types out")
		})

		t.Run("AppDeliveriesUnaffected", func(t *testing.T) {
			tb.streamsClosed(t)
			app := newReceiver(t, ok)
			tb.pointWebhooks(t, app.srv.URL+"/app")
			t.Cleanup(func() { tb.pointWebhooks(t, "") })
			tb.startJobs(t)
			// No listener is connected: the event still reaches the app's URL.
			ref := tb.emitFree(t)
			var d delivery
			waitFor(t, 10*time.Second, "the app's delivery of "+ref, func() bool {
				for _, got := range app.deliveries() {
					if strings.Contains(string(got.Body), ref) {
						d = got
						return true
					}
				}
				return false
			})
			require.NoError(t, verify.Verify(tb.demo.App.WebhookSecret, d.Header, d.Body))

			rc := newReceiver(t, ok)
			l := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", rc.srv.URL)
			l.ready(t)
			id := tb.emitTest(t, store.EnvTest)
			l.line(t, id)
			waitFor(t, 10*time.Second, "the app's own delivery too", func() bool {
				return tb.eventOf(t, id).Status == store.WebhookDelivered
			})
		})

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
			require.Equal(t, map[string]any{"types": []any{`"order.bogus" is not an event type (order.paid, order.completed, order.failed, order.expired, ticket.checked_in, ticket.voided, webhook.test)`}},
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

			for _, args := range [][]string{
				{"--api-key", "svc_test_" + strings.Repeat("a", 32), "--forward-to", "http://127.0.0.1:1/hooks"},
				{"--api-key", tb.testKey, "--forward-to", "http://127.0.0.1:1/hooks", "--events", "order.bogus"},
			} {
				l := listenTo(t, tb.srv.URL, args...)
				err := l.exited(t)
				require.Error(t, err)
				require.NotContains(t, l.errs.String(), "USAGE", "one line, never the help text")
				require.Equal(t, 1, strings.Count(l.errs.String(), "\n"), "one line: %q", l.errs.String())
			}
			l := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", "localhost:3000")
			require.ErrorContains(t, l.exited(t), `--forward-to "localhost:3000" must be an absolute http:// or https:// URL`)
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

			l := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", "http://127.0.0.1:1/hooks")
			require.ErrorContains(t, l.exited(t), "rate_limit_exceeded")

			a.close() // the server notices a closed connection by itself
			waitFor(t, 10*time.Second, "the closed stream's place to free", func() bool {
				return tb.m.Streams.Open(tb.demo.App.App.ID) == 1
			})
			c := tb.openStream(t, tb.testKey, "")
			require.Equal(t, "ready", c.next(t).event)
			b.close()
			c.close()
		})

		t.Run("ErrRevokedKeyEndsStream", func(t *testing.T) {
			other, err := tb.m.Provision.CreateApp(ctx, provision.AppInput{AccountID: tb.demo.App.App.AccountID, Name: "Revoked",
				WebhookURL: "https://hooks.partner.example/in"})
			require.NoError(t, err)
			rc := newReceiver(t, ok)
			l := listenTo(t, tb.srv.URL, "--api-key", other.TestKey, "--forward-to", rc.srv.URL)
			l.ready(t)
			require.NoError(t, tb.m.Provision.RevokeKey(ctx, other.App.ID, store.EnvTest))
			_, err = tb.m.Webhooks.EmitTest(ctx, other.App.ID, store.EnvTest)
			require.NoError(t, err)
			require.ErrorContains(t, l.exited(t), "invalid_api_key")
			require.Empty(t, rc.deliveries(), "nothing is sent after the key is revoked")
		})

		t.Run("OutlivesServerTimeouts", func(t *testing.T) {
			tb.streamsClosed(t)
			// serve's read and write timeouts must not end a stream.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			// The header timeout is serve's: a request the server is slow
			// to read (a loaded machine) must not count as a lost stream.
			srv := &http.Server{Handler: tb.m.Handler(), ReadHeaderTimeout: 5 * time.Second,
				ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond}
			var wg sync.WaitGroup
			wg.Go(func() { _ = srv.Serve(ln) })
			t.Cleanup(func() { srv.Close(); wg.Wait() })
			rc := newReceiver(t, ok)
			l := listenTo(t, "http://"+ln.Addr().String(), "--api-key", tb.testKey, "--forward-to", rc.srv.URL)
			l.ready(t)
			time.Sleep(time.Second) // well past both timeouts
			id := tb.emitTest(t, store.EnvTest)
			require.Contains(t, l.line(t, id), "-> 204 No Content")
			require.Empty(t, l.errs.String(), "the stream was never lost")
		})
	})
}
