package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"
)

// Default ports of SMTP_URL: submission with STARTTLS, and implicit TLS
// (RFC 8314). A loopback relay on port 25 or 1025 names its port.
const (
	DefaultPort    = 587
	DefaultTLSPort = 465
)

// DefaultCommandTimeout bounds each stage of a send: connecting (the TLS
// handshake included), setting the session up (greeting, EHLO, STARTTLS,
// AUTH), and the message's transaction (MAIL FROM to the end of DATA).
// DefaultSendTimeout bounds the whole send.
const (
	DefaultCommandTimeout = 10 * time.Second
	DefaultSendTimeout    = 30 * time.Second
)

// SMTP sends mail through the server of SMTP_URL, one connection per
// message. It logs nothing: not the body, the recipient nor the password.
type SMTP struct {
	host string
	port int
	// implicitTLS is smtps://: TLS from the first byte. Otherwise STARTTLS
	// is required, except on loopback, where the message never leaves the
	// machine and local relays often hold self-signed certificates.
	implicitTLS bool
	loopback    bool
	user, pass  string

	tls            *tls.Config
	command, total time.Duration
	dial           func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Option tunes an SMTP sender.
type Option func(*SMTP)

// WithTimeouts bounds each stage of a send by command and the whole send
// by total (DefaultCommandTimeout and DefaultSendTimeout otherwise).
func WithTimeouts(command, total time.Duration) Option {
	return func(s *SMTP) { s.command, s.total = command, total }
}

// WithTLSConfig verifies the server with c (its RootCAs: a relay with a
// private certificate authority) instead of the system's roots. The server
// name is SMTP_URL's host unless c names one.
func WithTLSConfig(c *tls.Config) Option {
	return func(s *SMTP) { s.tls = c.Clone() }
}

// WithDialer connects through dial instead of the system's dialer (tests
// reach a server on loopback under another name).
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(s *SMTP) { s.dial = dial }
}

// NewSMTP returns a sender for SMTP_URL: smtp://[user:pass@]host[:port]
// (port 587; STARTTLS required unless host is loopback: localhost,
// 127.0.0.0/8, ::1) or smtps://… (implicit TLS, port 465). A user and
// password are sent with SMTP AUTH (SCRAM when offered, else PLAIN or
// LOGIN), only ever over TLS or loopback. Nothing is dialled until Send.
// Errors: a rawURL that is not such a URL, described without its password.
func NewSMTP(rawURL string, opts ...Option) (*SMTP, error) {
	const form = "smtp://user:pass@host:port or smtps://user:pass@host:port"
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's own error quotes the URL, password and all.
		return nil, fmt.Errorf("SMTP_URL is not a URL of the form %s (percent-encode special characters of the user and password)", form)
	}
	bad := func(why string) error { return fmt.Errorf("SMTP_URL %s: %s (the form is %s)", u.Redacted(), why, form) }
	s := &SMTP{host: u.Hostname(), command: DefaultCommandTimeout, total: DefaultSendTimeout}
	switch u.Scheme {
	case "smtp":
		s.port = DefaultPort
	case "smtps":
		s.port, s.implicitTLS = DefaultTLSPort, true
	default:
		return nil, bad("the scheme is not smtp or smtps")
	}
	if s.host == "" {
		return nil, bad("there is no host")
	}
	if p := u.Port(); p != "" {
		if s.port, err = strconv.Atoi(p); err != nil || s.port < 1 || s.port > 65535 {
			return nil, bad("the port is not between 1 and 65535")
		}
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, bad("it has a path, query or fragment, which mean nothing here")
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
	}
	s.loopback = isLoopback(s.host)
	for _, o := range opts {
		o(s)
	}
	if s.tls == nil {
		s.tls = &tls.Config{}
	}
	if s.tls.ServerName == "" {
		s.tls.ServerName = s.host
	}
	s.tls.MinVersion = max(s.tls.MinVersion, tls.VersionTLS12)
	if s.dial == nil {
		s.dial = (&net.Dialer{}).DialContext
	}
	return s, nil
}

// isLoopback reports whether host names this machine: localhost, or a
// loopback address. Names are not resolved.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// String describes the server without the credentials, for a start-up
// line: "smtp://mail.example:587 (STARTTLS required)".
func (s *SMTP) String() string {
	scheme, how := "smtp", "STARTTLS required"
	switch {
	case s.implicitTLS:
		scheme, how = "smtps", "implicit TLS"
	case s.loopback:
		how = "loopback, without TLS"
	}
	return fmt.Sprintf("%s://%s (%s)", scheme, net.JoinHostPort(s.host, strconv.Itoa(s.port)), how)
}

// Send delivers m to the server. It returns once the server has accepted
// the message (a failure to say goodbye afterwards is not an error: the
// message went), when a step fails, or when ctx ends, whichever is first.
// Errors: see IsPermanent.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := compose(m, now())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.total)
	defer cancel()
	conn := &sendConn{dial: s.dial}
	if s.implicitTLS {
		conn.tls = s.tls
	}
	defer conn.close()
	// go-mail's context only covers dialling; after that only its
	// deadlines bound it. Closing the connection ends any step at once.
	stop := context.AfterFunc(ctx, conn.close)
	defer stop()

	client, err := gomail.NewClient(s.host, s.options(conn.dialContext)...)
	if err != nil {
		return &sendError{step: "connect", err: err}
	}
	session, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return s.failed(ctx, "connect", err)
	}
	if err := s.transact(ctx, session, msg); err != nil {
		return err
	}
	// The server has the message; a failed goodbye changes nothing.
	_ = session.Quit()
	return nil
}

// transact runs the message's transaction on a session that is set up:
// the envelope, then the data, within one command timeout.
func (s *SMTP) transact(ctx context.Context, session *smtp.Client, msg *gomail.Msg) error {
	from, err := msg.GetSender(false)
	if err != nil {
		return &sendError{step: "address", err: err}
	}
	to, err := msg.GetRecipients()
	if err != nil {
		return &sendError{step: "address", err: err}
	}
	if err := session.UpdateDeadline(s.command); err != nil {
		return s.failed(ctx, "MAIL FROM", err)
	}
	if err := session.Mail(from); err != nil {
		return s.failed(ctx, "MAIL FROM", err)
	}
	for _, rcpt := range to {
		if err := session.Rcpt(rcpt); err != nil {
			return s.failed(ctx, "RCPT TO", err)
		}
	}
	w, err := session.Data()
	if err != nil {
		return s.failed(ctx, "DATA", err)
	}
	if _, err := msg.WriteTo(w); err != nil {
		return s.failed(ctx, "DATA", err)
	}
	if err := w.Close(); err != nil {
		return s.failed(ctx, "end of DATA", err)
	}
	return nil
}

// options are the go-mail client options of one send.
func (s *SMTP) options(dial gomail.DialContextFunc) []gomail.Option {
	opts := []gomail.Option{
		gomail.WithPort(s.port), gomail.WithTimeout(s.command), gomail.WithDialContextFunc(dial),
		gomail.WithTLSConfig(s.tls),
	}
	if s.implicitTLS || s.loopback {
		// smtps: the connection is TLS already (dialContext).
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.user != "" {
		// go-mail's PLAIN and LOGIN refuse a connection without TLS
		// unless it is to "localhost", 127.0.0.1 or ::1; on any loopback
		// connection the password stays on this machine.
		plain, login := gomail.SMTPAuthPlain, gomail.SMTPAuthLogin
		if s.loopback && !s.implicitTLS {
			plain, login = gomail.SMTPAuthPlainNoEnc, gomail.SMTPAuthLoginNoEnc
		}
		opts = append(opts, gomail.WithUsername(s.user), gomail.WithPassword(s.pass),
			gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthSCRAMSHA256, gomail.SMTPAuthSCRAMSHA1, plain, login))
	}
	return opts
}

// failed describes err, which ended step: a 5xx reply to a command of
// the message's transaction is permanent (see IsPermanent); a send cut
// short by ctx says so.
func (s *SMTP) failed(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &sendError{step: step, err: fmt.Errorf("no answer within %s: %w", s.total, ctx.Err())}
		}
		return &sendError{step: step, err: ctx.Err()}
	}
	var reply *textproto.Error
	if !errors.As(err, &reply) {
		return &sendError{step: step, err: err}
	}
	// What go-mail said around the reply ("SMTP AUTH failed: "), if anything.
	around, ok := strings.CutSuffix(err.Error(), reply.Error())
	if !ok {
		around = ""
	}
	return &sendError{step: step, permanent: step != "connect" && reply.Code >= 500 && reply.Code < 600,
		err: smtpReply{around: around, reply: reply}}
}

// smtpReply is a server's refusal as the server wrote it, on one line
// (Go's own text quotes it).
type smtpReply struct {
	around string
	reply  *textproto.Error
}

func (r smtpReply) Error() string {
	return fmt.Sprintf("%s%03d %s", r.around, r.reply.Code, strings.Join(strings.Fields(r.reply.Msg), " "))
}

func (r smtpReply) Unwrap() error { return r.reply }

// sendConn is the one connection of a send, dialled by go-mail through
// dialContext, so that close can end it from another goroutine.
type sendConn struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	tls  *tls.Config // implicit TLS: handshake right after dialling

	mu     sync.Mutex
	conn   net.Conn
	closed bool
}

func (c *sendConn) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := c.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if c.tls != nil {
		tc := tls.Client(conn, c.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		conn.Close()
		return nil, net.ErrClosed
	}
	c.conn = conn
	return conn, nil
}

func (c *sendConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		c.conn.Close()
	}
}
