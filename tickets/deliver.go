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

// Page loads what the buyer's ticket page shows of the order whose page
// token is token, read now: a ticket voided or checked in a second ago
// shows as such. Errors: ticketdoc.ErrNotFound.
func (s *Service) Page(ctx context.Context, token string) (*ticketdoc.Order, error) {
	if !ticketdoc.PlausibleToken(token) {
		return nil, ticketdoc.ErrNotFound
	}
	o, err := store.OrderByTicketsToken(ctx, s.DB, token)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ticketdoc.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.page(ctx, o)
}

// page loads the ticket page of an order that has tickets.
func (s *Service) page(ctx context.Context, o *store.Order) (*ticketdoc.Order, error) {
	event, err := store.EventByID(ctx, s.DB, o.EventID)
	if err != nil {
		return nil, err
	}
	date, err := store.EventDateOfEvent(ctx, s.DB, o.EventDateID, o.EventID)
	if err != nil {
		return nil, err
	}
	details, err := store.OrderDetails(ctx, s.DB, []int64{o.ID})
	if err != nil {
		return nil, err
	}
	loc := catalog.Zone(event.Timezone)
	p := &ticketdoc.Order{
		Reference: o.Reference, Test: o.Environment == store.EnvTest, EventName: event.Name,
		Start: date.StartAt.In(loc),
	}
	if !date.EndAt.IsZero() {
		p.End = date.EndAt.In(loc)
	}
	if date.VenueID != nil && !date.Online {
		vs, err := store.VenuesByIDs(ctx, s.DB, []int64{*date.VenueID})
		if err != nil {
			return nil, err
		}
		if len(vs) == 1 {
			p.Venue, p.Address = vs[0].Name, address(&vs[0])
		}
	}
	ts := details[o.ID].Tickets
	for _, t := range ts {
		p.Tickets = append(p.Tickets, ticketdoc.Ticket{Code: t.Code, TicketName: t.TicketName,
			Position: int(t.Position), Total: len(ts), Status: t.Status})
	}
	for _, r := range details[o.ID].Refunds {
		n := 0
		for _, t := range ts {
			if t.RefundID != nil && *t.RefundID == r.ID {
				n++
			}
		}
		p.Refunds = append(p.Refunds, ticketdoc.Refund{Amount: r.Currency + " " + catalog.FormatAmount(r.Amount),
			Status: r.Status, Tickets: n, At: r.CreatedAt.In(loc)})
	}
	return p, nil
}

// address joins a venue's street, city and region.
func address(v *store.Venue) string {
	var parts []string
	for _, p := range []*string{v.Street, v.City, v.State} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	return strings.Join(parts, ", ")
}

// ErrGiveUp wraps the error of a ticket email that will never be sent (the
// mail server refused it for good, or the last attempt failed): its job
// ends, and the order's tickets_email says failed.
var ErrGiveUp = errors.New("tickets: the ticket email is given up")

// SendEmail sends the ticket email of an order whose email is queued, and
// records the outcome: sent, or, on a permanent refusal or when last is
// set (the final attempt), failed, returning an error wrapping ErrGiveUp.
// A temporary failure returns the error to be retried. An order whose
// email is not queued (already sent, failed or never due) sends nothing,
// so a job run twice sends one email.
func (s *Service) SendEmail(ctx context.Context, orderID int64, last bool) error {
	o, err := store.OrderByID(ctx, s.DB, orderID)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: order %d does not exist", ErrGiveUp, orderID)
	}
	if err != nil {
		return err
	}
	if o.TicketsEmailStatus != store.TicketsEmailQueued || o.TicketsToken == nil {
		return nil
	}
	m, err := s.compose(ctx, o)
	if err != nil {
		return err
	}
	return s.send(ctx, m, last, s.observeEmail, func(ctx context.Context, status string) error {
		return store.SetTicketsEmail(ctx, s.DB, o.ID, status, s.Now().UTC())
	})
}

// send sends a buyer's email and records the outcome with record: sent,
// or, on a permanent refusal or when last is set, failed, returning an
// error wrapping ErrGiveUp; a temporary failure is returned to be retried
// and records nothing. observe, when set, learns each outcome.
func (s *Service) send(ctx context.Context, m *mail.Message, last bool, observe func(string),
	record func(ctx context.Context, status string) error) error {
	sendErr := s.Mail.Send(ctx, *m)
	status := store.TicketsEmailSent
	switch {
	case sendErr == nil:
	case mail.IsPermanent(sendErr) || last:
		status = store.TicketsEmailFailed
	default:
		if observe != nil {
			observe("retry")
		}
		return sendErr
	}
	if observe != nil {
		observe(status)
	}
	// Recorded after the server accepted it: a crash in between is the one
	// window in which a retry sends the email twice.
	if err := record(context.WithoutCancel(ctx), status); err != nil {
		return err
	}
	if sendErr != nil {
		return fmt.Errorf("%w: %w", ErrGiveUp, sendErr)
	}
	return nil
}

// observeEmail tells ObserveEmail, when set, an attempt's outcome.
func (s *Service) observeEmail(outcome string) {
	if s.ObserveEmail != nil {
		s.ObserveEmail(outcome)
	}
}

// compose writes the ticket email of an order: from the seller (the
// app's name) on MAIL_FROM's address, the event in the subject, a text
// and an HTML part with the ticket page's link, the PDF attached.
func (s *Service) compose(ctx context.Context, o *store.Order) (*mail.Message, error) {
	p, err := s.page(ctx, o)
	if err != nil {
		return nil, err
	}
	app, err := store.AppByID(ctx, s.DB, o.AppID)
	if err != nil {
		return nil, err
	}
	seller := strings.Join(strings.Fields(app.Name), " ")
	var pdf []byte
	if s.PDFs != nil {
		pdf, err = s.PDFs.PDF(ctx, p)
	} else {
		var buf bytes.Buffer
		err = ticketdoc.RenderPDFContext(ctx, &buf, p)
		pdf = buf.Bytes()
	}
	if err != nil {
		return nil, err
	}
	d := emailData{Order: p, Seller: seller, URL: URL(s.PublicBaseURL, *o.TicketsToken), Count: len(p.Tickets),
		When: p.Start.Format("Mon, 2 Jan 2006 · 3:04 PM MST")}
	var text, html bytes.Buffer
	if err := emailText.Execute(&text, d); err != nil {
		return nil, err
	}
	if err := emailHTML.Execute(&html, d); err != nil {
		return nil, err
	}
	return &mail.Message{
		From: mail.FromSeller(s.From, seller), To: o.CustomerEmail, OrderID: o.ID,
		Subject: fmt.Sprintf("Your tickets for %s", p.EventName),
		Text:    text.String(), HTML: html.String(),
		Attachments: []mail.Attachment{{Name: ticketdoc.PDFName(p), ContentType: "application/pdf", Data: pdf}},
	}, nil
}

// emailData is what the email templates show.
type emailData struct {
	Order  *ticketdoc.Order
	Seller string
	URL    string
	Count  int
	When   string
}

var emailText = texttemplate.Must(texttemplate.New("text").Parse(`Your tickets for {{.Order.EventName}}

{{.When}}
{{if .Order.Venue}}{{.Order.Venue}}{{if .Order.Address}}, {{.Order.Address}}{{end}}{{else}}Online{{end}}

{{.Count}} ticket{{if ne .Count 1}}s{{end}}, order {{.Order.Reference}}, sold by {{.Seller}}:
{{range .Order.Tickets}}  - {{.TicketName}} ({{.Position}} of {{.Total}})
{{end}}
Show them at the door from your ticket page, which has a QR code for each:
{{.URL}}

They are also attached as a PDF. Anyone with the link or the PDF can use the tickets, so keep them to yourself.
`))

var emailHTML = template.Must(template.New("html").Parse(`<!doctype html>
<html><body style="margin:0;padding:24px 12px;background:#f4f4f5;font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#18181b">
<div style="max-width:520px;margin:0 auto;background:#fff;border-radius:12px;padding:24px">
<p style="margin:0 0 4px;color:#52525b;font-size:14px">Your tickets for</p>
<h1 style="margin:0 0 12px;font-size:22px">{{.Order.EventName}}</h1>
<p style="margin:0 0 4px">{{.When}}</p>
<p style="margin:0 0 16px;color:#52525b">{{if .Order.Venue}}{{.Order.Venue}}{{if .Order.Address}}, {{.Order.Address}}{{end}}{{else}}Online{{end}}</p>
<ul style="padding-left:20px;margin:0 0 20px">{{range .Order.Tickets}}<li>{{.TicketName}} ({{.Position}} of {{.Total}})</li>{{end}}</ul>
<p style="margin:0 0 20px"><a href="{{.URL}}" style="display:inline-block;background:#18181b;color:#fff;text-decoration:none;padding:12px 20px;border-radius:8px;font-weight:600">Show my tickets</a></p>
<p style="margin:0;color:#52525b;font-size:13px">Order {{.Order.Reference}}, sold by {{.Seller}}. The tickets are also attached as a PDF. Anyone with the link or the PDF can use them, so keep them to yourself.</p>
</div></body></html>
`))
