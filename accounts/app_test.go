package accounts_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// authCode is what the API answers a key with: "ok" or the error code.
func authCode(t *testing.T, db *store.DB, key string) string {
	t.Helper()
	_, err := (&auth.Authenticator{DB: db}).Authenticate(context.Background(), key)
	if err == nil {
		return "ok"
	}
	return string(apperr.CodeOf(err))
}

func TestApps(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("CreateApp", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "  Ama's shop ")
			require.NoError(t, err)
			require.Equal(t, "Ama's shop", app.App.Name)
			require.Equal(t, sess.Account.ID, app.App.AccountID)
			require.Equal(t, "ok", authCode(t, db, app.TestKey))
			require.Equal(t, "ok", authCode(t, db, app.LiveKey))
			require.True(t, strings.HasPrefix(app.WebhookSecret, "whsec_"))

			apps, err := f.svc.Apps(f.ctx, sess)
			require.NoError(t, err)
			require.Len(t, apps, 1)
			page, err := f.svc.AppPage(f.ctx, sess, app.App.ID, accounts.OrderQuery{})
			require.NoError(t, err)
			require.Equal(t, app.TestKey[len(app.TestKey)-4:], page.Keys[store.EnvTest].Hint)
			require.Equal(t, store.EnvTest, page.Query.Env)

			_, err = f.svc.CreateApp(f.ctx, sess, " ")
			requireField(t, err, "name", "is required")
		})
		t.Run("ErrAppCap", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			f.svc.Provision.MaxAppsPerAccount = 2
			sess := f.partner(t, "busy")
			for i := range 2 {
				_, err := f.svc.CreateApp(f.ctx, sess, fmt.Sprint("Shop ", i))
				require.NoError(t, err)
			}
			_, err := f.svc.CreateApp(f.ctx, sess, "One too many")
			e := apperr.From(err)
			require.Equal(t, apperr.ValidationFailed, e.Code)
			require.Equal(t, apperr.Details{"account": {"already has 2 apps, the most one account may have; ask the Boxoffice team if you need more"}}, e.Details)
			apps, err := f.svc.Apps(f.ctx, sess)
			require.NoError(t, err)
			require.Len(t, apps, 2)
		})
		t.Run("ErrNotYourApp", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			owner := f.partner(t, "owner")
			app, err := f.svc.CreateApp(f.ctx, owner, "Owner's shop")
			require.NoError(t, err)
			intruder := f.partner(t, "intruder")
			id := app.App.ID
			msg := fmt.Sprintf("App %d was not found in your account.", id)
			for name, try := range map[string]func() error{
				"AppPage":   func() error { _, err := f.svc.AppPage(f.ctx, intruder, id, accounts.OrderQuery{}); return err },
				"RotateKey": func() error { _, err := f.svc.RotateKey(f.ctx, intruder, id, store.EnvTest); return err },
				"RevokeKey": func() error { return f.svc.RevokeKey(f.ctx, intruder, id, store.EnvLive) },
				"AddRedirect": func() error {
					return f.svc.AddRedirectDomain(f.ctx, intruder, id, "evil.example")
				},
				"RemoveRedirect": func() error { return f.svc.RemoveRedirectDomain(f.ctx, intruder, id, "shop.example") },
				"WebhookURL":     func() error { return f.svc.SetWebhookURL(f.ctx, intruder, id, "https://evil.example/h") },
				"WebhookSecret":  func() error { _, err := f.svc.RotateWebhookSecret(f.ctx, intruder, id); return err },
				"TestEvent":      func() error { _, err := f.svc.SendTestEvent(f.ctx, intruder, id, store.EnvTest); return err },
				"Redeliver":      func() error { return f.svc.Redeliver(f.ctx, intruder, id, "evt_x") },
				"Missing":        func() error { _, err := f.svc.AppPage(f.ctx, intruder, 0, accounts.OrderQuery{}); return err },
			} {
				t.Run(name, func(t *testing.T) {
					err := try()
					if name == "Missing" {
						requireErr(t, err, apperr.NotFound, "App 0 was not found in your account.")
						return
					}
					requireErr(t, err, apperr.NotFound, msg)
				})
			}
			require.Equal(t, "ok", authCode(t, db, app.TestKey), "nothing changed")
			require.Equal(t, "ok", authCode(t, db, app.LiveKey))
			require.Equal(t, []string{audit.AccountCreate, audit.AccountStatus, audit.SignIn}, actions(f.auditOf(t, intruder.Account.ID)),
				"the intruder changed nothing")
		})
		t.Run("RotateAndRevokeKeys", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			key, err := f.svc.RotateKey(f.ctx, sess, app.App.ID, store.EnvTest)
			require.NoError(t, err)
			require.Regexp(t, `^svc_test_[a-z2-7]{32}$`, key)
			require.Equal(t, "invalid_api_key", authCode(t, db, app.TestKey), "the leaked key is refused at once")
			require.Equal(t, "ok", authCode(t, db, key))
			require.Equal(t, "ok", authCode(t, db, app.LiveKey), "rotating test leaves live alone")

			require.NoError(t, f.svc.RevokeKey(f.ctx, sess, app.App.ID, store.EnvLive))
			require.Equal(t, "invalid_api_key", authCode(t, db, app.LiveKey))
			err = f.svc.RevokeKey(f.ctx, sess, app.App.ID, store.EnvLive)
			requireErr(t, err, apperr.NotFound, fmt.Sprintf("app %d has no active live key", app.App.ID))
			page, err := f.svc.AppPage(f.ctx, sess, app.App.ID, accounts.OrderQuery{})
			require.NoError(t, err)
			require.Nil(t, page.Keys[store.EnvLive])
			require.Equal(t, key[len(key)-4:], page.Keys[store.EnvTest].Hint)

			_, err = f.svc.RotateKey(f.ctx, sess, app.App.ID, "prod")
			requireField(t, err, "env", `"prod" is not one of test, live`)
		})
		t.Run("RedirectDomains", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			id := app.App.ID
			require.NoError(t, f.svc.AddRedirectDomain(f.ctx, sess, id, " Shop.Example.com "))
			require.NoError(t, f.svc.AddRedirectDomain(f.ctx, sess, id, "pay.example.com"))
			require.NoError(t, f.svc.AddRedirectDomain(f.ctx, sess, id, "shop.example.com"), "adding twice keeps one")
			for _, bad := range []string{"https://x.example/path", "x.example:443", "", "a..b", "-a.example"} {
				requireField(t, f.svc.AddRedirectDomain(f.ctx, sess, id, bad), "redirect-domain",
					fmt.Sprintf("%q is not a host name such as shop.example.com", bad))
			}
			require.NoError(t, f.svc.RemoveRedirectDomain(f.ctx, sess, id, "SHOP.example.com"))
			got, err := store.AppByID(context.Background(), db, id)
			require.NoError(t, err)
			require.Equal(t, []string{"pay.example.com"}, got.RedirectDomains)
			var details []string
			for _, e := range f.auditOf(t, sess.Account.ID) {
				if e.AppID == id && strings.HasPrefix(e.Action, "app.redirect") {
					details = append(details, e.Action+" "+e.Detail)
				}
			}
			require.Equal(t, []string{
				audit.RedirectAdd + " shop.example.com", audit.RedirectAdd + " pay.example.com",
				audit.RedirectRemove + " shop.example.com",
			}, details)
		})
		t.Run("WebhookURL", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			id := app.App.ID
			for url, msg := range map[string]string{
				"http://hooks.example/h":       `"http://hooks.example/h" must be an absolute https:// URL`,
				"hooks.example/h":              `"hooks.example/h" must be an absolute https:// URL`,
				"https://u:p@hooks.example/h":  `"https://u:p@hooks.example/h" must not carry a user name or password`,
				"https://localhost/h":          `"https://localhost/h" must be reachable on the public internet, not localhost; to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to https://localhost/h`,
				"http://localhost:3000/hooks":  `"http://localhost:3000/hooks" must be an absolute https:// URL; to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to http://localhost:3000/hooks`,
				"https://127.0.0.1:8443/h":     `"https://127.0.0.1:8443/h" points at a special-purpose address (loopback (RFC 1122)), which never receives webhooks; to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to https://127.0.0.1:8443/h`,
				"https://10.1.2.3/h":           `"https://10.1.2.3/h" points at a special-purpose address (private use (RFC 1918)), which never receives webhooks; to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to https://10.1.2.3/h`,
				"https://169.254.169.254/meta": `"https://169.254.169.254/meta" points at a special-purpose address (link-local, cloud metadata (RFC 3927)), which never receives webhooks`,
				"https://[::1]/h":              `"https://[::1]/h" points at a special-purpose address (loopback (RFC 4291)), which never receives webhooks; to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to https://[::1]/h`,
			} {
				requireField(t, f.svc.SetWebhookURL(f.ctx, sess, id, url), "webhook-url", msg)
			}
			require.NoError(t, f.svc.SetWebhookURL(f.ctx, sess, id, " https://hooks.example/boxoffice?token=s3cret "))
			got, err := store.AppByID(context.Background(), db, id)
			require.NoError(t, err)
			require.Equal(t, "https://hooks.example/boxoffice?token=s3cret", got.WebhookURL)
			require.NoError(t, f.svc.SetWebhookURL(f.ctx, sess, id, ""))
			got, err = store.AppByID(context.Background(), db, id)
			require.NoError(t, err)
			require.Empty(t, got.WebhookURL, "empty removes it")
			for _, e := range f.auditOf(t, sess.Account.ID) {
				require.NotContains(t, e.Detail, "s3cret", "an audit entry names the receiver's host only")
			}
		})
		t.Run("WebhookSecretTestEventRedeliver", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			id := app.App.ID
			_, err = f.svc.SendTestEvent(f.ctx, sess, id, store.EnvTest)
			requireField(t, err, "webhook-url", fmt.Sprintf("is not set for app %d: set one before sending a test event", id))

			secret, err := f.svc.RotateWebhookSecret(f.ctx, sess, id)
			require.NoError(t, err)
			require.NotEqual(t, app.WebhookSecret, secret)
			got, err := store.AppByID(context.Background(), db, id)
			require.NoError(t, err)
			require.Equal(t, secret, got.WebhookSecret, "deliveries are signed with the new secret")

			require.NoError(t, f.svc.SetWebhookURL(f.ctx, sess, id, "https://hooks.example/h"))
			evID, err := f.svc.SendTestEvent(f.ctx, sess, id, store.EnvLive)
			require.NoError(t, err)
			_, err = f.svc.SendTestEvent(f.ctx, sess, id, "prod")
			requireField(t, err, "env", `"prod" is not one of test, live`)
			require.NoError(t, f.svc.Redeliver(f.ctx, sess, id, evID))
			require.Equal(t, []string{evID, evID}, f.enqueued, "queued, then queued again")

			other, err := f.svc.CreateApp(f.ctx, sess, "Other shop")
			require.NoError(t, err)
			requireErr(t, f.svc.Redeliver(f.ctx, sess, other.App.ID, evID), apperr.NotFound,
				fmt.Sprintf("Webhook event %s was not found for this app.", evID))

			page, err := f.svc.AppPage(f.ctx, sess, id, accounts.OrderQuery{})
			require.NoError(t, err)
			require.Len(t, page.Events, 1)
			require.Equal(t, "webhook.test", page.Events[0].Type)
			require.Equal(t, store.EnvLive, page.Events[0].Environment)

			entries := f.auditOf(t, sess.Account.ID)
			for _, e := range entries {
				require.NotContains(t, e.Detail, secret)
				require.NotContains(t, e.Detail, app.WebhookSecret)
			}
			require.Subset(t, actions(entries), []string{audit.WebhookSecretRotate, audit.WebhookTest, audit.WebhookRedeliver})
		})
		t.Run("SuspendedAppStaysManageable", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			require.NoError(t, f.svc.Provision.SetAppStatus(context.Background(), app.App.ID, store.AppSuspended))
			page, err := f.svc.AppPage(f.ctx, sess, app.App.ID, accounts.OrderQuery{})
			require.NoError(t, err)
			require.Equal(t, store.AppSuspended, page.App.Status)
			key, err := f.svc.RotateKey(f.ctx, sess, app.App.ID, store.EnvTest)
			require.NoError(t, err, "a partner can still replace a leaked key")
			require.Equal(t, "app_suspended", authCode(t, db, key))
		})
	})
}

func TestAppOrders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		_, err := catalog.Import(ctx, db, seed.DemoCatalog(now), now)
		require.NoError(t, err)
		var date store.EventDate
		require.NoError(t, db.NewSelect().Model(&date).Order("d.id").Limit(1).Scan(ctx))

		t.Run("OK", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			other, err := f.svc.CreateApp(f.ctx, sess, "Other")
			require.NoError(t, err)
			order := func(appID int64, env, ref string, at time.Time) {
				o := &store.Order{Reference: ref, AppID: appID, Environment: env, Status: store.OrderPending,
					EventID: date.EventID, EventDateID: date.ID, Currency: "GHS", TotalAmount: 24000,
					CustomerName: "A", CustomerEmail: "a@example.com", CustomerPhone: "0241234567",
					SuccessURL: "https://s.example/ok", CancelURL: "https://s.example/no", CreatedAt: at, UpdatedAt: at}
				require.NoError(t, store.InsertOrder(ctx, db, o, nil))
			}
			p := f.prefix
			order(app.App.ID, store.EnvTest, "sbx_"+p+"aaa", now)
			order(app.App.ID, store.EnvTest, "sbx_"+p+"bbb", now.Add(time.Minute))
			order(app.App.ID, store.EnvTest, "sbx_"+p+"ab_c", now.Add(2*time.Minute))
			order(app.App.ID, store.EnvLive, "ord_"+p+"live", now)
			order(other.App.ID, store.EnvTest, "sbx_"+p+"other", now)

			refs := func(q accounts.OrderQuery) []string {
				t.Helper()
				page, err := f.svc.AppPage(f.ctx, sess, app.App.ID, q)
				require.NoError(t, err)
				var out []string
				for _, o := range page.Orders {
					out = append(out, strings.TrimPrefix(strings.TrimPrefix(o.Reference, "sbx_"+p), "ord_"+p))
				}
				return out
			}
			require.Equal(t, []string{"ab_c", "bbb", "aaa"}, refs(accounts.OrderQuery{}), "newest first, test by default, this app only")
			require.Equal(t, []string{"live"}, refs(accounts.OrderQuery{Env: store.EnvLive}))
			require.Equal(t, []string{"bbb"}, refs(accounts.OrderQuery{Reference: " BBB "}))
			require.Equal(t, []string{"ab_c"}, refs(accounts.OrderQuery{Reference: "b_"}), "an underscore matches itself")
			require.Empty(t, refs(accounts.OrderQuery{Reference: "other"}))

			_, err = f.svc.AppPage(f.ctx, sess, app.App.ID, accounts.OrderQuery{Reference: "50%"})
			requireField(t, err, "reference", "may hold only letters, digits, '_' and '-' (at most 64), as order references do")
			_, err = f.svc.AppPage(f.ctx, sess, app.App.ID, accounts.OrderQuery{Env: "prod"})
			requireField(t, err, "env", `"prod" is not one of test, live`)
		})
	})
}

// TestAuditEveryAction takes every partner action once and reads the log:
// each is recorded as the partner's, from their address, and no entry holds
// a key, a secret or a password.
func TestAuditEveryAction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		acc := f.signUp(t, "ama")
		require.NoError(t, f.svc.Provision.SetAccountStatus(context.Background(), acc.ID, store.AccountActive))
		sess, err := f.svc.SignIn(f.ctx, acc.Email, password)
		require.NoError(t, err)
		sess = f.reload(t, sess)
		app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
		require.NoError(t, err)
		id := app.App.ID
		key, err := f.svc.RotateKey(f.ctx, sess, id, store.EnvTest)
		require.NoError(t, err)
		require.NoError(t, f.svc.RevokeKey(f.ctx, sess, id, store.EnvLive))
		require.NoError(t, f.svc.AddRedirectDomain(f.ctx, sess, id, "shop.example.com"))
		require.NoError(t, f.svc.RemoveRedirectDomain(f.ctx, sess, id, "shop.example.com"))
		require.NoError(t, f.svc.SetWebhookURL(f.ctx, sess, id, "https://hooks.example/h"))
		secret, err := f.svc.RotateWebhookSecret(f.ctx, sess, id)
		require.NoError(t, err)
		ev, err := f.svc.SendTestEvent(f.ctx, sess, id, store.EnvTest)
		require.NoError(t, err)
		require.NoError(t, f.svc.Redeliver(f.ctx, sess, id, ev))
		require.NoError(t, f.svc.SignOut(f.ctx, sess))

		entries := f.auditOf(t, acc.ID)
		require.Equal(t, []string{
			audit.AccountCreate, audit.AccountStatus, audit.SignIn, audit.AppCreate, audit.KeyRotate, audit.KeyRevoke,
			audit.RedirectAdd, audit.RedirectRemove, audit.WebhookURL, audit.WebhookSecretRotate,
			audit.WebhookTest, audit.WebhookRedeliver, audit.SignOut,
		}, actions(entries))
		for _, e := range entries {
			if e.Action == audit.AccountStatus {
				require.Equal(t, store.ActorOperator, e.Actor, "the approval is the operator's")
				require.Empty(t, e.IP)
				continue
			}
			require.Equal(t, store.ActorPartner, e.Actor, e.Action)
			require.Equal(t, f.ip, e.IP, e.Action)
			require.False(t, e.CreatedAt.IsZero())
			for _, s := range []string{key, app.TestKey, app.LiveKey, app.WebhookSecret, secret, password, sess.Token} {
				require.NotContains(t, e.Detail, s, e.Action)
			}
		}
		require.Equal(t, `name "Shop"; test and live keys and webhook secret issued`, entries[3].Detail)
		require.Equal(t, "test key rotated; the old one is revoked", entries[4].Detail)
		require.Equal(t, "set to https://hooks.example/…", entries[8].Detail)
	})
}

// TestTestEventLimit: an app sends at most TestEventsPerApp test events a
// minute (each is a delivery to its receiver, which may never answer);
// another app keeps its own budget.
func TestTestEventLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		f := setup(t, db, func(c *accounts.Config) { c.TestEventsPerApp = 3 })
		sess := f.partner(t, "ama")
		newApp := func(name string) int64 {
			app, err := f.svc.CreateApp(f.ctx, sess, name)
			require.NoError(t, err)
			require.NoError(t, f.svc.SetWebhookURL(f.ctx, sess, app.App.ID, "https://hooks.example/h"))
			return app.App.ID
		}
		id, other := newApp("Shop"), newApp("Other shop")
		for range 3 {
			_, err := f.svc.SendTestEvent(f.ctx, sess, id, store.EnvTest)
			require.NoError(t, err)
		}
		_, err := f.svc.SendTestEvent(f.ctx, sess, id, store.EnvTest)
		requireErr(t, err, apperr.RateLimitExceeded, "Too many test events: an app may send 3 a minute. Send the next one in 80 s.")
		wait := apperr.From(err).RetryAfter
		require.Equal(t, 80, wait)
		require.Len(t, f.enqueued, 3, "the refused event is not queued")
		page, err := f.svc.AppPage(f.ctx, sess, id, accounts.OrderQuery{})
		require.NoError(t, err)
		require.Len(t, page.Events, 3, "nor recorded")

		_, err = f.svc.SendTestEvent(f.ctx, sess, other, store.EnvLive)
		require.NoError(t, err, "another app has its own budget")

		f.clock.Advance(time.Duration(wait) * time.Second)
		_, err = f.svc.SendTestEvent(f.ctx, sess, id, store.EnvTest)
		require.NoError(t, err)
	})
}

// TestWebhookHealth: the app page says when deliveries to the webhook URL
// keep failing and when they were disabled; the partner resumes them, and
// it is audited.
func TestWebhookHealth(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		f := setup(t, db)
		sess := f.partner(t, "ama")
		app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
		require.NoError(t, err)
		id := app.App.ID
		require.NoError(t, f.svc.SetWebhookURL(f.ctx, sess, id, "https://hooks.example/h"))
		health := func() *store.WebhookHealth {
			page, err := f.svc.AppPage(f.ctx, sess, id, accounts.OrderQuery{})
			require.NoError(t, err)
			require.Equal(t, 72*time.Hour, page.DisableAfter)
			return page.Health
		}
		require.Nil(t, health())
		requireErr(t, f.svc.ResumeWebhooks(f.ctx, sess, id), apperr.ValidationFailed,
			fmt.Sprintf("Deliveries to the webhook URL of app %d are not disabled.", id))

		ctx := context.Background()
		since := f.clock.Now()
		eps, err := store.WebhookEndpointsOf(ctx, db, id, store.EnvTest)
		require.NoError(t, err)
		ep := eps[0].ID // the test environment's endpoint, which follows the app's URL
		_, err = store.RecordWebhookFailure(ctx, db, ep, "https://hooks.example/h", "receiver answered 502", since)
		require.NoError(t, err)
		h := health()
		require.EqualValues(t, 1, h.Failures)
		require.False(t, h.Disabled("https://hooks.example/h"))

		did, err := store.DisableWebhookEndpoint(ctx, db, ep, since.Add(73*time.Hour))
		require.NoError(t, err)
		require.True(t, did)
		require.True(t, health().Disabled("https://hooks.example/h"))
		_, err = f.svc.SendTestEvent(f.ctx, sess, id, store.EnvTest)
		requireErr(t, err, apperr.ValidationFailed, "Deliveries to the webhook URL are disabled since 2026-11-25T10:00:00Z, "+
			"after 1 failed deliveries in a row since 2026-11-22T09:00:00Z: resume deliveries (or set another webhook URL) before sending a test event")

		intruder := f.partner(t, "intruder")
		requireErr(t, f.svc.ResumeWebhooks(f.ctx, intruder, id), apperr.NotFound, fmt.Sprintf("App %d was not found in your account.", id))
		require.NoError(t, f.svc.ResumeWebhooks(f.ctx, sess, id))
		require.Nil(t, health())
		entries := f.auditOf(t, sess.Account.ID)
		last := entries[len(entries)-1]
		require.Equal(t, audit.WebhookResume, last.Action)
		require.Equal(t, store.ActorPartner, last.Actor)
		require.Equal(t, f.ip, last.IP)
		_, err = f.svc.SendTestEvent(f.ctx, sess, id, store.EnvTest)
		require.NoError(t, err)
	})
}

// TestAppPageSearchAndLog: an app page finds the app's orders of one
// environment by the buyer's whole email in any case (stored as the buyer
// gave it), never another app's or environment's; refuses what is no
// email address; and pages the delivery log, each page going on where the
// last ended, to the end.
func TestAppPageSearchAndLog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		_, err := catalog.Import(ctx, db, seed.DemoCatalog(now), now)
		require.NoError(t, err)
		var date store.EventDate
		require.NoError(t, db.NewSelect().Model(&date).Order("d.id").Limit(1).Scan(ctx))

		t.Run("OKEmail", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			other, err := f.svc.CreateApp(f.ctx, sess, "Other")
			require.NoError(t, err)
			p := f.prefix
			for i, o := range []struct {
				app          int64
				env, ref, by string
			}{
				{app.App.ID, store.EnvTest, "kofi1", "Kofi.Boateng@Example.com"},
				{app.App.ID, store.EnvTest, "ama", "ama@example.com"},
				{app.App.ID, store.EnvTest, "kofi2", "kofi.boateng@example.com"},
				{app.App.ID, store.EnvTest, "tagged", "kofi.boateng+shows@example.com"},
				{app.App.ID, store.EnvLive, "kofilive", "kofi.boateng@example.com"},
				{other.App.ID, store.EnvTest, "kofiother", "kofi.boateng@example.com"},
			} {
				at := now.Add(time.Duration(i) * time.Minute)
				prefix := map[string]string{store.EnvTest: "sbx_", store.EnvLive: "ord_"}[o.env]
				require.NoError(t, store.InsertOrder(ctx, db, &store.Order{Reference: prefix + p + o.ref, AppID: o.app, Environment: o.env,
					Status: store.OrderPending, EventID: date.EventID, EventDateID: date.ID, Currency: "GHS", TotalAmount: 24000,
					CustomerName: "K", CustomerEmail: o.by, CustomerPhone: "0241234567",
					SuccessURL: "https://s.example/ok", CancelURL: "https://s.example/no", CreatedAt: at, UpdatedAt: at}, nil))
			}
			tests := []struct {
				name string
				q    accounts.OrderQuery
				want []string
			}{
				{"AnyCase", accounts.OrderQuery{Email: " KOFI.BOATENG@example.COM "}, []string{"kofi2", "kofi1"}},
				{"Live", accounts.OrderQuery{Env: store.EnvLive, Email: "kofi.boateng@example.com"}, []string{"kofilive"}},
				{"WithReference", accounts.OrderQuery{Email: "kofi.boateng@example.com", Reference: "kofi1"}, []string{"kofi1"}},
				{"WholeAddressOnly", accounts.OrderQuery{Email: "boateng@example.com"}, nil},
				{"TagIsPartOfTheAddress", accounts.OrderQuery{Email: "kofi.boateng+SHOWS@example.com"}, []string{"tagged"}},
				{"NoWildcards", accounts.OrderQuery{Email: "%@example.com"}, nil},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					page, err := f.svc.AppPage(f.ctx, sess, app.App.ID, tt.q)
					require.NoError(t, err)
					var got []string
					for _, o := range page.Orders {
						got = append(got, o.Reference[len("sbx_")+len(p):])
					}
					require.Equal(t, tt.want, got)
					require.Equal(t, strings.TrimSpace(tt.q.Email), page.Query.Email, "the page says what was searched")
				})
			}
		})

		t.Run("ErrEmail", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db)
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			for _, tt := range []struct{ name, email, msg string }{
				{"NotAnAddress", "kofi", "must be a valid email address (a buyer's whole address, such as ama@example.com)"},
				{"DisplayName", "Kofi <kofi@example.com>", "must be a valid email address (a buyer's whole address, such as ama@example.com)"},
				{"TooLong", strings.Repeat("k", 250) + "@example.com", "must be at most 254 characters (a buyer's whole address, such as ama@example.com)"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					_, err := f.svc.AppPage(f.ctx, sess, app.App.ID, accounts.OrderQuery{Email: tt.email})
					requireField(t, err, "email", tt.msg)
				})
			}
		})

		t.Run("OKLogPages", func(t *testing.T) {
			t.Parallel()
			f := setup(t, db, func(c *accounts.Config) { c.TestEventsPerApp = 100 })
			sess := f.partner(t, "ama")
			app, err := f.svc.CreateApp(f.ctx, sess, "Shop")
			require.NoError(t, err)
			require.NoError(t, f.svc.SetWebhookURL(f.ctx, sess, app.App.ID, "https://hooks.example/h"))
			// Three events an instant: within one, the id orders them, and
			// a page may end between two of them.
			type made struct {
				at time.Time
				id string
			}
			var events []made
			for i := range 2*accounts.PageEvents + 3 {
				if i%3 == 0 {
					f.clock.Advance(time.Second)
				}
				id, err := f.svc.SendTestEvent(f.ctx, sess, app.App.ID, []string{store.EnvTest, store.EnvLive}[i%2])
				require.NoError(t, err)
				events = append(events, made{f.clock.Now(), id})
			}
			slices.SortFunc(events, func(a, b made) int { return cmp.Or(b.at.Compare(a.at), strings.Compare(b.id, a.id)) })
			var want []string
			for _, e := range events {
				want = append(want, e.id)
			}
			var got []string
			var sizes []int
			q := accounts.OrderQuery{}
			for {
				page, err := f.svc.AppPage(f.ctx, sess, app.App.ID, q)
				require.NoError(t, err)
				sizes = append(sizes, len(page.Events))
				for _, e := range page.Events {
					got = append(got, e.ID)
				}
				if page.NextEvents == "" {
					break
				}
				q.Events = page.NextEvents
			}
			require.Equal(t, []int{accounts.PageEvents, accounts.PageEvents, 3}, sizes)
			require.Equal(t, want, got, "both environments, newest first, each event once")

			_, err = f.svc.AppPage(f.ctx, sess, app.App.ID, accounts.OrderQuery{Events: "bm90IGEgY3Vyc29y"})
			requireField(t, err, "events", "is not a page of this log: open the log from its first page")
		})
	})
}
