package tickets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"strings"
	texttemplate "text/template"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/ticketdoc"
)

// SendRefundEmail sends the buyer's email of a refund whose email is
// queued, and records the outcome as SendEmail does for the ticket email:
// sent; failed, returning an error wrapping ErrGiveUp, on a permanent
// refusal or when last is set; a temporary failure is returned to be
// retried. A refund whose email is not queued sends nothing, so a job run
// twice sends one email.
func (s *Service) SendRefundEmail(ctx context.Context, refundID int64, last bool) error {
	r, err := store.RefundByID(ctx, s.DB, refundID)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: refund %d does not exist", ErrGiveUp, refundID)
	}
	if err != nil {
		return err
	}
	if r.EmailStatus == nil || *r.EmailStatus != store.TicketsEmailQueued {
		return nil
	}
	o, err := store.OrderByID(ctx, s.DB, r.OrderID)
	if err != nil {
		return err
	}
	if o.TicketsToken == nil {
		return nil
	}
	m, err := s.composeRefund(ctx, o, r)
	if err != nil {
		return err
	}
	return s.send(ctx, m, last, nil, func(ctx context.Context, status string) error {
		return store.SetRefundEmail(ctx, s.DB, r.ID, status)
	})
}

// composeRefund writes a refund's email: the amount and the event in the
// subject, what was cancelled, when the money comes, and the ticket page,
// which shows what is still valid.
func (s *Service) composeRefund(ctx context.Context, o *store.Order, r *store.Refund) (*mail.Message, error) {
	p, err := s.page(ctx, o)
	if err != nil {
		return nil, err
	}
	app, err := store.AppByID(ctx, s.DB, o.AppID)
	if err != nil {
		return nil, err
	}
	seller := strings.Join(strings.Fields(app.Name), " ")
	var cancelled []ticketdoc.Ticket
	ts, err := store.TicketsOfRefunds(ctx, s.DB, []int64{r.ID})
	if err != nil {
		return nil, err
	}
	for _, t := range ts[r.ID] {
		cancelled = append(cancelled, ticketdoc.Ticket{TicketName: t.TicketName, Position: int(t.Position), Total: int(t.TicketsInOrder)})
	}
	d := refundEmailData{Order: p, URL: URL(s.PublicBaseURL, *o.TicketsToken),
		Amount: r.Currency + " " + catalog.FormatAmount(r.Amount), Cancelled: cancelled, Settled: r.Status == store.RefundSucceeded}
	var text, html bytes.Buffer
	if err := refundText.Execute(&text, d); err != nil {
		return nil, err
	}
	if err := refundHTML.Execute(&html, d); err != nil {
		return nil, err
	}
	return &mail.Message{
		From: mail.FromSeller(s.From, seller), To: o.CustomerEmail, OrderID: o.ID,
		Subject: fmt.Sprintf("Refund of %s for %s", d.Amount, p.EventName),
		Text:    text.String(), HTML: html.String(),
	}, nil
}

// refundEmailData is what the refund email shows.
type refundEmailData struct {
	Order     *ticketdoc.Order
	URL       string
	Amount    string
	Cancelled []ticketdoc.Ticket
	// Settled says the money is back already (the provider answered before
	// the email was sent).
	Settled bool
}

var refundText = texttemplate.Must(texttemplate.New("refund-text").Parse(`Your refund for {{.Order.EventName}}

{{if .Settled}}{{.Amount}} has been returned{{else}}{{.Amount}} is on its way back{{end}} to the card or account you paid with, for order {{.Order.Reference}}. Depending on your bank it can take a few days to show.
{{if .Cancelled}}
Cancelled, and no longer valid for entry:
{{range .Cancelled}}  - {{.TicketName}} ({{.Position}} of {{.Total}})
{{end}}{{else}}
No ticket was cancelled: your tickets stay valid.
{{end}}
Your ticket page shows every ticket as it now stands:
{{.URL}}
`))

var refundHTML = template.Must(template.New("refund-html").Parse(`<!doctype html>
<html><body style="margin:0;padding:24px 12px;background:#f4f4f5;font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#18181b">
<div style="max-width:520px;margin:0 auto;background:#fff;border-radius:12px;padding:24px">
<p style="margin:0 0 4px;color:#52525b;font-size:14px">Your refund for</p>
<h1 style="margin:0 0 12px;font-size:22px">{{.Order.EventName}}</h1>
<p style="margin:0 0 16px;font-size:18px"><strong>{{.Amount}}</strong> {{if .Settled}}has been returned{{else}}is on its way back{{end}} to the card or account you paid with.</p>
{{if .Cancelled}}<p style="margin:0 0 4px">Cancelled, and no longer valid for entry:</p>
<ul style="padding-left:20px;margin:0 0 20px">{{range .Cancelled}}<li>{{.TicketName}} ({{.Position}} of {{.Total}})</li>{{end}}</ul>
{{else}}<p style="margin:0 0 20px">No ticket was cancelled: your tickets stay valid.</p>{{end}}
<p style="margin:0 0 20px"><a href="{{.URL}}" style="display:inline-block;background:#18181b;color:#fff;text-decoration:none;padding:12px 20px;border-radius:8px;font-weight:600">See my tickets</a></p>
<p style="margin:0;color:#52525b;font-size:13px">Order {{.Order.Reference}}. Depending on your bank the money can take a few days to show.</p>
</div></body></html>
`))
