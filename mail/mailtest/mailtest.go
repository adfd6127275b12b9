// Package mailtest runs a real SMTP server (go-smtp) on a loopback port of
// the test process, for the tests of everything that sends mail: it keeps
// what it accepts, and refuses or stalls as a test tells it, now or later.
package mailtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// Server is a real SMTP server (go-smtp) on a loopback port of the
// test process. It keeps what it accepts, and answers as a test tells it.
type Server struct {
	Addr string // 127.0.0.1:port

	// Set before the first connection.
	refuse map[string]*smtp.SMTPError // by command: "mail", "rcpt", "data"
	stall  chan struct{}              // non-nil: MAIL FROM waits until it is closed
	user   string                     // non-empty: AUTH PLAIN as user/pass is required
	pass   string

	mu       sync.Mutex
	next     map[string][]*smtp.SMTPError // by command: answers of the next sessions, first first (RefuseNext)
	received []Received
	auths    int // AUTH attempts
}

// Received is one message the server accepted.
type Received struct {
	From string
	To   []string
	Data []byte
	TLS  bool // the session was encrypted
}

// Option configures a test server before it starts.
type Option func(*smtp.Server, *Server)

// WithTLS gives the server a certificate: it offers STARTTLS.
func WithTLS(cert tls.Certificate) Option {
	return func(s *smtp.Server, _ *Server) { s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}} }
}

// WithAuth requires AUTH PLAIN as user/pass before MAIL FROM.
func WithAuth(user, pass string) Option {
	return func(_ *smtp.Server, b *Server) { b.user, b.pass = user, pass }
}

// WithRefusal answers command ("mail", "rcpt" or "data") with code.
func WithRefusal(command string, code int, enhanced smtp.EnhancedCode, msg string) Option {
	return func(_ *smtp.Server, b *Server) {
		if b.refuse == nil {
			b.refuse = map[string]*smtp.SMTPError{}
		}
		b.refuse[command] = &smtp.SMTPError{Code: code, EnhancedCode: enhanced, Message: msg}
	}
}

// WithStall makes MAIL FROM wait until the test ends.
func WithStall() Option {
	return func(_ *smtp.Server, b *Server) { b.stall = make(chan struct{}) }
}

// Start starts a server on 127.0.0.1:0, stopped when the test ends.
// implicitTLS serves TLS from the first byte (smtps).
func Start(t testing.TB, implicitTLS bool, opts ...Option) *Server {
	t.Helper()
	b := &Server{}
	s := smtp.NewServer(b)
	s.Domain = "mail.example"
	s.AllowInsecureAuth = true // AUTH on a plain loopback connection
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	s.ErrorLog = log.New(io.Discard, "", 0)
	for _, o := range opts {
		o(s, b)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if implicitTLS {
		ln = tls.NewListener(ln, s.TLSConfig)
	}
	b.Addr = ln.Addr().String()
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	if b.stall != nil {
		t.Cleanup(func() { close(b.stall) }) // runs first: stalled sessions end
	}
	return b
}

// port is the server's port, for a URL.
func (b *Server) Port() string {
	_, p, _ := net.SplitHostPort(b.Addr)
	return p
}

// messages returns what the server accepted so far.
func (b *Server) Messages() []Received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Received(nil), b.received...)
}

func (b *Server) AuthAttempts() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.auths
}

// dialer reaches this server whatever address is dialled: a URL may then
// name a host that is not loopback.
func (b *Server) Dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, b.Addr)
	}
}

// RefuseNext makes the next n sessions' command ("mail", "rcpt" or
// "data") answer code, then answers as before: a 4xx a few times, then
// delivery, say.
func (b *Server) RefuseNext(command string, code int, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == nil {
		b.next = map[string][]*smtp.SMTPError{}
	}
	enhanced := smtp.EnhancedCode{code / 100, 0, 0}
	for range n {
		b.next[command] = append(b.next[command], &smtp.SMTPError{Code: code, EnhancedCode: enhanced, Message: "refused by the test"})
	}
}

// refusal is what command answers now: a RefuseNext answer, else a
// WithRefusal one, else nil (accept).
func (b *Server) refusal(command string) *smtp.SMTPError {
	b.mu.Lock()
	defer b.mu.Unlock()
	if q := b.next[command]; len(q) > 0 {
		b.next[command] = q[1:]
		return q[0]
	}
	return b.refuse[command]
}

// URL is an SMTP_URL of this server (loopback, so no TLS).
func (b *Server) URL() string { return "smtp://" + b.Addr }

// NewSession implements smtp.Backend.
func (b *Server) NewSession(c *smtp.Conn) (smtp.Session, error) {
	_, isTLS := c.TLSConnectionState()
	return &session{b: b, conn: c, tls: isTLS}, nil
}

type session struct {
	b      *Server
	conn   *smtp.Conn
	tls    bool
	authed bool
	msg    Received
}

func (s *session) AuthMechanisms() []string {
	if s.b.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		s.b.mu.Lock()
		s.b.auths++
		s.b.mu.Unlock()
		if user != s.b.user || pass != s.b.pass {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.b.stall != nil {
		<-s.b.stall
		return errors.New("stalled")
	}
	if s.b.user != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	if e := s.b.refusal("mail"); e != nil {
		return e
	}
	_, s.tls = s.conn.TLSConnectionState() // after STARTTLS
	s.msg = Received{From: from, TLS: s.tls}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if e := s.b.refusal("rcpt"); e != nil {
		return e
	}
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if e := s.b.refusal("data"); e != nil {
		return e
	}
	s.msg.Data = data
	s.b.mu.Lock()
	s.b.received = append(s.b.received, s.msg)
	s.b.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.msg = Received{} }
func (s *session) Logout() error { return nil }

// CA is a certificate authority of the test and a server certificate
// it signed for mail.example and 127.0.0.1.
type CA struct {
	Roots *x509.CertPool
	Cert  tls.Certificate
}

var (
	caOnce sync.Once
	ca     CA
)

// MustCA returns the test's certificate authority, made once per process.
func MustCA(t testing.TB) CA {
	t.Helper()
	caOnce.Do(func() {
		key := func() *ecdsa.PrivateKey {
			k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			require.NoError(t, err)
			return k
		}
		caKey, srvKey := key(), key()
		now := time.Now()
		caTmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Boxoffice test CA"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		}
		caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
		require.NoError(t, err)
		caCert, err := x509.ParseCertificate(caDER)
		require.NoError(t, err)
		srvTmpl := &x509.Certificate{
			SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "mail.example"},
			DNSNames: []string{"mail.example"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
		require.NoError(t, err)
		ca.Roots = x509.NewCertPool()
		ca.Roots.AddCert(caCert)
		ca.Cert = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	})
	require.NotNil(t, ca.Roots, "the test CA was made")
	return ca
}
