package main

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPortalWebhookEndpoints: on an app's webhook page a partner adds an
// endpoint per environment with a filter (its secret shown once),
// disables and enables it, rotates its secret, recovers and redelivers
// from the event log, and deletes it; a refused form says why; another
// app is not found.
func TestPortalWebhookEndpoints(t *testing.T) {
	t.Parallel()
	eachPortal(t, func(t *testing.T, pb *portalBundle) {
		p := pb.demoPerson(t)
		appID := pb.demo.App.App.ID
		page := fmt.Sprintf("/portal/apps/%d/webhooks?env=live", appID)
		base := fmt.Sprintf("/portal/apps/%d/webhooks/live", appID)

		app := p.get(fmt.Sprintf("/portal/apps/%d", appID))
		require.Contains(t, app.Body, `href="/portal/apps/`+fmt.Sprint(appID)+`/webhooks?env=live"`, "the webhook card links to the page")
		require.Contains(t, p.get(page).text(), "No live endpoint yet.")

		res := p.postFrom(page, base+"/endpoints", url.Values{"url": {"https://door.partner.example/in"},
			"events": {"ticket.checked_in", "ticket.voided"}, "description": {"door service"}})
		require.Equal(t, http.StatusSeeOther, res.Status, res.text())
		shown := p.get(res.Location())
		require.Contains(t, shown.text(), "Endpoint added.")
		require.Regexp(t, `<code id="endpoint-secret"[^>]*>whsec_[^<]+</code>`, shown.Body, "the secret, once")
		require.NotContains(t, p.get(res.Location()).Body, `id="endpoint-secret"`, "a reload shows it no more")
		id := regexp.MustCompile(`we_[0-9a-f]{24}`).FindString(shown.Body)
		require.NotEmpty(t, id)
		text := shown.text()
		require.Contains(t, text, "https://door.partner.example/in "+id+" door service ticket.checked_in, ticket.voided enabled")
		require.NotContains(t, p.get(fmt.Sprintf("/portal/apps/%d/webhooks?env=test", appID)).Body, id, "a live endpoint is not a test one")

		res = p.postFrom(page, base+"/endpoints", url.Values{"url": {"http://door.partner.example/in"}, "events": {"order.paid"}})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)
		require.Contains(t, res.text(), "must be an absolute https:// URL")

		res = p.postFrom(page, base+"/endpoints/"+id+"/status", url.Values{"status": {"disabled"}})
		require.Equal(t, http.StatusSeeOther, res.Status, res.text())
		require.Contains(t, p.get(res.Location()).text(), "disabled manual")
		res = p.postFrom(page, base+"/endpoints/"+id+"/recover", url.Values{"since": {"2026-11-28T09:00"}})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)
		require.Contains(t, res.text(), "enable the endpoint before recovering its events")
		res = p.postFrom(page, base+"/endpoints/"+id+"/status", url.Values{"status": {"enabled"}})
		require.Contains(t, p.get(res.Location()).text(), "Endpoint enabled")
		res = p.postFrom(page, base+"/endpoints/"+id+"/recover", url.Values{"since": {"2026-11-28T09:00"}})
		require.Equal(t, http.StatusSeeOther, res.Status, res.text())
		res = p.postFrom(page, base+"/endpoints/"+id+"/recover", url.Values{"since": {"yesterday"}})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)

		res = p.postFrom(page, base+"/endpoints/"+id+"/rotate", nil)
		require.Equal(t, http.StatusSeeOther, res.Status, res.text())
		rotated := p.get(res.Location())
		require.Contains(t, rotated.text(), "New signing secret issued.")
		require.Contains(t, rotated.Body, `id="endpoint-secret"`)

		res = p.postFrom(page, base+"/events/evt_nope/redeliver", nil)
		require.Equal(t, http.StatusNotFound, res.Status)
		require.Contains(t, res.text(), "Webhook event evt_nope was not found for this app.")

		res = p.postFrom(page, base+"/endpoints/"+id+"/delete", nil)
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.NotContains(t, p.get(res.Location()).Body, id)

		gone := p.get("/portal/apps/999/webhooks?env=live")
		require.Equal(t, http.StatusNotFound, gone.Status, "not an app of the account (the rule every app page shares)")
		require.Contains(t, gone.text(), "App 999 was not found in your account.")
		require.Equal(t, http.StatusUnprocessableEntity, p.get(fmt.Sprintf("/portal/apps/%d/webhooks?env=prod", appID)).Status)
	})
}
