package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		ctx := context.Background()
		prov := tb.m.Provision

		// A second app of its own account, so status changes do not touch the demo.
		acc, err := prov.CreateAccount(ctx, provisionAccount("auth@example.com"))
		require.NoError(t, err)
		other, err := prov.CreateApp(ctx, provisionApp(acc.ID))
		require.NoError(t, err)

		expect := func(t *testing.T, key string, status int, code, message string) {
			t.Helper()
			for _, path := range []string{"/api/v1/events", "/api/v1/events/1/dates", "/api/v1/no-such-route"} {
				res := tb.get(t, path, key)
				require.Equal(t, status, res.Status, "%s: %s", path, res.Raw)
				require.Equal(t, code, res.errorCode(), path)
				require.Equal(t, message, res.errorMessage(), path)
			}
			res := tb.graphql(t, key, `{ events { pageInfo { total } } }`, nil)
			require.Equal(t, status, res.Status, "graphql: %s", res.Raw)
			ext := res.gqlErrorExt(t)
			require.Equal(t, code, ext["code"])
			require.EqualValues(t, status, ext["status"])
		}

		t.Run("OK", func(t *testing.T) {
			require.Equal(t, http.StatusOK, tb.get(t, "/api/v1/events", tb.testKey).Status)
			require.Equal(t, http.StatusOK, tb.get(t, "/api/v1/events", tb.liveKey).Status)
			require.Equal(t, http.StatusOK, tb.get(t, "/api/v1/events", other.TestKey).Status)
		})
		t.Run("ErrMissingAPIKey", func(t *testing.T) {
			expect(t, "", 401, "missing_api_key", "The X-API-Key header is required.")
		})
		t.Run("ErrInvalidAPIKey", func(t *testing.T) {
			for _, key := range []string{
				"nonsense",
				"svc_test_",
				"svc_prod_abcdefghijklmnopqrstuvwxyz234567",
				"svc_test_abcdefghijklmnopqrstuvwxyz234567", // well-formed, unknown
				tb.testKey + "x",
				"svc_live_" + tb.testKey[len("svc_test_"):], // a test key's body under the live prefix
			} {
				expect(t, key, 401, "invalid_api_key", "The API key is invalid or has been revoked.")
			}
		})
		t.Run("ErrRevokedKeyStopsAtOnce", func(t *testing.T) {
			newKey, err := prov.RotateKey(ctx, other.App.ID, store.EnvTest)
			require.NoError(t, err)
			expect(t, other.TestKey, 401, "invalid_api_key", "The API key is invalid or has been revoked.")
			require.Equal(t, http.StatusOK, tb.get(t, "/api/v1/events", newKey).Status)
			require.NoError(t, prov.RevokeKey(ctx, other.App.ID, store.EnvTest))
			expect(t, newKey, 401, "invalid_api_key", "The API key is invalid or has been revoked.")
			require.Equal(t, http.StatusOK, tb.get(t, "/api/v1/events", other.LiveKey).Status, "the live key is untouched")
		})
		t.Run("ErrAppSuspended", func(t *testing.T) {
			require.NoError(t, prov.SetAppStatus(ctx, other.App.ID, store.AppSuspended))
			expect(t, other.LiveKey, 403, "app_suspended", "This app is suspended.")
			require.NoError(t, prov.SetAppStatus(ctx, other.App.ID, store.AppActive))
			require.Equal(t, http.StatusOK, tb.get(t, "/api/v1/events", other.LiveKey).Status)
		})
		t.Run("ErrAccountDisabled", func(t *testing.T) {
			require.NoError(t, prov.SetAccountStatus(ctx, acc.ID, store.AccountDisabled))
			expect(t, other.LiveKey, 403, "account_disabled", "This developer account is disabled.")
		})
		t.Run("ErrAccountPendingApproval", func(t *testing.T) {
			require.NoError(t, prov.SetAccountStatus(ctx, acc.ID, store.AccountPendingApproval))
			expect(t, other.LiveKey, 403, "account_pending_approval", "This developer account is awaiting approval.")
			require.NoError(t, prov.SetAccountStatus(ctx, acc.ID, store.AccountActive))
			require.Equal(t, http.StatusOK, tb.get(t, "/api/v1/events", other.LiveKey).Status)
		})
	})
}
