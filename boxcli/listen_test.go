package boxcli

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
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
		l.err = Run(ctx, append([]string{"boxoffice", "listen", "--url", server}, args...), l.out, l.errs)
	}()
	t.Cleanup(l.stop)
	return l
}

// stop ends the listener as Ctrl-C does and waits for it.
func (l *listening) stop() {
	l.cancel()
	<-l.done
}

// listenWait is the longest a wait for the listener takes on a quiet
// machine; the waits give up only at testwait's deadline for it, minutes
// away: an exit takes a moment alone, but ErrRevokedKeyEndsStream once
// needed several times the earlier bound beside another whole suite on a
// loaded machine (docs/benchmarks.md has the run).
const listenWait = 30 * time.Second

// exited waits for the listener to end by itself and returns its error.
func (l *listening) exited(t testing.TB) error {
	t.Helper()
	select {
	case <-l.done:
		return l.err
	case <-testwait.After(t, listenWait):
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

func TestListen(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := serve(t, db, fastJobs, func(c *server.Config) { c.WebhookStreams.PerApp = 2 })
		ctx := context.Background()

		t.Run("ForwardsSignedEvents", func(t *testing.T) {
			tb.streamsClosed(t)
			rc := newReceiver(t)
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
			down := newReceiver(t)
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
			app := newReceiver(t)
			tb.pointWebhooks(t, app.srv.URL+"/app")
			t.Cleanup(func() { tb.pointWebhooks(t, "") })
			// The job runner starts here: its first fetches on SQLite can take
			// as long as the listener's own waits on a loaded machine.
			tb.startJobs(t)
			// No listener is connected: the event still reaches the app's URL.
			ref := tb.emitFree(t)
			var d delivery
			waitFor(t, listenWait, "the app's delivery of "+ref, func() bool {
				for _, got := range app.deliveries() {
					if strings.Contains(string(got.Body), ref) {
						d = got
						return true
					}
				}
				return false
			})
			require.NoError(t, verify.Verify(tb.demo.App.WebhookSecret, d.Header, d.Body))

			rc := newReceiver(t)
			l := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", rc.srv.URL)
			l.ready(t)
			id := tb.emitTest(t, store.EnvTest)
			l.line(t, id)
			waitFor(t, listenWait, "the app's own delivery too", func() bool {
				return tb.eventOf(t, id).Status == store.WebhookDelivered
			})
		})

		t.Run("ErrRefused", func(t *testing.T) {
			tb.streamsClosed(t)
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
			a := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", "http://127.0.0.1:1/hooks")
			b := listenTo(t, tb.srv.URL, "--api-key", tb.liveKey, "--forward-to", "http://127.0.0.1:1/hooks")
			a.ready(t)
			b.ready(t)
			l := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", "http://127.0.0.1:1/hooks")
			require.ErrorContains(t, l.exited(t), "rate_limit_exceeded")

			a.stop()
			waitFor(t, 10*time.Second, "the stopped listener's place to free", func() bool {
				return tb.m.Streams.Open(tb.demo.App.App.ID) == 1
			})
			c := listenTo(t, tb.srv.URL, "--api-key", tb.testKey, "--forward-to", "http://127.0.0.1:1/hooks")
			c.ready(t)
			b.stop()
			c.stop()
		})

		t.Run("ErrRevokedKeyEndsStream", func(t *testing.T) {
			other, err := tb.m.Provision.CreateApp(ctx, provision.AppInput{AccountID: tb.demo.App.App.AccountID, Name: "Revoked",
				WebhookURL: "https://hooks.partner.example/in"})
			require.NoError(t, err)
			rc := newReceiver(t)
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
			rc := newReceiver(t)
			l := listenTo(t, "http://"+ln.Addr().String(), "--api-key", tb.testKey, "--forward-to", rc.srv.URL)
			l.ready(t)
			time.Sleep(time.Second) // well past both timeouts
			id := tb.emitTest(t, store.EnvTest)
			require.Contains(t, l.line(t, id), "-> 204 No Content")
			require.Empty(t, l.errs.String(), "the stream was never lost")
		})
	})
}
