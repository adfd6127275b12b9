package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
)

// Types are the event types an app receives.
var Types = []string{OrderPaid, OrderCompleted, OrderFailed, OrderExpired, TicketCheckedIn, TicketVoided,
	RefundCreated, RefundSucceeded, RefundFailed, Test}

// StreamConfig tunes event streams.
type StreamConfig struct {
	// PerApp bounds the streams one app has open on one instance.
	PerApp int
	// Poll is how often a stream reads without being woken: the only way
	// on SQLite, and the safety net for a lost notification on PostgreSQL.
	// Zero picks 250 ms on SQLite and 1 s on PostgreSQL.
	Poll time.Duration
	// Heartbeat is how often an idle stream sends a comment (so proxies
	// and the client know it is alive) and checks its key still works.
	Heartbeat time.Duration
}

// DefaultStreamConfig returns production settings.
func DefaultStreamConfig() StreamConfig {
	return StreamConfig{PerApp: 5, Heartbeat: 15 * time.Second}
}

// Streams serves every event of an app and environment, as it is written
// and whichever instance writes it, to listeners of the app
// (GET /api/v1/webhook-events/stream, used by `boxoffice listen`), as
// Server-Sent Events. A stream only reads, but for noting on each event
// when a listener first got it (the delivery log shows it): deliveries to
// the app's webhook URL go on as before, whether anyone listens or not. Each event is
// followed by its place in the stream, so a listener that reconnects with
// Last-Event-ID misses nothing in between.
type Streams struct {
	db   *store.DB
	auth *auth.Authenticator
	cfg  StreamConfig
	log  *slog.Logger
	// writeError renders a refusal before a stream starts, as the API does.
	writeError func(http.ResponseWriter, *http.Request, error)
	watch      *store.WebhookWatch

	mu      sync.Mutex
	open    map[int64]int
	closing chan struct{}
	closed  sync.Once
}

// NewStreams returns the stream service of db. Streams are woken through
// listener (the process's one), re-check their key with authn while open;
// writeError renders refusals.
func NewStreams(db *store.DB, listener *store.Listener, authn *auth.Authenticator, cfg StreamConfig, log *slog.Logger,
	writeError func(http.ResponseWriter, *http.Request, error)) *Streams {
	if cfg.Poll == 0 {
		cfg.Poll = 250 * time.Millisecond
		if db.Postgres() {
			cfg.Poll = time.Second
		}
	}
	return &Streams{db: db, auth: authn, cfg: cfg, log: log, writeError: writeError,
		watch: store.NewWebhookWatch(db, listener), open: map[int64]int{}, closing: make(chan struct{})}
}

// Close ends every open stream (their listeners reconnect elsewhere, or
// later, with Last-Event-ID) and stops watching for events. Serve calls it
// when the server shuts down, since open streams never go idle by
// themselves.
func (s *Streams) Close() {
	s.closed.Do(func() {
		close(s.closing)
		s.watch.Close()
	})
}

// streamBatch is how many events a stream reads at a time.
const streamBatch = 100

// writeWait bounds one write to a listener, so a stalled one is dropped.
const writeWait = 30 * time.Second

// readyMessage is the first message of a stream.
type readyMessage struct {
	AppID       int64    `json:"app_id"`
	Environment string   `json:"environment"`
	Types       []string `json:"types"`
}

// ServeHTTP opens a stream for the authenticated app (auth.FromContext)
// and environment: query parameter types (comma-separated) narrows the
// event types, header Last-Event-ID resumes after that event. Refusals,
// before the stream starts: unauthorized (no caller), validation_failed
// (a request body, an unknown type, or an event that is not the app's in
// that environment), rate_limit_exceeded (StreamConfig.PerApp streams open).
// The stream itself is a "ready" message, then one message per event (id:
// the event id, event: its type, data: its exact JSON body), comments
// while idle, and an "error" message before it ends because the key
// stopped working.
func (s *Streams) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, err := auth.FromContext(ctx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if r.ContentLength != 0 {
		// A stream lifts the read deadline; a body it never reads would
		// then hold the connection after the stream, unbounded.
		s.writeError(w, r, apperr.Validation(apperr.Details{"body": {"a stream request has no body"}}))
		return
	}
	rc := http.NewResponseController(w)
	// The server's read timeout would otherwise end the stream (and cancel
	// its context) a few seconds in, or even before it starts when the
	// lookups below are slow; its write timeout is moved on before every
	// write.
	_ = rc.SetReadDeadline(time.Time{})
	types, err := parseTypes(r.URL.Query()["types"])
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	after, err := s.start(ctx, p, r.Header.Get("Last-Event-ID"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	release, err := s.admit(p.AppID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer release()
	wake, unsubscribe := s.watch.Subscribe(p.AppID, p.Environment)
	defer unsubscribe()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies must not hold events back
	w.WriteHeader(http.StatusOK)
	sse := &sseWriter{w: w, rc: rc}
	if types == nil {
		types = []string{}
	}
	ready, _ := json.Marshal(readyMessage{AppID: p.AppID, Environment: p.Environment, Types: types})
	sse.retry(2 * time.Second)
	sse.message("", "ready", string(ready))
	if sse.flush() != nil {
		return
	}
	s.follow(ctx, sse, p, r.Header.Get(auth.Header), types, after, wake)
}

// start returns where a stream begins: after the Last-Event-ID event, or
// at the events written from now on.
func (s *Streams) start(ctx context.Context, p *auth.Principal, lastEventID string) (store.StreamCursor, error) {
	if lastEventID == "" {
		return store.WebhookStreamStart(ctx, s.db)
	}
	c, err := store.WebhookEventCursor(ctx, s.db, p.AppID, p.Environment, lastEventID)
	if errors.Is(err, store.ErrNotFound) {
		return c, apperr.Validation(apperr.Details{"Last-Event-ID": {
			fmt.Sprintf("%q is not an event of this app in the %s environment", lastEventID, p.Environment)}})
	}
	return c, err
}

// parseTypes reads the types parameter: comma-separated, repeatable.
func parseTypes(values []string) ([]string, error) {
	var types []string
	d := apperr.Details{}
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimSpace(t)
			switch {
			case t == "":
			case !slices.Contains(Types, t):
				d.Add("types", fmt.Sprintf("%q is not an event type (%s)", t, strings.Join(Types, ", ")))
			case !slices.Contains(types, t):
				types = append(types, t)
			}
		}
	}
	return types, apperr.Validation(d)
}

// Open returns how many streams an app has open on this instance.
func (s *Streams) Open(appID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[appID]
}

// admit counts a stream of an app against StreamConfig.PerApp.
func (s *Streams) admit(appID int64) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[appID] >= s.cfg.PerApp {
		return nil, &apperr.Error{Code: apperr.RateLimitExceeded, RetryAfter: 10, Message: fmt.Sprintf(
			"This app already has %d webhook event streams open, the most allowed; close one and try again.", s.cfg.PerApp)}
	}
	s.open[appID]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.open[appID]--; s.open[appID] == 0 {
			delete(s.open, appID)
		}
	}, nil
}

// follow sends the app's events after cursor until the listener leaves,
// the server closes, or the key stops working.
func (s *Streams) follow(ctx context.Context, sse *sseWriter, p *auth.Principal, key string, types []string,
	after store.StreamCursor, wake <-chan struct{}) {
	read := time.NewTimer(0) // read at once: events may be waiting
	defer read.Stop()
	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	const firstHeldWait = 10 * time.Millisecond
	heldWait := firstHeldWait
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		case <-heartbeat.C:
			if !s.stillAdmitted(ctx, sse, key) {
				return
			}
			sse.comment("ping")
			if sse.flush() != nil {
				return
			}
			continue
		case <-wake:
		case <-read.C:
		}
		for {
			events, held, err := store.WebhookEventsAfter(ctx, s.db, p.AppID, p.Environment, types, after, streamBatch)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("webhook stream: reading events failed; the listener reconnects", "app_id", p.AppID, "error", err)
				}
				return
			}
			if len(events) > 0 && !s.stillAdmitted(ctx, sse, key) {
				return
			}
			ids := make([]string, len(events))
			for i, e := range events {
				sse.message(e.ID, e.Type, e.Payload)
				after = e.Cursor
				ids[i] = e.ID
			}
			if len(events) > 0 {
				if sse.flush() != nil {
					return
				}
				s.markStreamed(ctx, p.AppID, ids)
			}
			if held {
				// Committed events wait for an older transaction: look
				// again soon, then less and less often.
				read.Reset(min(heldWait, s.cfg.Poll))
				heldWait *= 2
				break
			}
			heldWait = firstHeldWait
			if len(events) < streamBatch {
				read.Reset(s.cfg.Poll)
				break
			}
		}
	}
}

// markStreamed records that a listener got the events, for the delivery
// log (an event of an app without a webhook URL went somewhere after all).
// Failing to record it costs the log a line, not the listener an event.
// The events were flushed to the listener, so this is recorded even when
// the listener leaves at once.
func (s *Streams) markStreamed(ctx context.Context, appID int64, ids []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := store.MarkWebhookEventsStreamed(ctx, s.db, ids, time.Now()); err != nil {
		s.log.Warn("webhook stream: recording streamed events failed", "app_id", appID, "error", err)
	}
}

// stillAdmitted checks the stream's key again, so a revoked key, a
// suspended app or a disabled account ends an open stream as it ends
// requests. A refusal is sent as an "error" message before the end.
func (s *Streams) stillAdmitted(ctx context.Context, sse *sseWriter, key string) bool {
	_, err := s.auth.Authenticate(ctx, key)
	if err == nil {
		return true
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": ae.Code, "message": ae.Message}})
		sse.message("", "error", string(body))
		_ = sse.flush()
	}
	return false
}

// sseWriter writes Server-Sent Events. Writes are buffered by the
// ResponseWriter until flush; the first error sticks.
type sseWriter struct {
	w   io.Writer
	rc  *http.ResponseController
	err error
}

func (s *sseWriter) printf(format string, args ...any) {
	if s.err == nil {
		_, s.err = fmt.Fprintf(s.w, format, args...)
	}
}

// arm moves the write deadline on before a write, which may reach the
// connection before flush when the buffer fills.
func (s *sseWriter) arm() {
	if s.err == nil {
		_ = s.rc.SetWriteDeadline(time.Now().Add(writeWait))
	}
}

func (s *sseWriter) retry(d time.Duration) {
	s.arm()
	s.printf("retry: %d\n", d.Milliseconds())
}

func (s *sseWriter) comment(text string) {
	s.arm()
	s.printf(": %s\n\n", text)
}

// message writes one event; data's lines become data fields, which the
// client joins back with newlines.
func (s *sseWriter) message(id, event, data string) {
	s.arm()
	if id != "" {
		s.printf("id: %s\n", id)
	}
	s.printf("event: %s\n", event)
	for line := range strings.SplitSeq(data, "\n") {
		s.printf("data: %s\n", line)
	}
	s.printf("\n")
}

func (s *sseWriter) flush() error {
	s.arm()
	if s.err != nil {
		return s.err
	}
	s.err = s.rc.Flush()
	return s.err
}
