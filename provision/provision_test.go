package provision_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func setup(t *testing.T, db *store.DB, allowPrivate bool) *provision.Service {
	t.Helper()
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	return &provision.Service{DB: db, Now: func() time.Time { return now }, AllowPrivateWebhooks: allowPrivate,
		Password: auth.PasswordParams{Memory: 256, Time: 1, Threads: 1}}
}

func requireField(t *testing.T, err error, field, msg string) {
	t.Helper()
	e := apperr.From(err)
	require.Equal(t, apperr.ValidationFailed, e.Code, "error: %v", err)
	require.Equal(t, apperr.Details{field: {msg}}, e.Details)
	require.Equal(t, "--"+field+" "+msg, e.Message)
}

func TestProvision(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t.Run("AccountWithPassword", func(t *testing.T) {
			s := setup(t, db, false)
			acc, err := s.CreateAccount(ctx, provision.AccountInput{Name: "Kofi", Email: "kofi@example.com", Password: "ten chars!"})
			require.NoError(t, err)
			ok, err := auth.CheckPassword(ctx, "ten chars!", acc.PasswordHash)
			require.NoError(t, err)
			require.True(t, ok)
			_, err = s.CreateAccount(ctx, provision.AccountInput{Name: "Kofi", Email: "k2@example.com", Password: "short"})
			requireField(t, err, "password", "must be at least 10 characters long")

			plain, err := s.CreateAccount(ctx, provision.AccountInput{Name: "Ops", Email: "ops@example.com"})
			require.NoError(t, err)
			require.Empty(t, plain.PasswordHash, "no password: the account cannot sign in to the portal")

			list, err := s.ListAccounts(ctx, store.AccountActive)
			require.NoError(t, err)
			require.Len(t, list, 2)
			_, err = s.ListAccounts(ctx, "sleeping")
			require.Equal(t, apperr.ValidationFailed, apperr.CodeOf(err))
			require.Equal(t, `status "sleeping" is not one of active, pending_approval, disabled`, apperr.From(err).Message)
		})
		t.Run("Bounds", func(t *testing.T) {
			s := setup(t, db, false)
			long := strings.Repeat("é", clientinput.MaxName)
			acc, err := s.CreateAccount(ctx, provision.AccountInput{Name: long, Email: strings.Repeat("b", 242) + "@example.com"})
			require.NoError(t, err, "a name of 200 characters and an email of 254")
			_, err = s.CreateAccount(ctx, provision.AccountInput{Name: long + "é", Email: "b1@example.com"})
			requireField(t, err, "name", "must be at most 200 characters")
			_, err = s.CreateAccount(ctx, provision.AccountInput{Name: "Kofi\u202Eexe.", Email: "b2@example.com"})
			requireField(t, err, "name", "must not contain control characters or bidirectional text controls")
			_, err = s.CreateAccount(ctx, provision.AccountInput{Name: "Kofi", Email: strings.Repeat("b", 243) + "@example.com"})
			requireField(t, err, "email", "must be at most 254 characters")

			_, err = s.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Shop\u2067"})
			requireField(t, err, "name", "must not contain control characters or bidirectional text controls")
			hook := "https://hooks.example.com/"
			app, err := s.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: long, WebhookURL: hook + strings.Repeat("h", clientinput.MaxURL-len(hook))})
			require.NoError(t, err, "a name of 200 characters and a webhook URL of 2,048")
			_, err = s.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Shop", WebhookURL: hook + strings.Repeat("h", clientinput.MaxURL+1-len(hook))})
			requireField(t, err, "webhook-url", "must be at most 2048 characters")
			tooLong, rename := hook+strings.Repeat("h", clientinput.MaxURL+1-len(hook)), long+"é"
			_, err = s.UpdateApp(ctx, app.App.ID, provision.AppUpdate{WebhookURL: &tooLong})
			requireField(t, err, "webhook-url", "must be at most 2048 characters")
			_, err = s.UpdateApp(ctx, app.App.ID, provision.AppUpdate{Name: &rename})
			requireField(t, err, "name", "must be at most 200 characters")
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, db, false)
			err := s.SetAccountStatus(ctx, 424242, store.AccountActive)
			require.Equal(t, apperr.NotFound, apperr.CodeOf(err))
			require.Equal(t, "account 424242 does not exist", apperr.From(err).Message)
			_, err = s.RotateWebhookSecret(ctx, 424242)
			require.Equal(t, "app 424242 does not exist", apperr.From(err).Message)
		})
		t.Run("RedirectDomainsAndWebhook", func(t *testing.T) {
			s := setup(t, db, false)
			acc, err := s.CreateAccount(ctx, provision.AccountInput{Name: "Ama", Email: "ama@example.com"})
			require.NoError(t, err)
			app, err := s.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Shop", RedirectDomains: []string{"a.example", "b.example"}})
			require.NoError(t, err)
			up, err := s.UpdateApp(ctx, app.App.ID, provision.AppUpdate{RemoveRedirectDomains: []string{"A.example"}, RedirectDomains: []string{"c.example"}})
			require.NoError(t, err)
			require.Equal(t, []string{"b.example", "c.example"}, up.RedirectDomains)
			bad := "https://192.168.1.10/h"
			_, err = s.UpdateApp(ctx, app.App.ID, provision.AppUpdate{WebhookURL: &bad})
			requireField(t, err, "webhook-url", `"https://192.168.1.10/h" points at a special-purpose address (private use (RFC 1918)), which never receives webhooks; to get events on this machine while you develop, run boxoffice listen --api-key svc_test_… --forward-to https://192.168.1.10/h`)
			require.NoError(t, setup(t, db, true).CheckWebhookURL("http://127.0.0.1:9999/h"), "WEBHOOK_ALLOW_PRIVATE_TARGETS lifts the rule")

			entries, err := audit.List(ctx, db, acc.ID, 100)
			require.NoError(t, err)
			var got []string
			for _, e := range entries {
				require.Equal(t, store.ActorOperator, e.Actor, "no partner in the context: an operator")
				got = append([]string{e.Action + " " + e.Detail}, got...)
			}
			require.Equal(t, []string{
				"account.create status active",
				`app.create name "Shop"; test and live keys and webhook secret issued`,
				"app.redirect_domain_remove a.example",
				"app.redirect_domain_add c.example",
			}, got)
		})
	})
}

// TestAppCap: an account has at most MaxAppsPerAccount apps, suspended ones
// included, however many are created at once; other accounts are not
// affected.
func TestAppCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		newAccount := func(t *testing.T, s *provision.Service, email string) int64 {
			t.Helper()
			acc, err := s.CreateAccount(ctx, provision.AccountInput{Name: "Kofi", Email: email})
			require.NoError(t, err)
			return acc.ID
		}
		refusal := func(id int64, n int) *apperr.Error {
			return &apperr.Error{Code: apperr.ValidationFailed,
				Message: fmt.Sprintf("account %d already has %d apps, the most one account may have (MAX_APPS_PER_ACCOUNT)", id, n),
				Details: apperr.Details{"account": {fmt.Sprintf("already has %d apps, the most one account may have; ask the Boxoffice team if you need more", n)}}}
		}
		for _, tt := range []struct {
			name    string
			max     int // MaxAppsPerAccount
			allowed int // apps an account gets
		}{
			{"Default", 0, provision.DefaultMaxAppsPerAccount},
			{"Configured", 2, 2},
		} {
			t.Run(tt.name, func(t *testing.T) {
				s := setup(t, db, false)
				s.MaxAppsPerAccount = tt.max
				id := newAccount(t, s, "cap-"+tt.name+"@example.com")
				for i := range tt.allowed {
					app, err := s.CreateApp(ctx, provision.AppInput{AccountID: id, Name: fmt.Sprint("Shop ", i)})
					require.NoError(t, err, "app %d", i+1)
					if i == 0 {
						require.NoError(t, s.SetAppStatus(ctx, app.App.ID, store.AppSuspended), "a suspended app still counts")
					}
				}
				_, err := s.CreateApp(ctx, provision.AppInput{AccountID: id, Name: "One too many"})
				require.Equal(t, refusal(id, tt.allowed), apperr.From(err))
				apps, err := s.ListApps(ctx, id)
				require.NoError(t, err)
				require.Len(t, apps, tt.allowed, "nothing of the refused app was written")

				other := newAccount(t, s, "other-"+tt.name+"@example.com")
				_, err = s.CreateApp(ctx, provision.AppInput{AccountID: other, Name: "Shop"})
				require.NoError(t, err, "the cap is per account")
			})
		}
		t.Run("AtOnce", func(t *testing.T) {
			s := setup(t, db, false)
			s.MaxAppsPerAccount = 3
			id := newAccount(t, s, "burst@example.com")
			var wg sync.WaitGroup
			errs := make([]error, 12)
			for i := range errs {
				wg.Go(func() { _, errs[i] = s.CreateApp(ctx, provision.AppInput{AccountID: id, Name: fmt.Sprint("Shop ", i)}) })
			}
			wg.Wait()
			created := 0
			for _, err := range errs {
				if err == nil {
					created++
					continue
				}
				require.Equal(t, refusal(id, 3), apperr.From(err))
			}
			require.Equal(t, 3, created, "twelve creates at once against a cap of three")
			n, err := store.CountAccountApps(ctx, db, id)
			require.NoError(t, err)
			require.Equal(t, 3, n)
		})
	})
}
