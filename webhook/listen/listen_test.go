package listen_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/webhook/listen"
	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is an io.Writer tests read while Run writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// received is what the laptop's endpoint got.
type received struct {
	mu     sync.Mutex
	bodies []string
	ok     []bool // whether each verified with the secret
}

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestRunResumesAfterLastEvent(t *testing.T) {
	t.Parallel()
	var (
		mu          sync.Mutex
		connections []string // each connection's request and Last-Event-ID
	)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		connections = append(connections, fmt.Sprintf("%s?%s key=%s last=%s", r.URL.Path, r.URL.RawQuery,
			r.Header.Get("X-API-Key"), r.Header.Get("Last-Event-ID")))
		n := len(connections)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: 2000\nevent: ready\ndata: {\"app_id\":7,\"environment\":\"test\",\"types\":[\"order.paid\",\"webhook.test\"]}\n\n: ping\n\n")
		switch n {
		case 1: // one event, then the connection drops
			fmt.Fprint(w, "id: evt_1\nevent: order.paid\ndata: {\"id\":\"evt_1\",\n")
			fmt.Fprint(w, "data: \"type\":\"order.paid\"}\n\n")
		case 2:
			fmt.Fprint(w, "id: evt_2\nevent: webhook.test\ndata: {\"id\":\"evt_2\"}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	t.Cleanup(server.Close)

	got := &received{}
	laptop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.mu.Lock()
		got.bodies = append(got.bodies, string(body))
		got.ok = append(got.ok, verify.Verify(secret, r.Header, body) == nil && verify.VerifyStandardAt(secret, r.Header, body, time.Now()) == nil)
		got.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(laptop.Close)

	out, errs := &lockedBuffer{}, &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- listen.Run(ctx, listen.Config{Server: server.URL + "/", APIKey: "svc_test_key", ForwardTo: laptop.URL,
			Types: []string{"order.paid", "webhook.test"}, Secret: secret, Out: out, Errs: errs})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "evt_2") {
		require.True(t, time.Now().Before(deadline), "timed out; stdout: %s stderr: %s", out.String(), errs.String())
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	require.NoError(t, <-done, "a cancelled listener ends without an error")

	mu.Lock()
	require.Equal(t, []string{
		listen.StreamPath + "?types=order.paid%2Cwebhook.test key=svc_test_key last=",
		listen.StreamPath + "?types=order.paid%2Cwebhook.test key=svc_test_key last=evt_1",
	}, connections, "the second connection resumes after the last event")
	mu.Unlock()
	got.mu.Lock()
	require.Equal(t, []string{"{\"id\":\"evt_1\",\n\"type\":\"order.paid\"}", `{"id":"evt_2"}`}, got.bodies, "each event once, data lines joined")
	require.Equal(t, []bool{true, true}, got.ok)
	got.mu.Unlock()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 4, out.String())
	require.Equal(t, "Ready: forwarding test events of app 7 (order.paid, webhook.test) to "+laptop.URL, lines[0])
	require.Equal(t, "Webhook signing secret: "+secret+" (verify with it; pass --secret to keep it across runs)", lines[1])
	require.Regexp(t, `  order\.paid {7}evt_1  POST `+laptop.URL+` -> 202 Accepted$`, lines[2])
	require.Regexp(t, `  webhook\.test {5}evt_2  POST `+laptop.URL+` -> 202 Accepted$`, lines[3])
	require.Contains(t, errs.String(), "the server closed the stream); reconnecting in 1s\n")
	require.Contains(t, errs.String(), "reconnected; resuming after evt_1\n")
}

func TestRunRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		serve   func(w http.ResponseWriter)
		wantErr string
	}{
		{"ErrRefusedStatus", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"error":{"code":"validation_failed","message":"The request payload failed validation.","details":{"types":["\"x\" is not an event type"]}}}`)
		}, `the server refused the stream: validation_failed: The request payload failed validation. types: "x" is not an event type`},
		{"ErrErrorMessage", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: ready\ndata: {}\n\nevent: error\ndata: {\"error\":{\"code\":\"app_suspended\",\"message\":\"This app is suspended.\"}}\n\n")
		}, `the server refused the stream: app_suspended: This app is suspended.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { tt.serve(w) }))
			t.Cleanup(server.Close)
			err := listen.Run(context.Background(), listen.Config{Server: server.URL, APIKey: "svc_test_key", ForwardTo: "http://127.0.0.1:1/"})
			var refused *listen.Refused
			require.ErrorAs(t, err, &refused)
			require.EqualError(t, err, tt.wantErr)
		})
	}
	t.Run("ErrConfig", func(t *testing.T) {
		t.Parallel()
		for cfg, want := range map[*listen.Config]string{
			{Server: "http://x", ForwardTo: "http://y"}:                           "--api-key is required",
			{Server: "http://x", APIKey: "k", ForwardTo: "y:3000"}:                `--forward-to "y:3000" must be an absolute http:// or https:// URL`,
			{Server: "x", APIKey: "k", ForwardTo: "http://y"}:                     `--url "x" must be an absolute http:// or https:// URL`,
			{Server: "http://x", APIKey: "k", ForwardTo: "http://y", Secret: "s"}: "--secret must be a whsec_… secret",
		} {
			require.ErrorContains(t, listen.Run(context.Background(), *cfg), want)
		}
	})
}
