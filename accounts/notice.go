package accounts

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/store"
)

// SendSignUpNotice tells an account's owner, by email, that someone tried
// to sign up with the account's address: the one way the owner learns of
// it, since sign-up answers such an attempt as a new sign-up. It holds no
// link that changes anything (a reset link made here would void the
// owner's own), only where to sign in. An error that mail.IsPermanent
// says will never be accepted.
func (s *Service) SendSignUpNotice(ctx context.Context, accountID int64) error {
	acc, err := store.AccountByID(ctx, s.DB, accountID)
	if err != nil {
		return err
	}
	signIn := strings.TrimRight(s.Config.BaseURL, "/") + "/portal/signin"
	return s.Mail.Send(ctx, mail.Message{
		From: s.From, To: acc.Email,
		Subject: "Someone tried to sign up to Boxoffice with your email address",
		Text: fmt.Sprintf(`Hello %s,

Someone tried to create a new Boxoffice developer account with this email address, which already has one. Nothing was created or changed.

If it was you, sign in with your existing account instead: %s
Forgot the password? Ask the Boxoffice team for a one-time link to set a new one.

If it was not you, there is nothing to do: your account and its apps are as they were.
`, acc.Name, signIn),
		HTML: fmt.Sprintf(`<!doctype html><html><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#18181b">
<p>Hello %s,</p>
<p>Someone tried to create a new Boxoffice developer account with this email address, which already has one. Nothing was created or changed.</p>
<p>If it was you, <a href="%s">sign in with your existing account</a> instead. Forgot the password? Ask the Boxoffice team for a one-time link to set a new one.</p>
<p>If it was not you, there is nothing to do: your account and its apps are as they were.</p>
</body></html>`, html.EscapeString(acc.Name), html.EscapeString(signIn)),
	})
}

// SendEndpointDisabledNotice tells an account's owner, by email, that
// deliveries to one of its apps' webhook endpoints stopped after failing
// for WEBHOOK_DISABLE_AFTER: what failed, since when, and how to resume
// and recover the events it missed. It names the endpoint by id and host
// only (a URL's path may carry the receiver's own secret). An error that
// mail.IsPermanent says will never be accepted; store.ErrNotFound when
// the endpoint was deleted since.
func (s *Service) SendEndpointDisabledNotice(ctx context.Context, endpointID string) error {
	ep, err := store.WebhookEndpointByID(ctx, s.DB, endpointID)
	if err != nil {
		return err
	}
	app, err := store.AppByID(ctx, s.DB, ep.AppID)
	if err != nil {
		return err
	}
	acc, err := store.AccountByID(ctx, s.DB, app.AccountID)
	if err != nil {
		return err
	}
	h, err := store.WebhookHealthOf(ctx, s.DB, endpointID)
	if err != nil {
		return err
	}
	host := "(the app's webhook URL)"
	if u, perr := url.Parse(h.URL); perr == nil {
		host = u.Host
	}
	page := fmt.Sprintf("%s/portal/apps/%d", strings.TrimRight(s.Config.BaseURL, "/"), app.ID)
	since := h.FailingSince.UTC().Format(time.RFC1123)
	return s.Mail.Send(ctx, mail.Message{
		From: s.From, To: acc.Email,
		Subject: fmt.Sprintf("Webhooks to %s of %q are disabled", host, app.Name),
		Text: fmt.Sprintf(`Hello %s,

Deliveries of %s events of your app %q to webhook endpoint %s (%s) failed %d times in a row since %s, so Boxoffice stopped sending to it. The last failure: %s.

Events are still recorded. Once the receiver works again, enable the endpoint on the app's page (%s) or with PATCH /api/v1/webhook-endpoints/%s {"status": "enabled"}, then recover what it missed with POST /api/v1/webhook-endpoints/%s/recover.
`, acc.Name, ep.Environment, app.Name, ep.ID, host, h.Failures, since, h.LastError, page, ep.ID, ep.ID),
		HTML: fmt.Sprintf(`<!doctype html><html><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#18181b">
<p>Hello %s,</p>
<p>Deliveries of %s events of your app %s to webhook endpoint <code>%s</code> (%s) failed %d times in a row since %s, so Boxoffice stopped sending to it. The last failure: %s.</p>
<p>Events are still recorded. Once the receiver works again, enable the endpoint on <a href="%s">the app's page</a>, then recover what it missed.</p>
</body></html>`, html.EscapeString(acc.Name), ep.Environment, html.EscapeString(app.Name), ep.ID, html.EscapeString(host), h.Failures, since,
			html.EscapeString(h.LastError), html.EscapeString(page)),
	})
}
