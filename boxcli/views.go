package boxcli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/store"
)

// The objects the read commands print with --json. They carry no key,
// key hash or webhook secret: only key hints.

// accountJSON is one account of `accounts list`.
type accountJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Email     string `json:"email"`
	Status    string `json:"status"`
	CreatedAt string `json:"created_at"`
}

// appInfoJSON is one app of `apps list`: the fields `apps update` prints,
// and when it was created and last changed.
type appInfoJSON struct {
	ID              int64    `json:"id"`
	AccountID       int64    `json:"account_id"`
	Name            string   `json:"name"`
	Status          string   `json:"status"`
	RedirectDomains []string `json:"redirect_domains"`
	WebhookURL      string   `json:"webhook_url"`
	TicketEmails    bool     `json:"ticket_emails"`
	CreatedAt       string   `json:"created_at"`
	UpdatedAt       string   `json:"updated_at"`
}

// appShowJSON is `apps show`: the app and the hints of its active keys.
type appShowJSON struct {
	appInfoJSON
	Keys []keyHintJSON `json:"keys"`
}

type keyHintJSON struct {
	Env       string `json:"env"`
	Hint      string `json:"hint"` // the key's last four characters
	CreatedAt string `json:"created_at"`
}

func toAppInfoJSON(a *store.App) appInfoJSON {
	domains := a.RedirectDomains
	if domains == nil {
		domains = []string{}
	}
	return appInfoJSON{ID: a.ID, AccountID: a.AccountID, Name: a.Name, Status: a.Status, RedirectDomains: domains,
		WebhookURL: a.WebhookURL, TicketEmails: a.TicketEmails, CreatedAt: rfc3339(a.CreatedAt), UpdatedAt: rfc3339(a.UpdatedAt)}
}

func printAppShow(w io.Writer, a appShowJSON) {
	fmt.Fprintf(w, "app %d %q of account %d is %s\n", a.ID, a.Name, a.AccountID, a.Status)
	fmt.Fprintf(w, "  redirect domains: %s\n", orNone(strings.Join(a.RedirectDomains, ", ")))
	fmt.Fprintf(w, "  webhook URL:      %s\n", orNone(a.WebhookURL))
	fmt.Fprintf(w, "  ticket emails:    %s\n", onOff(a.TicketEmails))
	for _, env := range []string{store.EnvTest, store.EnvLive} {
		hint := "none active"
		for _, k := range a.Keys {
			if k.Env == env {
				hint = fmt.Sprintf("svc_%s_…%s (issued %s)", env, k.Hint, k.CreatedAt)
			}
		}
		fmt.Fprintf(w, "  %s key:         %s\n", env, hint)
	}
	fmt.Fprintf(w, "  created %s, updated %s\n", a.CreatedAt, a.UpdatedAt)
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// onOff names a switch's state.
func onOff(on bool) string {
	if on {
		return "on (the service emails buyers their tickets)"
	}
	return "off (the app delivers tickets itself)"
}
