package mail_test

import (
	"context"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestMailbox(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		order := storetest.MustOrder(t, db, storetest.MustApp(t, db), storetest.MustCatalog(t, db, nil), "ord_mailbox")
		at := time.Date(2026, 12, 24, 18, 0, 0, 123456000, time.UTC)
		box := &mail.Mailbox{DB: db, Now: func() time.Time { return at }}

		t.Run("OK", func(t *testing.T) {
			m := ticketMail()
			m.OrderID = order.ID
			require.NoError(t, box.Send(ctx, m))
			recent, err := box.Recent(ctx, 10)
			require.NoError(t, err)
			require.Len(t, recent, 1)
			row := recent[0]
			require.Equal(t, "ord_mailbox", *row.OrderReference)
			require.Equal(t, order.ID, row.OrderID)
			require.Equal(t, m.To, row.To)
			require.Equal(t, m.Subject, row.Subject)
			require.True(t, at.Equal(row.CreatedAt), "%s", row.CreatedAt)
			require.Equal(t, time.UTC, row.CreatedAt.Location())
			require.Empty(t, row.Raw+row.TextBody+row.HTMLBody, "a list does not load bodies")

			got, err := box.Message(ctx, row.ID)
			require.NoError(t, err)
			require.Equal(t, "ord_mailbox", *got.OrderReference)
			require.Equal(t, m.From, got.From)
			require.Equal(t, m.Text, got.TextBody)
			require.Equal(t, m.HTML, got.HTMLBody)
			require.Equal(t, []mail.Attachment{{Name: "tickets-ord_123.pdf", ContentType: "application/pdf", Data: ticketPDF}}, got.Attachments)
			names := []string{}
			for _, h := range got.Headers {
				names = append(names, h.Name)
			}
			require.Equal(t, []string{"Date", "From", "To", "Subject", "Message-Id"}, names)
			require.Equal(t, mail.Header{Name: "Date", Value: "Thu, 24 Dec 2026 18:00:00 +0000"}, got.Headers[0])
			require.Equal(t, mail.Header{Name: "Subject", Value: m.Subject}, got.Headers[3], "decoded")
			require.Regexp(t, `^<[a-z2-7]{26}@boxoffice\.example>$`, got.Headers[4].Value)

			// The raw message is the one SMTP carries (TestSMTPDelivers).
			h, structure, leaves := parseMIME(t, []byte(got.Raw))
			require.Equal(t, []string{"multipart/mixed", "multipart/alternative"}, structure)
			require.Equal(t, got.Headers[4].Value, h.Get("Message-Id"))
			require.Len(t, leaves, 3)
			require.Equal(t, m.HTML, string(leaves[1].Body))
			require.Equal(t, ticketPDF, leaves[2].Body)
		})
		t.Run("OKNewestFirst", func(t *testing.T) {
			later := &mail.Mailbox{DB: db, Now: func() time.Time { return at.Add(time.Hour) }}
			for _, subject := range []string{"first", "second", "third"} {
				m := ticketMail()
				m.Subject, m.Attachments = subject, nil
				require.NoError(t, later.Send(ctx, m))
			}
			recent, err := box.Recent(ctx, 2)
			require.NoError(t, err)
			require.Len(t, recent, 2)
			require.Equal(t, []string{"third", "second"}, []string{recent[0].Subject, recent[1].Subject}, "same instant: the later id first")
			require.Nil(t, recent[0].OrderReference)
			all, err := box.Recent(ctx, mail.MaxRecent+1)
			require.NoError(t, err)
			require.Len(t, all, 4)
			require.Equal(t, "ord_mailbox", *all[3].OrderReference)
			got, err := box.Message(ctx, recent[0].ID)
			require.NoError(t, err)
			require.Empty(t, got.Attachments)
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			_, err := box.Message(ctx, 999999)
			require.Equal(t, apperr.NotFound, apperr.CodeOf(err))
			require.EqualError(t, err, "not_found: mail message 999999 does not exist")
		})
		t.Run("ErrInvalidRecipient", func(t *testing.T) {
			m := ticketMail()
			m.To = "ama at example.com"
			err := box.Send(ctx, m)
			require.True(t, mail.IsPermanent(err))
			recent, err := box.Recent(ctx, mail.MaxRecent)
			require.NoError(t, err)
			require.Len(t, recent, 4, "nothing stored")
		})
		t.Run("ErrDatabase", func(t *testing.T) {
			closed := storetest.MustOpen(t, "sqlite")
			require.NoError(t, closed.Close())
			err := (&mail.Mailbox{DB: closed}).Send(ctx, ticketMail())
			require.ErrorContains(t, err, "mail: mailbox: ")
			require.False(t, mail.IsPermanent(err), "a database error is temporary")
		})
	})
}
