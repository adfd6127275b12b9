package accounts

import (
	"context"
	"fmt"
	"html"
	"strings"

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
