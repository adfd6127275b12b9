// Package listen is the laptop end of `boxoffice listen`: it follows an
// app's webhook event stream on a Boxoffice server, authenticated by the
// app's own API key, and forwards each event to a URL on the developer's
// machine with the headers and signatures of a real delivery, printing one
// line per event with the local answer. Nothing needs a public URL, and the
// app's own webhook deliveries are not affected.
package listen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/webhook"
)

// StreamPath is the server's event stream, relative to its base URL.
const StreamPath = "/api/v1/webhook-events/stream"

// Config is what a listener needs.
type Config struct {
	// Server is the Boxoffice base URL, such as http://localhost:8080.
	Server string
	// APIKey is the app's key; its environment's events are streamed.
	APIKey string
	// ForwardTo is the local URL each event is posted to.
	ForwardTo string
	// Types narrows the event types; empty means all.
	Types []string
	// Secret signs forwarded events; empty means a new one for this run.
	Secret string
	// Out gets the banner and one line per event; Errs connection notices.
	Out, Errs io.Writer
	// Stream and Forward are the HTTP clients of the stream and of the
	// forwarded deliveries; nil picks ones with sensible timeouts.
	Stream, Forward *http.Client
	// Now is the clock that signs deliveries (time.Now when nil).
	Now func() time.Time
}

// Refused is a refusal by the server that retrying cannot fix: the key,
// the event types, or the app's stream limit. Run returns it.
type Refused struct {
	Status  int                 `json:"-"` // the HTTP status; 0 when the stream ended with an error message
	Code    string              `json:"code"`
	Message string              `json:"message"`
	Details map[string][]string `json:"details"`
}

func (e *Refused) Error() string {
	msg := "the server refused the stream: " + e.Code + ": " + e.Message
	for _, field := range slices.Sorted(maps.Keys(e.Details)) {
		msg += " " + field + ": " + strings.Join(e.Details[field], "; ")
	}
	return msg
}

// Run follows the stream until ctx ends (then it returns nil) or the
// server refuses it for good (a *Refused). A lost connection is retried
// with back-off, resuming after the last event forwarded, so none is
// missed or forwarded twice.
func Run(ctx context.Context, cfg Config) error {
	l, err := newListener(cfg)
	if err != nil {
		return err
	}
	backoff := time.Second
	for {
		connected, err := l.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var refused *Refused
		if errors.As(err, &refused) {
			return err
		}
		if connected {
			backoff = time.Second
		}
		fmt.Fprintf(l.cfg.Errs, "connection to %s lost (%v); reconnecting in %s\n", l.cfg.Server, err, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

type listener struct {
	cfg      Config
	stream   *url.URL
	lastID   string // the last event forwarded: where a reconnection resumes
	greeted  bool
	idleWait time.Duration
}

func newListener(cfg Config) (*listener, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("--api-key is required: the app's svc_test_… or svc_live_… key")
	}
	if err := checkURL("--forward-to", cfg.ForwardTo); err != nil {
		return nil, err
	}
	if err := checkURL("--url", cfg.Server); err != nil {
		return nil, err
	}
	if cfg.Secret == "" {
		cfg.Secret = webhook.NewSecret()
	} else if !strings.HasPrefix(cfg.Secret, "whsec_") {
		return nil, errors.New("--secret must be a whsec_… secret (one printed by an earlier run)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Errs == nil {
		cfg.Errs = io.Discard
	}
	if cfg.Stream == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = 15 * time.Second
		cfg.Stream = &http.Client{Transport: t} // no overall timeout: the stream is long
	}
	if cfg.Forward == nil {
		cfg.Forward = &http.Client{Timeout: webhook.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // as real deliveries: redirects are not followed
		}}
	}
	stream, err := url.Parse(strings.TrimRight(cfg.Server, "/") + StreamPath)
	if err != nil {
		return nil, err
	}
	if len(cfg.Types) > 0 {
		stream.RawQuery = url.Values{"types": {strings.Join(cfg.Types, ",")}}.Encode()
	}
	// The server sends a comment every 15 s while idle; three missed
	// mean the connection is dead even if TCP has not noticed.
	return &listener{cfg: cfg, stream: stream, idleWait: 45 * time.Second}, nil
}

func checkURL(flag, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q must be an absolute http:// or https:// URL", flag, raw)
	}
	return nil
}

// session holds one connection to the stream. connected reports that the
// server accepted it.
func (l *listener) session(ctx context.Context) (connected bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.stream.String(), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("X-API-Key", l.cfg.APIKey)
	req.Header.Set("Accept", "text/event-stream")
	if l.lastID != "" {
		req.Header.Set("Last-Event-ID", l.lastID)
	}
	res, err := l.cfg.Stream.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return false, refusal(res)
	}
	idle := time.AfterFunc(l.idleWait, func() { cancel(errors.New("no word from the server for a while")) })
	defer idle.Stop()
	r := bufio.NewReader(res.Body)
	var msg message
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				err = cause
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("the server closed the stream")
			}
			return true, err
		}
		idle.Reset(l.idleWait)
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line != "" {
			msg.add(line)
			continue
		}
		if err := l.handle(ctx, msg); err != nil {
			return true, err
		}
		msg = message{}
	}
}

// message is one Server-Sent Event being read.
type message struct {
	id, event string
	data      []string
}

func (m *message) add(line string) {
	if strings.HasPrefix(line, ":") {
		return // a comment: the server's keep-alive
	}
	field, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch field {
	case "id":
		m.id = value
	case "event":
		m.event = value
	case "data":
		m.data = append(m.data, value)
	}
}

func (l *listener) handle(ctx context.Context, m message) error {
	data := strings.Join(m.data, "\n")
	switch {
	case m.event == "ready":
		var ready struct {
			AppID       int64    `json:"app_id"`
			Environment string   `json:"environment"`
			Types       []string `json:"types"`
		}
		_ = json.Unmarshal([]byte(data), &ready)
		if l.greeted {
			fmt.Fprintf(l.cfg.Errs, "reconnected; resuming after %s\n", orStart(l.lastID))
			return nil
		}
		l.greeted = true
		types := "every event type"
		if len(ready.Types) > 0 {
			types = strings.Join(ready.Types, ", ")
		}
		fmt.Fprintf(l.cfg.Out, "Ready: forwarding %s events of app %d (%s) to %s\n", ready.Environment, ready.AppID, types, l.cfg.ForwardTo)
		fmt.Fprintf(l.cfg.Out, "Webhook signing secret: %s (verify with it; pass --secret to keep it across runs)\n", l.cfg.Secret)
	case m.event == "error":
		var body struct {
			Error Refused `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &body); err != nil || body.Error.Code == "" {
			return fmt.Errorf("the server ended the stream: %s", data)
		}
		return &body.Error
	case m.id != "":
		l.forward(ctx, m.id, m.event, []byte(data))
		l.lastID = m.id
	}
	return nil
}

func orStart(id string) string {
	if id == "" {
		return "the start"
	}
	return id
}

// forward posts one event to ForwardTo, signed with the session's secret
// exactly as the service signs real deliveries, and prints one line: the
// time, the event's type and id, and the local answer (or why there was
// none). A failed forward is not retried: the next event goes on.
func (l *listener) forward(ctx context.Context, id, typ string, payload []byte) {
	now := l.cfg.Now()
	outcome := ""
	req, err := webhook.NewDeliveryRequest(ctx, l.cfg.ForwardTo, l.cfg.Secret, id, typ, payload, now)
	if err == nil {
		var res *http.Response
		if res, err = l.cfg.Forward.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
			outcome = fmt.Sprintf("%d %s", res.StatusCode, http.StatusText(res.StatusCode))
		}
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var oe *net.OpError
		if errors.As(err, &oe) {
			err = oe.Err
		}
		outcome = "failed: " + err.Error()
	}
	fmt.Fprintf(l.cfg.Out, "%s  %-16s %s  POST %s -> %s\n", now.UTC().Format(time.RFC3339), typ, id, l.cfg.ForwardTo, outcome)
}

// refusal reads the error body of a refused stream.
func refusal(res *http.Response) error {
	var body struct {
		Error Refused `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err := json.Unmarshal(raw, &body); err != nil || body.Error.Code == "" {
		return fmt.Errorf("the server answered %s", res.Status)
	}
	body.Error.Status = res.StatusCode
	if res.StatusCode >= 500 {
		return fmt.Errorf("the server answered %s: %s", res.Status, body.Error.Message) // worth retrying
	}
	return &body.Error
}
