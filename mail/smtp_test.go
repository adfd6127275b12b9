package mail_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/mail/mailtest"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// ticketPDF stands in for a ticket PDF: bytes of every value, so any
// mangling in transit shows.
var ticketPDF = func() []byte {
	b := []byte("%PDF-1.7\n")
	for i := range 3000 {
		b = append(b, byte(i*7))
	}
	return b
}()

// ticketMail is a ticket email as the job sends it.
func ticketMail() mail.Message {
	return mail.Message{
		From:    "Boxoffice <tickets@boxoffice.example>",
		To:      "Ama Mensah <ama@example.com>",
		Subject: "Your tickets for Highlife Night — Accra 🎶",
		Text:    "Hello Ama,\n\nYour tickets: https://boxoffice.example/tickets/tok_123\n\nÀ bientôt.\n",
		HTML:    `<p style="color:#137a4b">Hello Ama,</p><p><a href="https://boxoffice.example/tickets/tok_123">Your tickets</a></p>`,
		Attachments: []mail.Attachment{
			{Name: "tickets-ord_123.pdf", ContentType: "application/pdf", Data: ticketPDF},
		},
		OrderID: 0,
	}
}

// mustSMTP returns a sender for rawURL.
func mustSMTP(t *testing.T, rawURL string, opts ...mail.Option) *mail.SMTP {
	t.Helper()
	s, err := mail.NewSMTP(rawURL, opts...)
	require.NoError(t, err)
	return s
}

// part is a leaf of a parsed MIME message.
type part struct {
	ContentType string // media type
	Disposition string
	FileName    string
	Body        []byte // decoded
}

// parseMIME reads a message as a mail client would, with the standard
// library alone: its header, the media type of each multipart level, and
// its leaves, decoded.
func parseMIME(t *testing.T, data []byte) (netmail.Header, []string, []part) {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	require.NoError(t, err)
	var structure []string
	var leaves []part
	var walk func(h map[string][]string, body io.Reader)
	walk = func(h map[string][]string, body io.Reader) {
		get := func(k string) string {
			if v := h[k]; len(v) > 0 {
				return v[0]
			}
			return ""
		}
		mt, params, err := mime.ParseMediaType(get("Content-Type"))
		require.NoError(t, err)
		if strings.HasPrefix(mt, "multipart/") {
			structure = append(structure, mt)
			r := multipart.NewReader(body, params["boundary"])
			for {
				p, err := r.NextRawPart()
				if err == io.EOF {
					return
				}
				require.NoError(t, err)
				walk(p.Header, p)
			}
		}
		switch get("Content-Transfer-Encoding") {
		case "base64":
			body = base64.NewDecoder(base64.StdEncoding, body)
		case "quoted-printable":
			body = quotedprintable.NewReader(body)
		}
		b, err := io.ReadAll(body)
		require.NoError(t, err)
		disp, dparams, _ := mime.ParseMediaType(get("Content-Disposition"))
		leaves = append(leaves, part{ContentType: mt, Disposition: disp, FileName: dparams["filename"], Body: b})
	}
	walk(msg.Header, msg.Body)
	return msg.Header, structure, leaves
}

func TestSMTPDelivers(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, false)
	m := ticketMail()
	before := time.Now().Add(-time.Second)
	require.NoError(t, mustSMTP(t, "smtp://127.0.0.1:"+srv.Port()).Send(context.Background(), m))

	got := srv.Messages()
	require.Len(t, got, 1)
	require.Equal(t, "tickets@boxoffice.example", got[0].From)
	require.Equal(t, []string{"ama@example.com"}, got[0].To)
	require.False(t, got[0].TLS, "loopback: no STARTTLS asked for")

	h, structure, leaves := parseMIME(t, got[0].Data)
	var dec mime.WordDecoder
	subject, err := dec.DecodeHeader(h.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, m.Subject, subject, "a UTF-8 subject arrives whole")
	from, err := h.AddressList("From")
	require.NoError(t, err)
	require.Equal(t, []*netmail.Address{{Name: "Boxoffice", Address: "tickets@boxoffice.example"}}, from)
	to, err := h.AddressList("To")
	require.NoError(t, err)
	require.Equal(t, []*netmail.Address{{Name: "Ama Mensah", Address: "ama@example.com"}}, to)
	require.Regexp(t, `^<[a-z2-7]{26}@boxoffice\.example>$`, h.Get("Message-Id"))
	date, err := h.Date()
	require.NoError(t, err)
	require.WithinRange(t, date, before, time.Now().Add(time.Second))
	require.Empty(t, h.Get("User-Agent")+h.Get("X-Mailer"), "the library is not named")

	require.Equal(t, []string{"multipart/mixed", "multipart/alternative"}, structure)
	require.Len(t, leaves, 3)
	require.Equal(t, "text/plain", leaves[0].ContentType)
	require.Equal(t, strings.ReplaceAll(m.Text, "\n", "\r\n"), string(leaves[0].Body))
	require.Equal(t, "text/html", leaves[1].ContentType)
	require.Equal(t, m.HTML, string(leaves[1].Body))
	require.Equal(t, part{ContentType: "application/pdf", Disposition: "attachment", FileName: "tickets-ord_123.pdf", Body: ticketPDF}, leaves[2])
}

// TestSMTPConcurrent: one sender serves many jobs at once, each on a
// connection of its own.
func TestSMTPConcurrent(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, false, mailtest.WithAuth("ops", "secret"))
	s := mustSMTP(t, "smtp://ops:secret@127.0.0.1:"+srv.Port())
	const n = 12
	errs := make(chan error, n)
	for i := range n {
		go func() {
			m := ticketMail()
			m.To = fmt.Sprintf("buyer%d@example.com", i)
			errs <- s.Send(context.Background(), m)
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	got := srv.Messages()
	require.Len(t, got, n)
	seen := map[string]bool{}
	for _, m := range got {
		require.Len(t, m.To, 1)
		seen[m.To[0]] = true
	}
	require.Len(t, seen, n, "each message to its own buyer")
}

// TestSMTPHeaders: what the message says is only ever header values.
func TestSMTPHeaders(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, false)
	m := ticketMail()
	m.Subject = "Tickets\r\nBcc: thief@evil.example\r\n\r\nInjected body"
	m.Attachments = []mail.Attachment{{Name: "a\"b\r\nX-Evil: 1.pdf", ContentType: "application/pdf\r\nX-Evil: 1", Data: []byte("x")}}
	m.Text, m.HTML = "only text", ""
	require.NoError(t, mustSMTP(t, "smtp://127.0.0.1:"+srv.Port()).Send(context.Background(), m))
	got := srv.Messages()
	require.Len(t, got, 1)
	require.Equal(t, []string{"ama@example.com"}, got[0].To, "no Bcc reached the envelope")
	h, structure, leaves := parseMIME(t, got[0].Data)
	require.Equal(t, "Tickets Bcc: thief@evil.example Injected body", h.Get("Subject"))
	require.Empty(t, h.Get("Bcc"))
	require.Empty(t, h.Get("X-Evil"))
	require.NotContains(t, string(got[0].Data), "\nX-Evil")
	require.Equal(t, []string{"multipart/mixed"}, structure, "one body part, no alternative")
	require.Len(t, leaves, 2)
	require.Equal(t, "only text", string(leaves[0].Body))
	require.Equal(t, "application/octet-stream", leaves[1].ContentType, "a content type that is not one")
	require.Equal(t, []byte("x"), leaves[1].Body)
}

func TestSMTPRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		command   string
		code      int
		enhanced  smtp.EnhancedCode
		permanent bool
	}{
		{"ErrMail4xx", "mail", 451, smtp.EnhancedCode{4, 3, 0}, false},
		{"ErrMail5xx", "mail", 550, smtp.EnhancedCode{5, 7, 1}, true},
		{"ErrRcpt4xx", "rcpt", 450, smtp.EnhancedCode{4, 2, 1}, false},
		{"ErrRcpt5xx", "rcpt", 550, smtp.EnhancedCode{5, 1, 1}, true},
		{"ErrData4xx", "data", 452, smtp.EnhancedCode{4, 3, 1}, false},
		{"ErrData5xx", "data", 554, smtp.EnhancedCode{5, 6, 0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Servers quote the recipient back: it must not reach a log.
			srv := mailtest.Start(t, false, mailtest.WithRefusal(tt.command, tt.code, tt.enhanced, "<ama@example.com>: refused by policy"))
			err := mustSMTP(t, "smtp://127.0.0.1:"+srv.Port()).Send(context.Background(), ticketMail())
			require.Error(t, err)
			require.Equal(t, tt.permanent, mail.IsPermanent(err), "%v", err)
			require.Contains(t, err.Error(), fmt.Sprintf("%d %d.%d.%d", tt.code, tt.enhanced[0], tt.enhanced[1], tt.enhanced[2]))
			require.Contains(t, err.Error(), "refused by policy")
			require.NotContains(t, err.Error(), "ama@example.com")
			require.NotContains(t, err.Error(), "Ama")
			require.Empty(t, srv.Messages())
		})
	}
}

func TestSMTPConnection(t *testing.T) {
	t.Parallel()
	t.Run("ErrRefused", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		err = mustSMTP(t, "smtp://"+addr).Send(context.Background(), ticketMail())
		require.ErrorContains(t, err, "connection refused")
		require.False(t, mail.IsPermanent(err))
	})
	t.Run("ErrReset", func(t *testing.T) {
		t.Parallel()
		// A server that hangs up at once, before its greeting.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
		}()
		err = mustSMTP(t, "smtp://"+ln.Addr().String()).Send(context.Background(), ticketMail())
		require.Error(t, err)
		require.False(t, mail.IsPermanent(err), "%v", err)
	})
	t.Run("ErrInvalidRecipient", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false)
		for _, to := range []string{"", "not an address", "ama@", "a@example.com, b@example.com"} {
			m := ticketMail()
			m.To = to
			err := mustSMTP(t, "smtp://127.0.0.1:"+srv.Port()).Send(context.Background(), m)
			require.EqualError(t, err, "mail: address: the recipient is not a valid email address", "%q", to)
			require.True(t, mail.IsPermanent(err), "%q", to)
		}
		require.Empty(t, srv.Messages())
	})
	t.Run("ErrInvalidFrom", func(t *testing.T) {
		t.Parallel()
		m := ticketMail()
		m.From = "Boxoffice"
		err := mustSMTP(t, "smtp://127.0.0.1:1").Send(context.Background(), m)
		require.EqualError(t, err, "mail: address: the sender (MAIL_FROM) is not a valid email address")
		require.False(t, mail.IsPermanent(err), "configuration, mended by the operator")
	})
}

func TestSMTPStalls(t *testing.T) {
	t.Parallel()
	// within runs send and says how long it took.
	within := func(t *testing.T, limit time.Duration, send func() error) error {
		t.Helper()
		start := time.Now()
		err := send()
		require.Less(t, time.Since(start), limit)
		return err
	}
	t.Run("ErrSilentServer", func(t *testing.T) {
		t.Parallel()
		// Accepts and never greets.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			var conns []net.Conn
			for {
				c, err := ln.Accept()
				if err != nil {
					for _, c := range conns {
						c.Close()
					}
					return
				}
				conns = append(conns, c)
			}
		}()
		s := mustSMTP(t, "smtp://"+ln.Addr().String(), mail.WithTimeouts(200*time.Millisecond, 10*time.Second))
		err = within(t, 3*time.Second, func() error { return s.Send(context.Background(), ticketMail()) })
		require.ErrorContains(t, err, "timeout")
		require.False(t, mail.IsPermanent(err))
	})
	t.Run("ErrStalledTransaction", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false, mailtest.WithStall())
		s := mustSMTP(t, "smtp://127.0.0.1:"+srv.Port(), mail.WithTimeouts(10*time.Second, 300*time.Millisecond))
		err := within(t, 3*time.Second, func() error { return s.Send(context.Background(), ticketMail()) })
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "no answer within 300ms")
		require.False(t, mail.IsPermanent(err))
	})
	t.Run("ErrCancelled", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false, mailtest.WithStall())
		s := mustSMTP(t, "smtp://127.0.0.1:"+srv.Port(), mail.WithTimeouts(10*time.Second, 10*time.Second))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		err := within(t, 3*time.Second, func() error { return s.Send(ctx, ticketMail()) })
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, mail.IsPermanent(err))
	})
	t.Run("ErrCancelledBefore", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := mustSMTP(t, "smtp://127.0.0.1:"+srv.Port()).Send(ctx, ticketMail())
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, mail.IsPermanent(err))
		require.Empty(t, srv.Messages())
	})
}

func TestSMTPAuth(t *testing.T) {
	t.Parallel()
	const pass = "p@ss:wörd/1"
	// Percent-encoded in the URL, as an operator must.
	userinfo := url.UserPassword("ops@kofi.example", pass).String()
	require.Equal(t, "ops%40kofi.example:p%40ss%3Aw%C3%B6rd%2F1", userinfo)
	t.Run("OKLoopbackPlain", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false, mailtest.WithAuth("ops@kofi.example", pass))
		require.NoError(t, mustSMTP(t, "smtp://"+userinfo+"@127.0.0.1:"+srv.Port()).Send(context.Background(), ticketMail()))
		require.Len(t, srv.Messages(), 1)
	})
	t.Run("ErrWrongPassword", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false, mailtest.WithAuth("ops@kofi.example", "other"))
		err := mustSMTP(t, "smtp://"+userinfo+"@127.0.0.1:"+srv.Port()).Send(context.Background(), ticketMail())
		require.ErrorContains(t, err, "535")
		require.NotContains(t, err.Error(), "wörd")
		require.False(t, mail.IsPermanent(err), "credentials are configuration: retried once mended")
		require.Empty(t, srv.Messages())
	})
	t.Run("ErrAuthRequired", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false, mailtest.WithAuth("ops@kofi.example", pass))
		err := mustSMTP(t, "smtp://127.0.0.1:"+srv.Port()).Send(context.Background(), ticketMail())
		require.ErrorContains(t, err, "502 5.7.0")
		require.True(t, mail.IsPermanent(err), "a 5xx to MAIL FROM")
	})
}

// TestSMTPTLS: away from loopback the password and the message only
// travel encrypted.
func TestSMTPTLS(t *testing.T) {
	t.Parallel()
	ca := mailtest.MustCA(t)
	trust := mail.WithTLSConfig(&tls.Config{RootCAs: ca.Roots})
	t.Run("OKStartTLS", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false, mailtest.WithTLS(ca.Cert), mailtest.WithAuth("ops", "secret"))
		s := mustSMTP(t, "smtp://ops:secret@mail.example:2525", trust, mail.WithDialer(srv.Dialer()))
		require.NoError(t, s.Send(context.Background(), ticketMail()))
		got := srv.Messages()
		require.Len(t, got, 1)
		require.True(t, got[0].TLS, "sent after STARTTLS")
	})
	t.Run("ErrNoStartTLS", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false, mailtest.WithAuth("ops", "secret"))
		s := mustSMTP(t, "smtp://ops:secret@mail.example:2525", trust, mail.WithDialer(srv.Dialer()))
		err := s.Send(context.Background(), ticketMail())
		require.ErrorContains(t, err, "STARTTLS")
		require.False(t, mail.IsPermanent(err))
		require.Zero(t, srv.AuthAttempts(), "the password was never sent")
		require.Empty(t, srv.Messages())
	})
	t.Run("ErrUntrustedCertificate", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, false, mailtest.WithTLS(ca.Cert), mailtest.WithAuth("ops", "secret"))
		s := mustSMTP(t, "smtp://ops:secret@mail.example:2525", mail.WithDialer(srv.Dialer()))
		err := s.Send(context.Background(), ticketMail())
		require.ErrorContains(t, err, "certificate")
		require.False(t, mail.IsPermanent(err))
		require.Zero(t, srv.AuthAttempts())
		require.Empty(t, srv.Messages())
	})
	t.Run("OKImplicitTLS", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, true, mailtest.WithTLS(ca.Cert), mailtest.WithAuth("ops", "secret"))
		s := mustSMTP(t, "smtps://ops:secret@mail.example", trust, mail.WithDialer(srv.Dialer()))
		require.NoError(t, s.Send(context.Background(), ticketMail()))
		got := srv.Messages()
		require.Len(t, got, 1)
		require.True(t, got[0].TLS)
	})
	t.Run("ErrImplicitTLSUntrusted", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, true, mailtest.WithTLS(ca.Cert))
		err := mustSMTP(t, "smtps://127.0.0.1:"+srv.Port()).Send(context.Background(), ticketMail())
		require.ErrorContains(t, err, "certificate")
		require.False(t, mail.IsPermanent(err))
	})
}

func TestNewSMTP(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		for url, want := range map[string]string{
			"smtp://user:secret@mail.example":      "smtp://mail.example:587 (STARTTLS required)",
			"smtp://mail.example:2525/":            "smtp://mail.example:2525 (STARTTLS required)",
			"smtps://user:secret@mail.example":     "smtps://mail.example:465 (implicit TLS)",
			"smtps://127.0.0.1:1465":               "smtps://127.0.0.1:1465 (implicit TLS)",
			"smtp://localhost:1025":                "smtp://localhost:1025 (loopback, without TLS)",
			"smtp://LocalHost":                     "smtp://LocalHost:587 (loopback, without TLS)",
			"smtp://127.0.0.2:25":                  "smtp://127.0.0.2:25 (loopback, without TLS)",
			"smtp://[::1]:25":                      "smtp://[::1]:25 (loopback, without TLS)",
			"smtp://localhost.mail.example":        "smtp://localhost.mail.example:587 (STARTTLS required)",
			"smtp://[::ffff:10.0.0.1]:25":          "smtp://[::ffff:10.0.0.1]:25 (STARTTLS required)",
			"smtp://user%40x.example:s%3Acret@a.b": "smtp://a.b:587 (STARTTLS required)",
		} {
			s, err := mail.NewSMTP(url)
			require.NoError(t, err, url)
			require.Equal(t, want, s.String(), url)
			require.NotContains(t, s.String(), "secret")
		}
	})
	t.Run("Err", func(t *testing.T) {
		for url, want := range map[string]string{
			"mail.example:587":                   "the scheme is not smtp or smtps",
			"http://user:secret@mail.example":    "SMTP_URL http://user:xxxxx@mail.example: the scheme is not smtp or smtps",
			"smtp://user:secret@":                "there is no host",
			"smtp://user:secret@mail.example:0":  "the port is not between 1 and 65535",
			"smtp://mail.example:99999":          "the port is not between 1 and 65535",
			"smtp://user:secret@mail.example/x":  "it has a path, query or fragment",
			"smtp://mail.example?tls=no":         "it has a path, query or fragment",
			"smtp://user:sec%zzret@mail.example": "SMTP_URL is not a URL of the form smtp://user:pass@host:port",
			"smtp://user:secret@mail example":    "SMTP_URL is not a URL",
			"":                                   "the scheme is not smtp or smtps",
		} {
			_, err := mail.NewSMTP(url)
			require.ErrorContains(t, err, want, url)
			require.ErrorContains(t, err, "SMTP_URL", url)
			require.NotContains(t, err.Error(), "secret", url)
			require.NotContains(t, err.Error(), "zz", url)
		}
	})
}

func TestNew(t *testing.T) {
	t.Parallel()
	s, err := mail.New(nil, "smtp://mail.example")
	require.NoError(t, err)
	require.IsType(t, &mail.SMTP{}, s)
	s, err = mail.New(nil, "")
	require.NoError(t, err)
	require.IsType(t, &mail.Mailbox{}, s)
	s, err = mail.New(nil, "smtp://u:secret@")
	require.Nil(t, s)
	require.ErrorContains(t, err, "SMTP_URL")
	require.NotContains(t, err.Error(), "secret")

	require.NoError(t, mail.CheckFrom(mail.DefaultFrom))
	require.NoError(t, mail.CheckFrom("tickets@boxoffice.example"))
	require.EqualError(t, mail.CheckFrom("Boxoffice"), `MAIL_FROM "Boxoffice" is not an email address (e.g. "Boxoffice <tickets@localhost>")`)
}

func TestIsPermanent(t *testing.T) {
	t.Parallel()
	require.False(t, mail.IsPermanent(nil))
	require.False(t, mail.IsPermanent(errors.New("550 looks permanent but is not ours")))
	m := ticketMail()
	m.To = "nobody"
	err := mustSMTP(t, "smtp://127.0.0.1:1").Send(context.Background(), m)
	require.True(t, mail.IsPermanent(err))
	require.True(t, mail.IsPermanent(fmt.Errorf("ticket email of order 7: %w", err)), "through wrapping")
}
