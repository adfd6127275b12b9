package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/mail/mailtest"
	"github.com/boxoffice/boxoffice/portal"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/stretchr/testify/require"
)

// portalBundle is a running server whose database URL is known, so the
// CLI can act on it in-process as an operator would.
type portalBundle struct {
	*testBundle
	dbURL string
}

func setupPortal(t *testing.T, kind string, opts ...func(*Config)) *portalBundle {
	t.Helper()
	dbURL := storetest.MigratedURL(t, kind)
	return &portalBundle{testBundle: setup(t, storetest.OpenURL(t, dbURL), opts...), dbURL: dbURL}
}

// eachPortal runs fn on a fresh portal bundle of every database kind.
func eachPortal(t *testing.T, fn func(t *testing.T, pb *portalBundle), opts ...func(*Config)) {
	t.Helper()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) { fn(t, setupPortal(t, kind, opts...)) })
	}
}

// person is someone using the portal in a browser: cookies are kept,
// redirects are not followed (tests check where they lead).
type person struct {
	t      *testing.T
	base   string
	client *http.Client
	// header is sent with every request (Sec-Fetch-Site, Origin, …).
	header http.Header
}

func (pb *portalBundle) person(t *testing.T) *person {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &person{t: t, base: pb.srv.URL, header: http.Header{}, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// portalPage is a portal answer as a person's browser got it.
type portalPage struct {
	Status int
	Header http.Header
	Body   string
}

// Location is where a redirect leads.
func (a *portalPage) Location() string { return a.Header.Get("Location") }

// text is the page's text, tags dropped and entities decoded, for
// asserting on what a reader sees.
func (a *portalPage) text() string {
	s := regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(a.Body, " ")
	s = strings.Join(strings.Fields(html.UnescapeString(s)), " ")
	return strings.NewReplacer(" .", ".", " ,", ",").Replace(s)
}

func (p *person) do(method, path string, form url.Values) *portalPage {
	p.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, p.base+path, body)
	require.NoError(p.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, vs := range p.header {
		req.Header[k] = vs
	}
	res, err := p.client.Do(req)
	require.NoError(p.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(p.t, err)
	a := &portalPage{Status: res.StatusCode, Header: res.Header, Body: string(raw)}
	requirePortalHeaders(p.t, path, a)
	return a
}

func (p *person) get(path string) *portalPage { p.t.Helper(); return p.do(http.MethodGet, path, nil) }

// post sends a form as it is.
func (p *person) post(path string, form url.Values) *portalPage {
	p.t.Helper()
	return p.do(http.MethodPost, path, form)
}

// postFrom opens the page at from, then posts form to path with that
// page's form token.
func (p *person) postFrom(from, path string, form url.Values) *portalPage {
	p.t.Helper()
	page := p.get(from)
	require.Equal(p.t, http.StatusOK, page.Status, "GET %s: %s", from, page.text())
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", csrfOf(p.t, page))
	return p.post(path, form)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([A-Za-z0-9_-]+)"`)

func csrfOf(t *testing.T, a *portalPage) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(a.Body)
	require.NotNil(t, m, "no form token in the page")
	return m[1]
}

// revealed returns a key or secret a page shows once, by its element id.
func revealed(t *testing.T, a *portalPage, id string) string {
	t.Helper()
	m := regexp.MustCompile(`<code id="` + id + `"[^>]*>([^<]+)</code>`).FindStringSubmatch(a.Body)
	require.NotNil(t, m, "no %s on the page", id)
	return html.UnescapeString(m[1])
}

// requirePortalHeaders checks what every portal portalPage carries.
func requirePortalHeaders(t *testing.T, path string, a *portalPage) {
	t.Helper()
	if !strings.HasPrefix(path, "/portal") {
		return
	}
	require.Equal(t, portal.ContentSecurityPolicy, a.Header.Get("Content-Security-Policy"), path)
	require.Equal(t, "nosniff", a.Header.Get("X-Content-Type-Options"), path)
	require.Equal(t, "same-origin", a.Header.Get("Referrer-Policy"), path)
	require.Equal(t, "DENY", a.Header.Get("X-Frame-Options"), path)
	if strings.HasPrefix(a.Header.Get("Content-Type"), "text/html") {
		require.Equal(t, "no-store", a.Header.Get("Cache-Control"), path)
		// No inline script and no inline style: the CSP would block them.
		for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(a.Body, -1) {
			require.Contains(t, tag, ` src="/portal/assets/`, path)
		}
		require.NotRegexp(t, `<script[^>]*>[^<]`, a.Body, path)
		require.NotContains(t, a.Body, " style=", path)
		require.NotRegexp(t, `\son[a-z]+=`, a.Body, path)
	}
}

// signIn signs a person in and checks where they land.
func (p *person) signIn(email, password, landing string) {
	p.t.Helper()
	res := p.post("/portal/signin", url.Values{"email": {email}, "password": {password}})
	require.Equal(p.t, http.StatusSeeOther, res.Status, "sign in: %s", res.text())
	require.Equal(p.t, landing, res.Location())
}

const partnerPassword = "a long enough secret"

func TestPortalSignUpApproval(t *testing.T) {
	t.Parallel()
	eachPortal(t, func(t *testing.T, pb *portalBundle) {
		p := pb.person(t)
		form := p.get("/portal/signup")
		require.Equal(t, http.StatusOK, form.Status)
		require.Contains(t, form.Body, `<label for="f-email">Email</label>`)
		require.Contains(t, form.Body, `autocomplete="new-password"`)

		t.Run("ErrValidation", func(t *testing.T) {
			for _, tt := range []struct {
				form  url.Values
				field string
				msg   string
			}{
				{url.Values{"name": {""}, "email": {"kofi@partner.example"}, "password": {partnerPassword}}, "name", "Name is required."},
				{url.Values{"name": {"Kofi"}, "email": {"kofi@"}, "password": {partnerPassword}}, "email", `Email "kofi@" is not a valid email address.`},
				{url.Values{"name": {strings.Repeat("K", 201)}, "email": {"kofi@partner.example"}, "password": {partnerPassword}}, "name", "Name must be at most 200 characters."},
				{url.Values{"name": {"Kofi\u202Eexe."}, "email": {"kofi@partner.example"}, "password": {partnerPassword}}, "name", "Name must not contain invisible or formatting characters."},
				{url.Values{"name": {"Kofi"}, "email": {strings.Repeat("k", 243) + "@example.com"}, "password": {partnerPassword}}, "email", "Email must be at most 254 characters."},
				{url.Values{"name": {"Kofi"}, "email": {"kofi@partner.example"}, "password": {"short"}}, "password", "Password must be at least 10 characters long."},
			} {
				res := p.post("/portal/signup", tt.form)
				require.Equal(t, http.StatusUnprocessableEntity, res.Status)
				require.Contains(t, res.text(), tt.msg)
				require.Contains(t, res.Body, `id="f-`+tt.field+`" name="`+tt.field+`"`)
				require.Regexp(t, `id="f-`+tt.field+`"[^>]*aria-invalid="true" aria-describedby="f-`+tt.field+`-err`, res.Body)
				if tt.field != "name" {
					require.Contains(t, res.Body, `value="`+html.EscapeString(tt.form.Get("name"))+`"`, "what was typed stays")
				}
				require.NotContains(t, res.Body, tt.form.Get("password"), "a password is never sent back")
			}
		})

		res := p.post("/portal/signup", url.Values{"name": {"Kofi Tickets"}, "email": {"Kofi@Partner.example"}, "password": {partnerPassword}})
		require.Equal(t, http.StatusCreated, res.Status, res.text())
		require.Contains(t, res.text(), "Your account kofi@partner.example is awaiting approval.")

		// Pending: signing in shows the status, and nothing else is allowed.
		p.signIn("kofi@partner.example", partnerPassword, "/portal/account")
		acct := p.get("/portal/account")
		require.Equal(t, http.StatusOK, acct.Status)
		require.Contains(t, acct.text(), "Your account is awaiting approval.")
		apps := p.get("/portal/apps")
		require.Equal(t, http.StatusForbidden, apps.Status)
		require.Contains(t, apps.text(), "Your account is awaiting approval. You can use the portal once an operator activates it.")
		create := p.postFrom("/portal/account", "/portal/apps", url.Values{"name": {"Sneaky"}})
		require.Equal(t, http.StatusForbidden, create.Status)
		n, err := store.CountApps(context.Background(), pb.db)
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the demo app")

		// The operator finds the account and approves it, with the CLI.
		list := mustJSON(t, pb.dbURL, "accounts", "list", "--status", "pending_approval", "--json")
		accounts := list["accounts"].([]any)
		require.Len(t, accounts, 1)
		kofi := accounts[0].(map[string]any)
		require.ElementsMatch(t, []string{"id", "name", "email", "status", "created_at"}, keys(kofi))
		require.Equal(t, "kofi@partner.example", kofi["email"])
		_, err = runCLI(t, pb.dbURL, "accounts", "set-status", fmt.Sprint(kofi["id"]), "active")
		require.NoError(t, err)

		home := p.get("/portal/")
		require.Equal(t, http.StatusSeeOther, home.Status)
		require.Equal(t, "/portal/apps", home.Location(), "the same session may act now")
		apps = p.get("/portal/apps")
		require.Equal(t, http.StatusOK, apps.Status)
		require.Contains(t, apps.text(), "No apps yet.")
	})
}

// TestPortalSignUpExistingEmail: signing up with an email that has an
// account answers exactly as a new sign-up does, and creates nothing.
func TestPortalSignUpExistingEmail(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, false)
	eachPortal(t, func(t *testing.T, pb *portalBundle) {
		sent := len(srv.Messages())
		pb.startJobs(t)
		form := func(email string) url.Values {
			return url.Values{"name": {"Kofi Tickets"}, "email": {email}, "password": {partnerPassword}}
		}
		fresh := pb.person(t).post("/portal/signup", form("Kofi@Partner.example"))
		require.Equal(t, http.StatusCreated, fresh.Status, fresh.text())
		before, err := store.ListAccounts(context.Background(), pb.db, "")
		require.NoError(t, err)
		for _, tt := range []struct{ name, email string }{
			{"SameEmail", "Kofi@Partner.example"},
			{"OtherCase", "KOFI@partner.example"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				p := pb.person(t)
				res := p.post("/portal/signup", form(tt.email))
				require.Equal(t, fresh.Status, res.Status)
				require.Equal(t, fresh.Body, res.Body, "the very page a new account gets")
				for _, h := range []string{"Content-Type", "Set-Cookie", "Location"} {
					require.Equal(t, fresh.Header.Values(h), res.Header.Values(h), h)
				}
				after, err := store.ListAccounts(context.Background(), pb.db, "")
				require.NoError(t, err)
				require.Equal(t, before, after, "nothing created or changed")
			})
		}
		demo := pb.person(t).post("/portal/signup", form(seed.DemoEmail))
		require.Equal(t, http.StatusCreated, demo.Status, "an active account's email too")
		require.Contains(t, demo.text(), "Your account demo@boxoffice.test is awaiting approval.")
		pb.demoPerson(t) // its owner signs in as before

		// The owners are told, once each however many attempts: the
		// only place the attempt shows besides their audit log.
		var to []string
		waitFor(t, 20*time.Second, "both owners' notices", func() bool {
			to = to[:0]
			for _, m := range srv.Messages()[sent:] {
				to = append(to, m.To...)
			}
			return len(to) >= 2
		})
		require.ElementsMatch(t, []string{"kofi@partner.example", seed.DemoEmail}, to)
		m := srv.Messages()[sent]
		require.Contains(t, string(m.Data), "Someone tried to create a new Boxoffice developer account")
		require.Contains(t, string(m.Data), pb.m.Config.PublicBaseURL+"/portal/signin")
		time.Sleep(3 * fastJobsPoll) // a second notice would be due by now
		require.Len(t, srv.Messages(), sent+2, "one notice per account per hour")
	}, withSMTP(srv))
}

// TestPortalAppCap: the portal refuses an app beyond MAX_APPS_PER_ACCOUNT
// and says why, on the apps page.
func TestPortalAppCap(t *testing.T) {
	t.Parallel()
	eachPortal(t, func(t *testing.T, pb *portalBundle) {
		p := pb.demoPerson(t) // the demo account has one app
		res := p.postFrom("/portal/apps", "/portal/apps", url.Values{"name": {"Kiosk"}})
		require.Equal(t, http.StatusSeeOther, res.Status, res.text())
		res = p.postFrom("/portal/apps", "/portal/apps", url.Values{"name": {"One too many"}})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status)
		require.Contains(t, res.text(), "Your account already has 2 apps, the most one account may have; ask the Boxoffice team if you need more.")
		require.Contains(t, res.Body, `value="One too many"`, "what was typed stays")
		n, err := store.CountApps(context.Background(), pb.db)
		require.NoError(t, err)
		require.Equal(t, 2, n)
	}, func(c *Config) { c.MaxAppsPerAccount = 2 })
}

// demoPerson is the demo partner, signed in.
func (pb *portalBundle) demoPerson(t *testing.T) *person {
	t.Helper()
	require.NotEmpty(t, pb.demo.Password, "the demo account is seeded with a password")
	p := pb.person(t)
	p.signIn(seed.DemoEmail, pb.demo.Password, "/portal/apps")
	return p
}

func TestPortalAppForms(t *testing.T) {
	t.Parallel()
	eachPortal(t, func(t *testing.T, pb *portalBundle) {
		p := pb.demoPerson(t)
		demo := fmt.Sprintf("/portal/apps/%d", pb.demo.App.App.ID)
		page := p.get(demo)
		require.Equal(t, http.StatusOK, page.Status)
		require.Contains(t, page.text(), "Demo ticket shop")
		require.Contains(t, page.Body, "<code>svc_test_…"+pb.testKey[len(pb.testKey)-4:]+"</code>", "a key shows as its prefix and last four")
		require.NotContains(t, page.Body, pb.testKey)
		require.NotContains(t, page.Body, pb.demo.App.WebhookSecret)

		t.Run("CreateApp", func(t *testing.T) {
			res := p.postFrom("/portal/apps", "/portal/apps", url.Values{"name": {" "}})
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Contains(t, res.text(), "Name is required.")

			before, err := store.CountApps(context.Background(), pb.db)
			require.NoError(t, err)
			res = p.postFrom("/portal/apps", "/portal/apps", url.Values{"name": {"Web shop"}})
			require.Equal(t, http.StatusSeeOther, res.Status, "POST/redirect/GET: %s", res.text())
			created := res.Location()
			require.Regexp(t, `^/portal/apps/[0-9]+\?done=created$`, created)
			appPage := strings.TrimSuffix(created, "?done=created")
			require.NotContains(t, res.Header.Get("Set-Cookie"), "svc_", "the keys travel sealed")
			require.Contains(t, res.Header.Get("Set-Cookie"), "Path="+appPage+";", "to that app's page only")
			require.Contains(t, res.Header.Get("Set-Cookie"), "HttpOnly")
			res = p.get(created)
			require.Equal(t, http.StatusOK, res.Status)
			require.Contains(t, res.text(), "App created with a test key, a live key and a webhook signing secret.")
			require.Contains(t, res.text(), "Web shop")
			key := revealed(t, res, "test-key")
			require.Regexp(t, testKeyRE, key)
			require.Regexp(t, liveKeyRE, revealed(t, res, "live-key"))
			require.Regexp(t, `^whsec_`, revealed(t, res, "webhook-secret"))
			require.Contains(t, res.Body, `<button type="button" class="copy small" data-copy="test-key">Copy</button>`)
			require.Equal(t, http.StatusOK, pb.get(t, "/api/v1/events", key).Status, "the new key works")

			// A reload shows nothing twice and creates nothing.
			again := p.get(created)
			require.Equal(t, http.StatusOK, again.Status)
			require.NotContains(t, again.Body, key, "shown once")
			require.NotContains(t, again.Body, `id="test-key"`)
			require.Contains(t, again.text(), "Keys and secrets are shown only once, right after they are made; this page no longer shows them.")
			after, err := store.CountApps(context.Background(), pb.db)
			require.NoError(t, err)
			require.Equal(t, before+1, after, "one app, however often the page is reloaded")
			list := p.get("/portal/apps")
			require.Contains(t, list.text(), "Web shop")
			require.NotContains(t, list.Body, key, "shown once")

			// A sealed reveal opens for its own session and app only.
			res = p.postFrom("/portal/apps", demo+"/keys/test/rotate", nil)
			require.Equal(t, http.StatusSeeOther, res.Status)
			sealed := regexp.MustCompile(`boxoffice_reveal=([^;]+)`).FindStringSubmatch(res.Header.Get("Set-Cookie"))
			require.NotNil(t, sealed)
			intruder := pb.person(t)
			intruder.signIn(seed.DemoEmail, pb.demo.Password, "/portal/apps")
			u, err := url.Parse(pb.srv.URL)
			require.NoError(t, err)
			intruder.client.Jar.SetCookies(u.JoinPath(demo), []*http.Cookie{{Name: "boxoffice_reveal", Value: sealed[1], Path: demo}})
			stolen := intruder.get(res.Location())
			require.Equal(t, http.StatusOK, stolen.Status)
			require.NotContains(t, stolen.Body, `id="test-key"`, "another session cannot open it")
			shown := p.get(res.Location())
			pb.testKey = revealed(t, shown, "test-key")
			require.Equal(t, http.StatusOK, pb.get(t, "/api/v1/events", pb.testKey).Status)
		})
		t.Run("RotateAndRevokeKeys", func(t *testing.T) {
			res := p.postFrom(demo, demo+"/keys/test/rotate", nil)
			require.Equal(t, http.StatusSeeOther, res.Status, res.text())
			require.Equal(t, demo+"?done=key-rotated-test", res.Location())
			res = p.get(res.Location())
			key := revealed(t, res, "test-key")
			require.Regexp(t, testKeyRE, key)
			require.Contains(t, res.text(), "New test key issued.")
			require.Equal(t, http.StatusUnauthorized, pb.get(t, "/api/v1/events", pb.testKey).Status, "the old key is refused at once")
			require.Equal(t, http.StatusOK, pb.get(t, "/api/v1/events", key).Status)
			pb.testKey = key

			res = p.postFrom(demo, demo+"/keys/live/revoke", nil)
			require.Equal(t, http.StatusSeeOther, res.Status)
			require.Equal(t, demo+"?done=key-revoked", res.Location())
			require.Contains(t, p.get(res.Location()).text(), "Key revoked. Requests with it now answer 401 invalid_api_key.")
			require.Equal(t, http.StatusUnauthorized, pb.get(t, "/api/v1/events", pb.liveKey).Status)
			res = p.postFrom(demo, demo+"/keys/live/revoke", nil)
			require.Equal(t, http.StatusNotFound, res.Status)
			require.Contains(t, res.text(), "App 1 has no active live key.")
			res = p.postFrom(demo, demo+"/keys/prod/rotate", nil)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Contains(t, res.text(), `Environment "prod" is not one of test, live.`)
		})
		t.Run("RedirectDomains", func(t *testing.T) {
			res := p.postFrom(demo, demo+"/redirect-domains", url.Values{"redirect-domain": {"https://shop.example.com/done"}})
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Contains(t, res.text(), `Redirect host "https://shop.example.com/done" is not a host name such as shop.example.com.`)
			require.Contains(t, res.Body, `value="https://shop.example.com/done"`, "what was typed stays")

			res = p.postFrom(demo, demo+"/redirect-domains", url.Values{"redirect-domain": {"Shop.Example.com"}})
			require.Equal(t, http.StatusSeeOther, res.Status)
			require.Contains(t, p.get(demo).Body, "<code>shop.example.com</code>")
			res = p.postFrom(demo, demo+"/redirect-domains/remove", url.Values{"redirect-domain": {"shop.example.com"}})
			require.Equal(t, http.StatusSeeOther, res.Status)
			require.NotContains(t, p.get(demo).Body, "<code>shop.example.com</code>")
		})
		t.Run("Webhooks", func(t *testing.T) {
			res := p.postFrom(demo, demo+"/test-event", url.Values{"env": {"test"}})
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Contains(t, res.text(), "Webhook URL is not set for app 1: set one before sending a test event.")

			res = p.postFrom(demo, demo+"/webhook-url", url.Values{"webhook-url": {"http://hooks.partner.example/in"}})
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Contains(t, res.text(), `Webhook URL "http://hooks.partner.example/in" must be an absolute https:// URL.`)
			res = p.postFrom(demo, demo+"/webhook-url", url.Values{"webhook-url": {"https://10.0.0.5/in"}})
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Contains(t, res.text(), "points at a special-purpose address (private use (RFC 1918)), which never receives webhooks; "+
				"to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to https://10.0.0.5/in.")
			res = p.postFrom(demo, demo+"/webhook-url", url.Values{"webhook-url": {"http://localhost:3000/hooks"}})
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Contains(t, res.text(), `Webhook URL "http://localhost:3000/hooks" must be an absolute https:// URL; `+
				"to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to http://localhost:3000/hooks.")
			const hook = "https://hooks.partner.example/in?k="
			res = p.postFrom(demo, demo+"/webhook-url", url.Values{"webhook-url": {hook + strings.Repeat("k", 2049-len(hook))}})
			require.Equal(t, http.StatusUnprocessableEntity, res.Status)
			require.Contains(t, res.text(), "Webhook URL must be at most 2048 characters.")
			res = p.postFrom(demo, demo+"/webhook-url", url.Values{"webhook-url": {hook + strings.Repeat("k", 2048-len(hook))}})
			require.Equal(t, http.StatusSeeOther, res.Status, "a webhook URL of 2,048 characters")
			res = p.postFrom(demo, demo+"/webhook-url", url.Values{"webhook-url": {"https://hooks.partner.example/in"}})
			require.Equal(t, http.StatusSeeOther, res.Status)
			require.Contains(t, p.get(demo).Body, `value="https://hooks.partner.example/in"`)

			res = p.postFrom(demo, demo+"/webhook-secret", nil)
			require.Equal(t, http.StatusSeeOther, res.Status)
			res = p.get(res.Location())
			require.Contains(t, res.text(), "New webhook signing secret issued")
			secret := revealed(t, res, "webhook-secret")
			app, err := store.AppByID(context.Background(), pb.db, pb.demo.App.App.ID)
			require.NoError(t, err)
			require.Equal(t, secret, app.WebhookSecret)

			res = p.postFrom(demo, demo+"/test-event", url.Values{"env": {"live"}})
			require.Equal(t, http.StatusSeeOther, res.Status)
			log := p.get(res.Location())
			require.Contains(t, log.text(), "Test event queued.")
			ev := regexp.MustCompile(`<code class="small">(evt_[0-9a-f]{32})</code>`).FindStringSubmatch(log.Body)
			require.NotNil(t, ev, "the event is in the delivery log")
			require.Contains(t, log.text(), "webhook.test "+ev[1]+" live pending 0")

			// Its first delivery is still queued: one delivery chain per event.
			res = p.postFrom(demo, demo+"/events/"+ev[1]+"/redeliver", nil)
			require.NotEqual(t, http.StatusInternalServerError, res.Status)
			require.Contains(t, res.text()+p.get(res.Location()).text(), "still under way")
			res = p.postFrom(demo, demo+"/events/evt_nope/redeliver", nil)
			require.Equal(t, http.StatusNotFound, res.Status)
		})
		t.Run("Orders", func(t *testing.T) {
			var refs []string
			for range 2 {
				res := pb.checkout(t, pb.testKey, newIdemKey(), pb.highlife(1))
				require.Equal(t, http.StatusCreated, res.Status, "checkout: %s", res.Raw)
				refs = append(refs, res.data()["order_reference"].(string))
			}
			list := p.get(demo)
			require.Regexp(t, `(?s)`+refs[1]+`.*`+refs[0], list.Body, "newest first")
			require.Contains(t, list.text(), refs[0]+" pending GHS 120.00")
			// A part of the reference's random tail, in capitals: its head
			// is the time of creation, which both orders may share.
			found := p.get(demo + "?env=test&reference=" + strings.ToUpper(refs[0][len(refs[0])-10:len(refs[0])-2]))
			require.Contains(t, found.Body, refs[0])
			require.NotContains(t, found.Body, refs[1])
			live := p.get(demo + "?env=live")
			require.Contains(t, live.text(), "No live orders yet.")
			bad := p.get(demo + "?reference=50%25")
			require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
			require.Contains(t, bad.text(), "Reference may hold only letters, digits, '_' and '-' (at most 64), as order references do.")
			require.Contains(t, bad.Body, refs[0], "the page still shows the orders")

			// The buyer's email, in another case: both orders are Ama's.
			byEmail := p.get(demo + "?env=test&email=AMA%40Example.com")
			require.Equal(t, http.StatusOK, byEmail.Status)
			require.Contains(t, byEmail.text(), "Newest test orders first, bought by AMA@Example.com")
			require.Regexp(t, `(?s)`+refs[1]+`.*`+refs[0], byEmail.Body)
			require.Contains(t, p.get(demo+"?env=test&email=kofi%40example.com").text(), "No test order was bought by kofi@example.com.")
			badEmail := p.get(demo + "?email=ama")
			require.Equal(t, http.StatusUnprocessableEntity, badEmail.Status)
			require.Contains(t, badEmail.text(), "Email must be a valid email address (a buyer's whole address, such as ama@example.com).")
			require.Contains(t, badEmail.Body, `value="ama"`, "the search keeps what was typed")
			require.Contains(t, badEmail.Body, refs[0], "the page still shows the orders")
			badLog := p.get(demo + "?events=bm9wZQ")
			require.Equal(t, http.StatusUnprocessableEntity, badLog.Status)
			require.Contains(t, badLog.text(), "The delivery log's page is not a page of this log: open the log from its first page.")
		})
		t.Run("ErrNotYourApp", func(t *testing.T) {
			other := pb.person(t)
			res := other.post("/portal/signup", url.Values{"name": {"Other"}, "email": {"other@partner.example"}, "password": {partnerPassword}})
			require.Equal(t, http.StatusCreated, res.Status)
			_, err := runCLI(t, pb.dbURL, "accounts", "set-status", "2", "active")
			require.NoError(t, err)
			other.signIn("other@partner.example", partnerPassword, "/portal/apps")
			res = other.get(demo)
			require.Equal(t, http.StatusNotFound, res.Status)
			require.Contains(t, res.text(), "App 1 was not found in your account.")
			res = other.postFrom("/portal/apps", demo+"/keys/test/rotate", nil)
			require.Equal(t, http.StatusNotFound, res.Status)
			require.Equal(t, http.StatusOK, pb.get(t, "/api/v1/events", pb.testKey).Status, "nothing changed")
		})
		t.Run("Audit", func(t *testing.T) {
			out := mustJSON(t, pb.dbURL, "audit", "list", "--account", "1", "--json")
			entries := out["entries"].([]any)
			var got []string
			for _, e := range entries {
				m := e.(map[string]any)
				require.ElementsMatch(t, []string{"id", "at", "account_id", "app_id", "actor", "ip", "action", "detail"}, keys(m))
				for _, secret := range []string{pb.testKey, pb.liveKey, pb.demo.Password} {
					require.NotContains(t, m["detail"], secret)
				}
				if m["actor"] == "partner" {
					require.Equal(t, "127.0.0.1", m["ip"])
				}
				got = append(got, m["action"].(string))
			}
			require.Subset(t, got, []string{"session.sign_in", "app.create", "key.rotate", "key.revoke", "app.redirect_domain_add",
				"app.redirect_domain_remove", "app.webhook_url", "app.webhook_secret_rotate", "webhook.test"}) // the redeliver was refused (its first delivery is queued), so not audited
		})
	})
}

func TestPortalCrossSitePosts(t *testing.T) {
	t.Parallel()
	pb := setupPortal(t, "sqlite")
	p := pb.demoPerson(t)
	demo := fmt.Sprintf("/portal/apps/%d", pb.demo.App.App.ID)
	token := csrfOf(t, p.get(demo))

	refused := func(t *testing.T, res *portalPage) {
		t.Helper()
		require.Equal(t, http.StatusForbidden, res.Status)
		require.Equal(t, http.StatusOK, pb.get(t, "/api/v1/events", pb.testKey).Status, "the key was not rotated")
	}
	t.Run("SecFetchSite", func(t *testing.T) {
		p.header.Set("Sec-Fetch-Site", "cross-site")
		defer p.header.Del("Sec-Fetch-Site")
		res := p.post(demo+"/keys/test/rotate", url.Values{"csrf": {token}})
		refused(t, res)
		require.Contains(t, res.text(), "This form was sent from another site, so it was not accepted.")
		res = p.post("/portal/signin", url.Values{"email": {seed.DemoEmail}, "password": {pb.demo.Password}})
		require.Equal(t, http.StatusForbidden, res.Status, "no signing in from another site either")
	})
	t.Run("Origin", func(t *testing.T) {
		p.header.Set("Origin", "https://evil.example")
		defer p.header.Del("Origin")
		refused(t, p.post(demo+"/keys/test/rotate", url.Values{"csrf": {token}}))
	})
	t.Run("NoFormToken", func(t *testing.T) {
		res := p.post(demo+"/keys/test/rotate", url.Values{})
		refused(t, res)
		require.Contains(t, res.text(), "This form has expired or did not come from the portal.")
		refused(t, p.post(demo+"/keys/test/rotate", url.Values{"csrf": {"forged"}}))
		other := pb.person(t)
		other.post("/portal/signup", url.Values{"name": {"X"}, "email": {"x@partner.example"}, "password": {partnerPassword}})
		other.signIn("x@partner.example", partnerPassword, "/portal/account")
		refused(t, p.post(demo+"/keys/test/rotate", url.Values{"csrf": {csrfOf(t, other.get("/portal/account"))}}))
	})
	t.Run("SameOrigin", func(t *testing.T) {
		p.header.Set("Sec-Fetch-Site", "same-origin")
		defer p.header.Del("Sec-Fetch-Site")
		res := p.post(demo+"/keys/test/rotate", url.Values{"csrf": {token}})
		require.Equal(t, http.StatusSeeOther, res.Status, "the portal's own form goes through")
		require.Equal(t, demo+"?done=key-rotated-test", res.Location())
	})
}

func TestPortalSignInLimits(t *testing.T) {
	t.Parallel()
	t.Run("PerAccount", func(t *testing.T) {
		pb := setupPortal(t, "sqlite", func(c *Config) { c.Portal.SignInPerAccount = 3 })
		p := pb.person(t)
		for range 3 {
			res := p.post("/portal/signin", url.Values{"email": {seed.DemoEmail}, "password": {"not the password"}})
			require.Equal(t, http.StatusUnauthorized, res.Status)
			require.Contains(t, res.text(), "The email address or password is not right.")
			require.Contains(t, res.Body, `value="`+seed.DemoEmail+`"`, "the email stays filled in")
		}
		res := p.post("/portal/signin", url.Values{"email": {seed.DemoEmail}, "password": {pb.demo.Password}})
		require.Equal(t, http.StatusTooManyRequests, res.Status, "even the right password waits")
		require.Regexp(t, `^[1-9][0-9]*$`, res.Header.Get("Retry-After"))
		require.Regexp(t, `Too many attempts. Wait (a minute|[0-9]+ minutes) and try again.`, res.text())
		require.Empty(t, res.Header.Get("Set-Cookie"))
	})
	t.Run("PerIP", func(t *testing.T) {
		pb := setupPortal(t, "sqlite", func(c *Config) { c.Portal.SignInPerIP = 2 })
		p := pb.person(t)
		for _, who := range []string{"a@x.example", "b@x.example"} {
			res := p.post("/portal/signin", url.Values{"email": {who}, "password": {"whatever it is"}})
			require.Equal(t, http.StatusUnauthorized, res.Status)
		}
		res := p.post("/portal/signin", url.Values{"email": {seed.DemoEmail}, "password": {pb.demo.Password}})
		require.Equal(t, http.StatusTooManyRequests, res.Status)
		res = p.post("/portal/signup", url.Values{"name": {"C"}, "email": {"c@x.example"}, "password": {partnerPassword}})
		require.Equal(t, http.StatusTooManyRequests, res.Status, "sign-ups count against the address too")
	})
}

func TestPortalSessions(t *testing.T) {
	t.Parallel()
	pb := setupPortal(t, "sqlite")
	ctx := context.Background()
	cookieOf := func(t *testing.T, res *portalPage) string {
		t.Helper()
		for _, c := range res.Header.Values("Set-Cookie") {
			if strings.HasPrefix(c, portal.CookieName+"=") {
				return c
			}
		}
		t.Fatalf("no %s cookie in %v", portal.CookieName, res.Header)
		return ""
	}

	t.Run("Cookie", func(t *testing.T) {
		p := pb.person(t)
		res := p.post("/portal/signin", url.Values{"email": {seed.DemoEmail}, "password": {pb.demo.Password}})
		c := cookieOf(t, res)
		require.Regexp(t, `^boxoffice_portal=[A-Za-z0-9_-]{43}; Path=/portal; Expires=[^;]+; HttpOnly; SameSite=Lax$`, c, "not Secure on http://")

		secure := setupPortal(t, "sqlite", func(c *Config) { c.PublicBaseURL = "https://boxoffice.example" })
		res = secure.person(t).post("/portal/signin", url.Values{"email": {seed.DemoEmail}, "password": {secure.demo.Password}})
		require.Contains(t, cookieOf(t, res), "; HttpOnly; Secure; SameSite=Lax", "Secure when PUBLIC_BASE_URL is https")
	})
	t.Run("SignOut", func(t *testing.T) {
		p := pb.demoPerson(t)
		u, _ := url.Parse(pb.srv.URL + "/portal/")
		value := p.client.Jar.Cookies(u)[0].Value
		res := p.postFrom("/portal/apps", "/portal/signout", nil)
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, "/portal/signin", res.Location())
		require.Contains(t, cookieOf(t, res), "Max-Age=0")
		require.Equal(t, "/portal/signin", p.get("/portal/apps").Location())

		// The old cookie value, replayed, is dead on the server too.
		replay := pb.person(t)
		replay.header.Set("Cookie", portal.CookieName+"="+value)
		res = replay.get("/portal/apps")
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, "/portal/signin", res.Location())
	})
	t.Run("Expiry", func(t *testing.T) {
		p := pb.demoPerson(t)
		require.Equal(t, http.StatusOK, p.get("/portal/apps").Status)
		// Twelve hours later, as far as the session knows.
		_, err := pb.db.NewUpdate().Model((*store.PortalSession)(nil)).
			Set("expires_at = ?", time.Now().UTC().Add(-time.Second)).Where("1 = 1").Exec(ctx)
		require.NoError(t, err)
		res := p.get("/portal/apps")
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, "/portal/signin?expired=1", res.Location())
		require.Contains(t, cookieOf(t, res), "Max-Age=0")
		require.Contains(t, p.get(res.Location()).text(), "Your session has expired; sign in again.")
		p.signIn(seed.DemoEmail, pb.demo.Password, "/portal/apps")
	})
	t.Run("NotSignedIn", func(t *testing.T) {
		p := pb.person(t)
		for _, path := range []string{"/portal/", "/portal/apps", "/portal/apps/1", "/portal/account"} {
			res := p.get(path)
			require.Equal(t, http.StatusSeeOther, res.Status, path)
			require.Equal(t, "/portal/signin", res.Location(), path)
		}
		res := p.post("/portal/apps/1/keys/test/rotate", url.Values{})
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, http.StatusOK, pb.get(t, "/api/v1/events", pb.testKey).Status)
	})
	t.Run("Disabled", func(t *testing.T) {
		p := pb.demoPerson(t)
		_, err := runCLI(t, pb.dbURL, "accounts", "set-status", "1", "disabled")
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = runCLI(t, pb.dbURL, "accounts", "set-status", "1", "active") })
		res := p.get("/portal/account")
		require.Equal(t, http.StatusOK, res.Status)
		require.Contains(t, res.text(), "Your account is disabled")
		res = p.get("/portal/apps/1")
		require.Equal(t, http.StatusForbidden, res.Status)
		require.Contains(t, res.text(), "Your account is disabled. Contact the Boxoffice team to have it reactivated.")
		res = p.postFrom("/portal/account", "/portal/apps/1/keys/test/rotate", nil)
		require.Equal(t, http.StatusForbidden, res.Status)
		require.Equal(t, "/portal/account", p.get("/portal/").Location())
	})
}

func TestPortalResetLink(t *testing.T) {
	t.Parallel()
	pb := setupPortal(t, "sqlite", func(c *Config) { c.PublicBaseURL = "http://boxoffice.test" })
	p := pb.demoPerson(t)

	out := mustJSON(t, pb.dbURL, "--public-base-url", "https://tickets.example", "accounts", "reset-link", "1", "--json")
	require.ElementsMatch(t, []string{"account_id", "url", "expires_at"}, keys(out))
	link := out["url"].(string)
	require.Regexp(t, `^https://tickets\.example/portal/reset/[A-Za-z0-9_-]{43}$`, link)
	expires, err := time.Parse(time.RFC3339, out["expires_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(24*time.Hour), expires, time.Minute)
	// A second link voids the first.
	text, err := runCLI(t, pb.dbURL, "--public-base-url", "https://tickets.example", "accounts", "reset-link", "1")
	require.NoError(t, err)
	require.Contains(t, text, "one-time password reset link for account 1")
	_, err = runCLI(t, pb.dbURL, "accounts", "reset-link", "99")
	require.ErrorContains(t, err, "account 99 does not exist")
	visitor := pb.person(t)
	first := visitor.get(strings.TrimPrefix(link, "https://tickets.example"))
	require.Equal(t, http.StatusNotFound, first.Status)
	require.Contains(t, first.text(), "This reset link is not valid: it was used already, replaced by a newer one")
	link = strings.TrimSpace(text[strings.LastIndexByte(strings.TrimSpace(text), '\n')+1:])
	require.Regexp(t, `^https://tickets\.example/portal/reset/[A-Za-z0-9_-]{43}$`, link)

	path := strings.TrimPrefix(link, "https://tickets.example")
	form := visitor.get(path)
	require.Equal(t, http.StatusOK, form.Status)
	require.Contains(t, form.text(), "For demo@boxoffice.test")
	res := visitor.post(path, url.Values{"password": {"short"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, res.text(), "Password must be at least 10 characters long.")
	res = visitor.post(path, url.Values{"password": {"my brand new password"}})
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "/portal/signin?reset=1", res.Location())

	require.Equal(t, "/portal/signin", p.get("/portal/apps").Location(), "the reset ended every session")
	res = visitor.post("/portal/signin", url.Values{"email": {seed.DemoEmail}, "password": {pb.demo.Password}})
	require.Equal(t, http.StatusUnauthorized, res.Status, "the old password is gone")
	visitor.signIn(seed.DemoEmail, "my brand new password", "/portal/apps")
	again := visitor.get(path)
	require.Equal(t, http.StatusNotFound, again.Status)
	require.Contains(t, again.text(), "This reset link is not valid: it was used already")
}

func TestPortalPages(t *testing.T) {
	t.Parallel()
	pb := setupPortal(t, "sqlite")
	p := pb.person(t)
	for _, tt := range []struct {
		path, contentType string
		status            int
	}{
		{"/portal/signin", "text/html; charset=utf-8", http.StatusOK},
		{"/portal/signup", "text/html; charset=utf-8", http.StatusOK},
		{"/portal/nowhere", "text/html; charset=utf-8", http.StatusNotFound},
		{"/portal/reset/nope", "text/html; charset=utf-8", http.StatusNotFound},
		{"/portal/assets/portal.css", "text/css; charset=utf-8", http.StatusOK},
		{"/portal/assets/portal.js", "text/javascript; charset=utf-8", http.StatusOK},
		{"/portal/assets/nope.js", "text/html; charset=utf-8", http.StatusNotFound},
	} {
		res := p.get(tt.path)
		require.Equal(t, tt.status, res.Status, tt.path)
		require.Equal(t, tt.contentType, res.Header.Get("Content-Type"), tt.path)
	}
	page := p.get("/portal/signin")
	for _, asset := range regexp.MustCompile(`(?:href|src)="(/portal/assets/[^"]+)"`).FindAllStringSubmatch(page.Body, -1) {
		res := p.get(html.UnescapeString(asset[1]))
		require.Equal(t, http.StatusOK, res.Status, asset[1])
		require.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))
	}
	require.Contains(t, page.Body, `<html lang="en">`)
	require.Contains(t, page.Body, `<meta name="viewport" content="width=device-width, initial-scale=1">`)
	require.Contains(t, page.Body, `<a class="skip" href="#main">Skip to content</a>`)
	require.Equal(t, http.StatusMethodNotAllowed, p.do(http.MethodPut, "/portal/signin", url.Values{}).Status)
}

// TestPortalWebhookHealth: test events are limited per app; the app page
// tells the partner when deliveries keep failing and when they were
// disabled, shows events that were not sent as such, and resumes them.
func TestPortalWebhookHealth(t *testing.T) {
	t.Parallel()
	eachPortal(t, func(t *testing.T, pb *portalBundle) {
		p := pb.demoPerson(t)
		appID := pb.demo.App.App.ID
		demo := fmt.Sprintf("/portal/apps/%d", appID)
		const hook = "https://hooks.partner.example/in"
		require.Equal(t, http.StatusSeeOther, p.postFrom(demo, demo+"/webhook-url", url.Values{"webhook-url": {hook}}).Status)

		t.Run("ErrTooManyTestEvents", func(t *testing.T) {
			require.Equal(t, http.StatusSeeOther, p.postFrom(demo, demo+"/test-event", url.Values{"env": {"test"}}).Status)
			res := p.postFrom(demo, demo+"/test-event", url.Values{"env": {"test"}})
			require.Equal(t, http.StatusTooManyRequests, res.Status)
			require.Regexp(t, `Too many test events: an app may send 1 a minute\. Send the next one in \d+ s\.`, res.text())
			require.NotEmpty(t, res.Header.Get("Retry-After"))
			require.Contains(t, res.text(), "Delivery log", "the app's page, with the refusal")
		})
		t.Run("FailingThenDisabledThenResumed", func(t *testing.T) {
			ctx := context.Background()
			since := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
			eps, err := store.WebhookEndpointsOf(ctx, pb.db, appID, store.EnvTest)
			require.NoError(t, err)
			ep := eps[0].ID // the test environment's endpoint, which follows the app's URL
			for i := range 2 {
				_, err := store.RecordWebhookFailure(ctx, pb.db, ep, hook, "receiver answered 503", since.Add(time.Duration(i)*time.Hour))
				require.NoError(t, err)
			}
			page := p.get(demo).text()
			require.Contains(t, page, "The last 2 deliveries to this URL failed (since 20 Nov 2026 08:00 UTC; the last: HTTP 503). "+
				"If every delivery fails until 23 Nov 2026 08:00 UTC, deliveries are disabled until you resume them.")
			require.NotContains(t, page, "Resume deliveries")

			did, err := store.DisableWebhookEndpoint(ctx, pb.db, ep, since.Add(73*time.Hour))
			require.NoError(t, err)
			require.True(t, did)
			// An order event while deliveries are disabled: recorded, not sent.
			res := pb.checkout(t, pb.testKey, newIdemKey(), pb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			var ev store.WebhookEvent
			require.NoError(t, pb.db.NewSelect().Model(&ev).Where("type = ?", "order.paid").Scan(ctx))
			require.ErrorIs(t, pb.m.Webhooks.Deliver(ctx, ev.ID, "", false), webhook.ErrGiveUp)
			page = p.get(demo).text()
			require.Contains(t, page, "Deliveries to this URL are disabled since 23 Nov 2026 09:00 UTC: every delivery failed for 3 days "+
				"(2 in a row since 20 Nov 2026 08:00 UTC; the last: HTTP 503). Events are still recorded, marked failed and not sent.")
			require.Contains(t, page, "order.paid "+ev.ID+" test failed 0 not sent deliveries to the webhook URL were disabled")

			res2 := p.postFrom(demo, demo+"/webhook-resume", nil)
			require.Equal(t, http.StatusSeeOther, res2.Status)
			page = p.get(res2.Location()).text()
			require.Contains(t, page, "Deliveries resumed.")
			require.NotContains(t, page, "disabled since")
			res2 = p.postFrom(demo, demo+"/webhook-resume", nil)
			require.Equal(t, http.StatusUnprocessableEntity, res2.Status)
			require.Contains(t, res2.text(), fmt.Sprintf("Deliveries to the webhook URL of app %d are not disabled.", appID))
		})
	}, func(c *Config) { c.Portal.TestEventsPerApp = 1 })
}
