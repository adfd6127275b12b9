package tickets_test

import (
	"context"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/mail/mailtest"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// TestSendRefundEmail: a live buyer who was emailed their tickets is
// emailed each refund once, through the outbox written with the refund;
// a sandbox buyer is not; refusals end as the ticket email's do.
func TestSendRefundEmail(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		var mu sync.Mutex
		queuedEmails := map[int64]bool{}
		money := &refunds.Service{DB: db, Orders: b.Service, Idempotency: b.Service.Idempotency, Webhooks: b.Service.Webhooks,
			Now: b.Service.Now, EnqueueSend: func(context.Context, bun.Tx, int64) error { return nil },
			EnqueueEmail: func(_ context.Context, _ bun.Tx, id int64) error {
				mu.Lock()
				defer mu.Unlock()
				queuedEmails[id] = true
				return nil
			}}
		refund := func(t *testing.T, o *store.Order, in *refunds.Input) *store.Refund {
			t.Helper()
			v, _, err := money.Create(ctx, checkout.Caller{AppID: o.AppID, Environment: o.Environment}, refunds.Request{Reference: o.Reference,
				Key: "refund-" + o.Reference, Input: in})
			require.NoError(t, err)
			r, err := store.RefundByPublicID(ctx, db, v.ID)
			require.NoError(t, err)
			return r
		}
		sender := func(m mail.Sender) *tickets.Service {
			svc := *b.svc
			svc.Mail = m
			return &svc
		}
		emailStatus := func(t *testing.T, id int64) *string {
			t.Helper()
			r, err := store.RefundByID(ctx, db, id)
			require.NoError(t, err)
			return r.EmailStatus
		}

		t.Run("OK", func(t *testing.T) {
			srv := mailtest.Start(t, false)
			svc := sender(mustSMTP(t, srv))
			o := b.order(t, b.highlife(t, store.EnvLive, 2).Reference)
			first := b.issued(t, o.ID)[0]
			r := refund(t, o, &refunds.Input{Tickets: []*string{ptr(first.PublicID)}})
			mu.Lock()
			require.True(t, queuedEmails[r.ID], "the email's job is written with the refund")
			mu.Unlock()
			require.Equal(t, store.TicketsEmailQueued, *emailStatus(t, r.ID))

			require.NoError(t, svc.SendRefundEmail(ctx, r.ID, false))
			require.Equal(t, store.TicketsEmailSent, *emailStatus(t, r.ID))
			msgs := srv.Messages()
			require.Len(t, msgs, 1)
			require.Equal(t, []string{o.CustomerEmail}, msgs[0].To)
			e := readEmail(t, msgs[0].Data)
			require.Equal(t, "Refund of GHS 120.00 for Highlife Night at the Conference Centre", e.Subject)
			require.Contains(t, e.Text, "GHS 120.00 is on its way back to the card or account you paid with, for order "+o.Reference)
			require.Contains(t, e.Text, "Cancelled, and no longer valid for entry:\n  - Regular (1 of 2)\n")
			link := "https://tickets.example/tickets/" + *o.TicketsToken
			require.Contains(t, e.Text, "\n"+link+"\n")
			require.Contains(t, e.HTML, `href="`+link+`"`)
			require.Contains(t, e.HTML, "<li>Regular (1 of 2)</li>")
			require.NotContains(t, e.Text+e.HTML, first.Code, "no code travels in the email")

			require.NoError(t, svc.SendRefundEmail(ctx, r.ID, false), "the job run again")
			require.Len(t, srv.Messages(), 1, "one email")
		})

		t.Run("OKMoneyOnly", func(t *testing.T) {
			srv := mailtest.Start(t, false)
			svc := sender(mustSMTP(t, srv))
			o := b.order(t, b.highlife(t, store.EnvLive, 1).Reference)
			r := refund(t, o, &refunds.Input{Tickets: []*string{}, Amount: ptr("10.00")})
			require.NoError(t, svc.SendRefundEmail(ctx, r.ID, false))
			e := readEmail(t, srv.Messages()[0].Data)
			require.Contains(t, e.Text, "No ticket was cancelled: your tickets stay valid.")
		})

		t.Run("OKSandboxSendsNone", func(t *testing.T) {
			o := b.order(t, b.highlife(t, store.EnvTest, 1).Reference)
			r := refund(t, o, nil)
			mu.Lock()
			require.False(t, queuedEmails[r.ID])
			mu.Unlock()
			require.Nil(t, emailStatus(t, r.ID))
			srv := mailtest.Start(t, false)
			require.NoError(t, sender(mustSMTP(t, srv)).SendRefundEmail(ctx, r.ID, false))
			require.Empty(t, srv.Messages())
		})

		t.Run("ErrPermanentRefusal", func(t *testing.T) {
			srv := mailtest.Start(t, false, mailtest.WithRefusal("rcpt", 550, smtp.EnhancedCode{5, 1, 1}, "no such mailbox"))
			svc := sender(mustSMTP(t, srv))
			o := b.order(t, b.highlife(t, store.EnvLive, 1).Reference)
			r := refund(t, o, nil)
			err := svc.SendRefundEmail(ctx, r.ID, false)
			require.ErrorIs(t, err, tickets.ErrGiveUp)
			require.NotContains(t, err.Error(), o.CustomerEmail)
			require.Equal(t, store.TicketsEmailFailed, *emailStatus(t, r.ID))
		})

		t.Run("ErrTemporaryThenSent", func(t *testing.T) {
			srv := mailtest.Start(t, false)
			srv.RefuseNext("mail", 451, 1)
			svc := sender(mustSMTP(t, srv))
			o := b.order(t, b.highlife(t, store.EnvLive, 1).Reference)
			r := refund(t, o, nil)
			err := svc.SendRefundEmail(ctx, r.ID, false)
			require.Error(t, err)
			require.NotErrorIs(t, err, tickets.ErrGiveUp)
			require.Equal(t, store.TicketsEmailQueued, *emailStatus(t, r.ID))
			require.NoError(t, svc.SendRefundEmail(ctx, r.ID, false))
			require.Equal(t, store.TicketsEmailSent, *emailStatus(t, r.ID))
			require.Len(t, srv.Messages(), 1)
		})
	})
}
