// Package audit records who did what to an account and its apps, and when:
// every partner action in the developer portal and every operator command
// that changes an account. An entry is written in the transaction of the
// change it records, so the log and the data never disagree. Entries name
// keys and secrets only by their environment, never by value.
package audit

import (
	"context"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Actor is who acts: a partner signed in to the portal, or an operator.
type Actor struct {
	Kind string // store.ActorPartner or store.ActorOperator
	IP   string // the partner's client address; "" for operators
}

type actorKey struct{}

// AsPartner returns a context whose changes are recorded as made by a
// partner from ip.
func AsPartner(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, actorKey{}, Actor{Kind: store.ActorPartner, IP: ip})
}

// ActorFrom returns the actor of ctx: the partner of AsPartner, otherwise
// an operator (the CLI and seeding carry no partner).
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return Actor{Kind: store.ActorOperator}
}

// Actions recorded in the log.
const (
	AccountCreate       = "account.create"
	AccountStatus       = "account.status"
	AccountPassword     = "account.password"
	AccountResetLink    = "account.reset_link"
	AccountSignUpTaken  = "account.sign_up_taken"
	SignIn              = "session.sign_in"
	SignInFailed        = "session.sign_in_failed"
	SignOut             = "session.sign_out"
	AppCreate           = "app.create"
	AppRename           = "app.rename"
	AppStatus           = "app.status"
	TicketEmails        = "app.ticket_emails"
	RedirectAdd         = "app.redirect_domain_add"
	RedirectRemove      = "app.redirect_domain_remove"
	WebhookURL          = "app.webhook_url"
	WebhookSecretRotate = "app.webhook_secret_rotate"
	KeyRotate           = "key.rotate"
	KeyRevoke           = "key.revoke"
	WebhookTest         = "webhook.test"
	WebhookRedeliver    = "webhook.redeliver"
	WebhookResume       = "webhook.resume"
	WebhookEndpoint     = "webhook.endpoint"
	WebhookRecover      = "webhook.recover"
)

// Entry is one action to record: on which account (and app), what, and a
// detail that names no secret.
type Entry struct {
	AccountID int64
	AppID     int64 // 0 when the action is not about one app
	Action    string
	Detail    string
}

// Record writes e with ctx's actor at now, in db (the caller's transaction).
func Record(ctx context.Context, db bun.IDB, now time.Time, e Entry) error {
	a := ActorFrom(ctx)
	return store.InsertAuditEntry(ctx, db, &store.AuditEntry{
		AccountID: e.AccountID, AppID: e.AppID, Actor: a.Kind, IP: a.IP,
		Action: e.Action, Detail: strings.TrimSpace(e.Detail), CreatedAt: now.UTC(),
	})
}

// List returns the newest entries first, at most limit (1 to 1000), only
// those of accountID unless it is 0.
func List(ctx context.Context, db bun.IDB, accountID int64, limit int) ([]store.AuditEntry, error) {
	return store.AuditEntries(ctx, db, accountID, min(max(limit, 1), 1000))
}
