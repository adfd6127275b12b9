package tickets_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"html"
	"io"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/mail/mailtest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// email is a received message, read back part by part.
type email struct {
	From, To, Subject string
	Text, HTML        string
	Files             map[string][]byte
}

// readEmail parses what the SMTP server received: headers, the text and
// HTML parts (transfer encodings undone) and the attachments by name.
func readEmail(t *testing.T, raw []byte) email {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	require.NoError(t, err)
	e := email{From: msg.Header.Get("From"), To: msg.Header.Get("To"), Subject: subject, Files: map[string][]byte{}}
	body := func(encoding string, r io.Reader) []byte {
		if strings.EqualFold(encoding, "base64") {
			r = base64.NewDecoder(base64.StdEncoding, r)
		}
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		return b
	}
	var walk func(contentType string, r io.Reader)
	walk = func(contentType string, r io.Reader) {
		media, params, err := mime.ParseMediaType(contentType)
		require.NoError(t, err)
		if !strings.HasPrefix(media, "multipart/") {
			// Lines end in CRLF on the wire.
			b := bytes.ReplaceAll(body("", r), []byte("\r\n"), []byte("\n"))
			switch media {
			case "text/plain":
				e.Text = string(b)
			case "text/html":
				e.HTML = string(b)
			}
			return
		}
		mr := multipart.NewReader(r, params["boundary"])
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return
			}
			require.NoError(t, err)
			b := body(p.Header.Get("Content-Transfer-Encoding"), p)
			if name := p.FileName(); name != "" {
				e.Files[name] = b
				continue
			}
			walk(p.Header.Get("Content-Type"), bytes.NewReader(b))
		}
	}
	walk(msg.Header.Get("Content-Type"), msg.Body)
	return e
}

// mustSMTP returns a sender to srv, which the test started.
func mustSMTP(t *testing.T, srv *mailtest.Server) mail.Sender {
	t.Helper()
	s, err := mail.NewSMTP(srv.URL(), mail.WithTimeouts(10*time.Second, 20*time.Second))
	require.NoError(t, err)
	return s
}

// TestSendEmail: a queued ticket email is sent once and recorded sent; a
// permanent refusal, or a temporary one on the last attempt, gives it up
// as failed; a temporary one is returned to be retried.
func TestSendEmail(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		// The email is sent a minute after the sale.
		sentAt := b.Now.Add(time.Minute)
		sender := func(m mail.Sender) *tickets.Service {
			svc := *b.svc
			svc.Mail, svc.Now = m, func() time.Time { return sentAt }
			return &svc
		}
		// queued is a live order of two Highlife tickets whose email waits.
		queued := func(t *testing.T) *store.Order {
			t.Helper()
			o := b.order(t, b.highlife(t, store.EnvLive, 2).Reference)
			require.Equal(t, store.TicketsEmailQueued, o.TicketsEmailStatus)
			n, scheduled := b.scheduled(o.ID)
			require.True(t, scheduled)
			require.Equal(t, 2, n)
			return o
		}
		requireStatus := func(t *testing.T, o *store.Order, want string) {
			t.Helper()
			got := b.order(t, o.Reference)
			require.Equal(t, want, got.TicketsEmailStatus)
			if want == store.TicketsEmailSent {
				require.True(t, sentAt.Equal(got.TicketsEmailSentAt), "sent_at %s", got.TicketsEmailSentAt)
			} else {
				require.True(t, got.TicketsEmailSentAt.IsZero())
			}
		}

		t.Run("OK", func(t *testing.T) {
			srv := mailtest.Start(t, false)
			svc := sender(mustSMTP(t, srv))
			var outcomes []string
			svc.ObserveEmail = func(outcome string) { outcomes = append(outcomes, outcome) }
			o := queued(t)
			require.NoError(t, svc.SendEmail(ctx, o.ID, false))
			requireStatus(t, o, store.TicketsEmailSent)
			require.Equal(t, []string{"sent"}, outcomes, "the attempt is counted")

			msgs := srv.Messages()
			require.Equal(t, 1, len(msgs))
			require.Equal(t, []string{o.CustomerEmail}, msgs[0].To)
			require.Equal(t, "tickets@boxoffice.example", msgs[0].From)
			e := readEmail(t, msgs[0].Data)
			require.Equal(t, "Your tickets for Highlife Night at the Conference Centre", e.Subject)
			// The seller, the app the order was made through, names the email.
			from, err := new(netmail.AddressParser).Parse(e.From)
			require.NoError(t, err)
			require.Equal(t, b.Demo.App.App.Name+" via Boxoffice", from.Name)
			require.Equal(t, "tickets@boxoffice.example", from.Address)
			link := "https://tickets.example/tickets/" + *o.TicketsToken
			require.Contains(t, e.Text, "\n"+link+"\n")
			require.Contains(t, e.Text, "2 tickets, order "+o.Reference+", sold by "+b.Demo.App.App.Name+":\n  - Regular (1 of 2)\n  - Regular (2 of 2)\n")
			require.Contains(t, e.Text, "Accra International Conference Centre, Castle Road, Accra, Greater Accra")
			require.Contains(t, e.HTML, `href="`+link+`"`)
			require.Contains(t, e.HTML, "<li>Regular (2 of 2)</li>")
			require.Contains(t, e.HTML, "sold by "+html.EscapeString(b.Demo.App.App.Name)+".")
			require.Len(t, e.Files, 1)
			pdf := e.Files["tickets-"+o.Reference+".pdf"]
			require.True(t, bytes.HasPrefix(pdf, []byte("%PDF-")), "the tickets are attached as a PDF")
			for _, tk := range b.issued(t, o.ID) {
				require.NotContains(t, e.Text+e.HTML, tk.Code, "codes travel behind the link and in the PDF only")
			}

			// The job runs again (a retry after a lost acknowledgement):
			// nothing more is sent.
			require.NoError(t, svc.SendEmail(ctx, o.ID, false))
			require.Equal(t, 1, len(srv.Messages()), "one email")
			require.Equal(t, []string{"sent"}, outcomes, "nothing sent, nothing counted")
		})

		// The development mailbox is a sender like SMTP: the message is
		// kept, linked to its order.
		t.Run("OKDevelopmentMailbox", func(t *testing.T) {
			box := &mail.Mailbox{DB: db}
			svc := sender(box)
			o := queued(t)
			require.NoError(t, svc.SendEmail(ctx, o.ID, true))
			requireStatus(t, o, store.TicketsEmailSent)
			var kept []store.MailMessage
			require.NoError(t, db.NewSelect().Model(&kept).Where("order_id = ?", o.ID).Scan(ctx))
			require.Len(t, kept, 1)
			require.Equal(t, o.CustomerEmail, kept[0].To)
			require.Equal(t, "Your tickets for Highlife Night at the Conference Centre", kept[0].Subject)
			require.Contains(t, kept[0].TextBody, "https://tickets.example/tickets/"+*o.TicketsToken)
		})

		// Only a queued email is sent: a test order's (never due), one
		// given up, and one of an app that delivers itself send nothing.
		t.Run("OKNotQueued", func(t *testing.T) {
			srv := mailtest.Start(t, false)
			svc := sender(mustSMTP(t, srv))
			test := b.order(t, b.highlife(t, store.EnvTest, 1).Reference)
			require.Equal(t, store.TicketsEmailNotSent, test.TicketsEmailStatus)
			failed := queued(t)
			require.NoError(t, store.SetTicketsEmail(ctx, db, failed.ID, store.TicketsEmailFailed, b.Now))
			pending, _ := b.insertOrder(t, b.Demo.App.App.ID, store.EnvLive, store.OrderPending, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1",
				line{"DEMO-HIGHLIFE-REG", 1})
			for _, o := range []*store.Order{test, failed, pending} {
				require.NoError(t, svc.SendEmail(ctx, o.ID, false), o.Reference)
			}
			require.Zero(t, len(srv.Messages()))
			requireStatus(t, test, store.TicketsEmailNotSent)
			requireStatus(t, failed, store.TicketsEmailFailed)
			requireStatus(t, pending, store.TicketsEmailNotSent)
		})

		t.Run("ErrPermanentRefusal", func(t *testing.T) {
			srv := mailtest.Start(t, false, mailtest.WithRefusal("rcpt", 550, smtp.EnhancedCode{5, 1, 1}, "no such mailbox"))
			svc := sender(mustSMTP(t, srv))
			o := queued(t)
			err := svc.SendEmail(ctx, o.ID, false)
			require.ErrorIs(t, err, tickets.ErrGiveUp, "never retried")
			require.True(t, mail.IsPermanent(err))
			require.ErrorContains(t, err, "tickets: the ticket email is given up: mail: ")
			require.NotContains(t, err.Error(), o.CustomerEmail, "the buyer's address stays out of the logs")
			requireStatus(t, o, store.TicketsEmailFailed)
			require.Zero(t, len(srv.Messages()))
			require.NoError(t, svc.SendEmail(ctx, o.ID, false), "a given-up email is not sent again")
			require.Zero(t, len(srv.Messages()))
		})

		t.Run("ErrTemporaryRefusal", func(t *testing.T) {
			srv := mailtest.Start(t, false)
			srv.RefuseNext("mail", 451, 1)
			svc := sender(mustSMTP(t, srv))
			o := queued(t)
			err := svc.SendEmail(ctx, o.ID, false)
			require.Error(t, err)
			require.NotErrorIs(t, err, tickets.ErrGiveUp, "retried")
			require.False(t, mail.IsPermanent(err))
			requireStatus(t, o, store.TicketsEmailQueued)
			require.Zero(t, len(srv.Messages()))

			require.NoError(t, svc.SendEmail(ctx, o.ID, false), "the retry")
			requireStatus(t, o, store.TicketsEmailSent)
			require.Equal(t, 1, len(srv.Messages()))
		})

		t.Run("ErrTemporaryRefusalOnLastAttempt", func(t *testing.T) {
			srv := mailtest.Start(t, false)
			srv.RefuseNext("data", 452, 1)
			svc := sender(mustSMTP(t, srv))
			o := queued(t)
			err := svc.SendEmail(ctx, o.ID, true)
			require.ErrorIs(t, err, tickets.ErrGiveUp)
			require.False(t, mail.IsPermanent(err))
			requireStatus(t, o, store.TicketsEmailFailed)
			require.Zero(t, len(srv.Messages()))
		})

		t.Run("ErrOrderGone", func(t *testing.T) {
			srv := mailtest.Start(t, false)
			err := sender(mustSMTP(t, srv)).SendEmail(ctx, 987654321, false)
			require.ErrorIs(t, err, tickets.ErrGiveUp)
			require.EqualError(t, err, "tickets: the ticket email is given up: order 987654321 does not exist")
			require.Zero(t, len(srv.Messages()))
		})
	})
}

// TestPage: the ticket page of a token shows the order as it is now; any
// other token is ticketdoc.ErrNotFound.
func TestPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		dateOf := func(t *testing.T, event, date string) *store.EventDate {
			t.Helper()
			d, err := store.EventDateOfEvent(ctx, db, b.Demo.Catalog.EventDates[date], b.Demo.Catalog.Events[event])
			require.NoError(t, err)
			return d
		}
		accra := catalog.Zone("Africa/Accra")

		t.Run("OK", func(t *testing.T) {
			v := b.highlife(t, store.EnvLive, 2)
			o := b.order(t, v.Reference)
			p, err := b.svc.Page(ctx, *o.TicketsToken)
			require.NoError(t, err)
			d := dateOf(t, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1")
			want := &ticketdoc.Order{
				Reference: v.Reference, EventName: "Highlife Night at the Conference Centre",
				Start: d.StartAt.In(accra), End: d.EndAt.In(accra),
				Venue: "Accra International Conference Centre", Address: "Castle Road, Accra, Greater Accra",
			}
			for i, tk := range v.Tickets {
				want.Tickets = append(want.Tickets, ticketdoc.Ticket{Code: tk.Code, TicketName: "Regular", Position: i + 1, Total: 2,
					Status: store.TicketValid})
			}
			require.Equal(t, want, p)
			require.Equal(t, "Africa/Accra", p.Start.Location().String(), "times in the event's zone")
		})

		// A test order is marked so, and an online date has no venue.
		t.Run("OKTestOnline", func(t *testing.T) {
			v := b.buy(t, store.EnvTest, "DEMO-TECHSUMMIT", "DEMO-TECHSUMMIT-2", "DEMO-TECHSUMMIT-2-STREAM", 1)
			p, err := b.svc.Page(ctx, *b.order(t, v.Reference).TicketsToken)
			require.NoError(t, err)
			require.True(t, p.Test)
			require.Equal(t, "Accra Tech Summit", p.EventName)
			require.Empty(t, p.Venue)
			require.Empty(t, p.Address)
			require.Len(t, p.Tickets, 1)
			require.Equal(t, ticketdoc.Ticket{Code: v.Tickets[0].Code, TicketName: "Livestream access", Position: 1, Total: 1,
				Status: store.TicketValid}, p.Tickets[0])
		})

		// Read now: a ticket voided a moment ago shows as void.
		t.Run("OKVoidShows", func(t *testing.T) {
			v := b.highlife(t, store.EnvLive, 2)
			_, err := b.svc.Void(ctx, tickets.VoidRequest{Code: v.Tickets[0].Code})
			require.NoError(t, err)
			p, err := b.svc.Page(ctx, *b.order(t, v.Reference).TicketsToken)
			require.NoError(t, err)
			require.Equal(t, store.TicketVoid, p.Tickets[0].Status)
			require.Equal(t, store.TicketValid, p.Tickets[1].Status)
		})

		for _, tt := range []struct{ name, token string }{
			{"ErrUnknownToken", tickets.NewToken()},
			{"ErrEmpty", ""},
			{"ErrPath", "../" + tickets.NewToken()},
			{"ErrSpace", "abc def"},
			{"ErrNUL", "abc\x00def"},
			{"ErrTooLong", strings.Repeat("a", 129)},
		} {
			t.Run(tt.name, func(t *testing.T) {
				p, err := b.svc.Page(ctx, tt.token)
				require.ErrorIs(t, err, ticketdoc.ErrNotFound)
				require.Nil(t, p)
			})
		}
	})
}
