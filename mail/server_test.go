package mail_test

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

// smtpServer is a real SMTP server (go-smtp) on a loopback port of the
// test process. It keeps what it accepts, and answers as a test tells it.
type smtpServer struct {
	addr string // 127.0.0.1:port

	// Set before the first connection.
	refuse map[string]*smtp.SMTPError // by command: "mail", "rcpt", "data"
	stall  chan struct{}              // non-nil: MAIL FROM waits until it is closed
	user   string                     // non-empty: AUTH PLAIN as user/pass is required
	pass   string

	mu       sync.Mutex
	received []received
	auths    int // AUTH attempts
}

// received is one message the server accepted.
type received struct {
	From string
	To   []string
	Data []byte
	TLS  bool // the session was encrypted
}

// serverOption configures a test server before it starts.
type serverOption func(*smtp.Server, *smtpServer)

// withTLS gives the server a certificate: it offers STARTTLS.
func withTLS(cert tls.Certificate) serverOption {
	return func(s *smtp.Server, _ *smtpServer) { s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}} }
}

// withAuth requires AUTH PLAIN as user/pass before MAIL FROM.
func withAuth(user, pass string) serverOption {
	return func(_ *smtp.Server, b *smtpServer) { b.user, b.pass = user, pass }
}

// withRefusal answers command ("mail", "rcpt" or "data") with code.
func withRefusal(command string, code int, enhanced smtp.EnhancedCode, msg string) serverOption {
	return func(_ *smtp.Server, b *smtpServer) {
		if b.refuse == nil {
			b.refuse = map[string]*smtp.SMTPError{}
		}
		b.refuse[command] = &smtp.SMTPError{Code: code, EnhancedCode: enhanced, Message: msg}
	}
}

// withStall makes MAIL FROM wait until the test ends.
func withStall() serverOption {
	return func(_ *smtp.Server, b *smtpServer) { b.stall = make(chan struct{}) }
}

// startSMTP starts a server on 127.0.0.1:0, stopped when the test ends.
// implicitTLS serves TLS from the first byte (smtps).
func startSMTP(t *testing.T, implicitTLS bool, opts ...serverOption) *smtpServer {
	t.Helper()
	b := &smtpServer{}
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
	b.addr = ln.Addr().String()
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	if b.stall != nil {
		t.Cleanup(func() { close(b.stall) }) // runs first: stalled sessions end
	}
	return b
}

// port is the server's port, for a URL.
func (b *smtpServer) port() string {
	_, p, _ := net.SplitHostPort(b.addr)
	return p
}

// messages returns what the server accepted so far.
func (b *smtpServer) messages() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.received...)
}

func (b *smtpServer) authAttempts() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.auths
}

// dialer reaches this server whatever address is dialled: a URL may then
// name a host that is not loopback.
func (b *smtpServer) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, b.addr)
	}
}

// NewSession implements smtp.Backend.
func (b *smtpServer) NewSession(c *smtp.Conn) (smtp.Session, error) {
	_, isTLS := c.TLSConnectionState()
	return &session{b: b, conn: c, tls: isTLS}, nil
}

type session struct {
	b      *smtpServer
	conn   *smtp.Conn
	tls    bool
	authed bool
	msg    received
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
	if e := s.b.refuse["mail"]; e != nil {
		return e
	}
	_, s.tls = s.conn.TLSConnectionState() // after STARTTLS
	s.msg = received{From: from, TLS: s.tls}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if e := s.b.refuse["rcpt"]; e != nil {
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
	if e := s.b.refuse["data"]; e != nil {
		return e
	}
	s.msg.Data = data
	s.b.mu.Lock()
	s.b.received = append(s.b.received, s.msg)
	s.b.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.msg = received{} }
func (s *session) Logout() error { return nil }

// testCA is a certificate authority of the test and a server certificate
// it signed for mail.example and 127.0.0.1.
type testCA struct {
	Roots *x509.CertPool
	Cert  tls.Certificate
}

var (
	caOnce sync.Once
	ca     testCA
)

// mustCA returns the test's certificate authority, made once per process.
func mustCA(t *testing.T) testCA {
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
