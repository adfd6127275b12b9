package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// runCLI runs the boxoffice command against dbURL and returns stdout.
func runCLI(t *testing.T, dbURL string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := newCLI(&stdout, &stderr).Run(context.Background(), append([]string{"boxoffice", "--database-url", dbURL}, args...))
	return stdout.String(), err
}

func mustJSON(t *testing.T, dbURL string, args ...string) map[string]any {
	t.Helper()
	out, err := runCLI(t, dbURL, args...)
	require.NoError(t, err, "boxoffice %v", args)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), "stdout must be exactly one JSON object: %q", out)
	return v
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

var (
	testKeyRE = regexp.MustCompile(`^svc_test_[a-z2-7]{32}$`)
	liveKeyRE = regexp.MustCompile(`^svc_live_[a-z2-7]{32}$`)
)

func TestCLI(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "cli.db")
	ctx := context.Background()

	require.Equal(t, map[string]any{"status": "migrated", "applied": float64(store.MigrationCount())}, mustJSON(t, dbURL, "migrate", "--json"))
	require.Equal(t, map[string]any{"status": "migrated", "applied": 0.0}, mustJSON(t, dbURL, "migrate", "--json"), "nothing left to apply")

	acc := mustJSON(t, dbURL, "accounts", "create", "--name", "Kofi Tickets", "--email", "Ops@Kofi.example", "--json")
	require.ElementsMatch(t, []string{"id", "name", "email", "status"}, keys(acc))
	require.Equal(t, map[string]any{"id": 1.0, "name": "Kofi Tickets", "email": "ops@kofi.example", "status": "active"}, acc)

	t.Run("ErrAccountCreate", func(t *testing.T) {
		_, err := runCLI(t, dbURL, "accounts", "create", "--name", "X", "--email", "not-an-email")
		require.ErrorContains(t, err, `--email "not-an-email" is not a valid email address`)
		_, err = runCLI(t, dbURL, "accounts", "create", "--name", "X", "--email", "ops@kofi.example")
		require.ErrorContains(t, err, "already exists")
		_, err = runCLI(t, dbURL, "accounts", "create", "--name", "X", "--email", "x@kofi.example", "--status", "bogus")
		require.ErrorContains(t, err, `status "bogus" is not one of`)
	})

	app := mustJSON(t, dbURL, "apps", "create", "--account", "1", "--name", "Kofi shop",
		"--redirect-domain", "shop.kofi.example", "--redirect-domain", "Pay.Kofi.example",
		"--webhook-url", "https://hooks.kofi.example/boxoffice", "--json")
	require.ElementsMatch(t, []string{"id", "account_id", "name", "test_key", "live_key", "webhook_secret"}, keys(app))
	require.Regexp(t, testKeyRE, app["test_key"])
	require.Regexp(t, liveKeyRE, app["live_key"])
	require.Regexp(t, `^whsec_[A-Za-z0-9+/]{43}=$`, app["webhook_secret"])

	db, err := store.Open(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	authn := &auth.Authenticator{DB: db}
	authCode := func(key string) string {
		_, err := authn.Authenticate(ctx, key)
		if err == nil {
			return "ok"
		}
		return err.Error()
	}

	t.Run("OnlyHashesStored", func(t *testing.T) {
		var hashes []string
		require.NoError(t, db.NewSelect().Model((*store.APIKey)(nil)).Column("key_hash").Scan(ctx, &hashes))
		require.Len(t, hashes, 2)
		for _, h := range hashes {
			require.NotContains(t, []string{app["test_key"].(string), app["live_key"].(string)}, h)
			require.Regexp(t, `^[0-9a-f]{64}$`, h)
		}
	})

	t.Run("AppsUpdate", func(t *testing.T) {
		up := mustJSON(t, dbURL, "apps", "update", "1", "--redirect-domain", "m.kofi.example", "--json")
		require.Equal(t, []any{"shop.kofi.example", "pay.kofi.example", "m.kofi.example"}, up["redirect_domains"])
		up = mustJSON(t, dbURL, "apps", "update", "1", "--clear-redirect-domains", "--redirect-domain", "only.kofi.example",
			"--webhook-url", "https://hooks.kofi.example/v2", "--json")
		require.Equal(t, []any{"only.kofi.example"}, up["redirect_domains"])
		require.Equal(t, "https://hooks.kofi.example/v2", up["webhook_url"])
		_, err := runCLI(t, dbURL, "apps", "update", "1", "--webhook-url", "http://hooks.kofi.example")
		require.ErrorContains(t, err, "must be an absolute https:// URL")
		_, err = runCLI(t, dbURL, "apps", "update", "1", "--redirect-domain", "https://x.example/path")
		require.ErrorContains(t, err, "is not a host name")
		_, err = runCLI(t, dbURL, "apps", "update", "99", "--name", "x")
		require.ErrorContains(t, err, "app 99 does not exist")
	})

	t.Run("StatusChanges", func(t *testing.T) {
		live := app["live_key"].(string)
		require.Equal(t, "ok", authCode(live))
		_, err := runCLI(t, dbURL, "apps", "set-status", "1", "suspended")
		require.NoError(t, err)
		require.Contains(t, authCode(live), "app_suspended")
		_, err = runCLI(t, dbURL, "apps", "set-status", "1", "active")
		require.NoError(t, err)
		_, err = runCLI(t, dbURL, "accounts", "set-status", "1", "pending_approval")
		require.NoError(t, err)
		require.Contains(t, authCode(live), "account_pending_approval")
		_, err = runCLI(t, dbURL, "accounts", "set-status", "1", "disabled")
		require.NoError(t, err)
		require.Contains(t, authCode(live), "account_disabled")
		_, err = runCLI(t, dbURL, "accounts", "set-status", "1", "active")
		require.NoError(t, err)
		require.Equal(t, "ok", authCode(live))
		_, err = runCLI(t, dbURL, "accounts", "set-status", "1", "sleeping")
		require.ErrorContains(t, err, `status "sleeping" is not one of`)
	})

	t.Run("KeysRotateRevoke", func(t *testing.T) {
		rot := mustJSON(t, dbURL, "keys", "rotate", "--app", "1", "--env", "live", "--json")
		require.ElementsMatch(t, []string{"app_id", "env", "key"}, keys(rot))
		require.Equal(t, 1.0, rot["app_id"])
		require.Equal(t, "live", rot["env"])
		require.Regexp(t, liveKeyRE, rot["key"])
		require.Contains(t, authCode(app["live_key"].(string)), "invalid_api_key")
		require.Equal(t, "ok", authCode(rot["key"].(string)))
		require.Equal(t, "ok", authCode(app["test_key"].(string)), "rotating live leaves test alone")

		_, err := runCLI(t, dbURL, "keys", "revoke", "--app", "1", "--env", "live")
		require.NoError(t, err)
		require.Contains(t, authCode(rot["key"].(string)), "invalid_api_key")
		_, err = runCLI(t, dbURL, "keys", "revoke", "--app", "1", "--env", "live")
		require.ErrorContains(t, err, "no active live key")
		_, err = runCLI(t, dbURL, "keys", "rotate", "--app", "1", "--env", "prod")
		require.ErrorContains(t, err, `--env "prod" is not one of test, live`)
	})

	t.Run("CatalogImport", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "catalog.json")
		require.NoError(t, os.WriteFile(file, []byte(cliCatalog), 0o600))
		res := mustJSON(t, dbURL, "catalog", "import", file, "--json")
		require.ElementsMatch(t, []string{"venues", "events", "event_dates", "tickets"}, keys(res))
		require.Equal(t, map[string]any{"accra-arena": 1.0}, res["venues"])
		require.Equal(t, map[string]any{"EVT-1001": 1.0}, res["events"])
		again := mustJSON(t, dbURL, "catalog", "import", file, "--json")
		require.Equal(t, res, again)

		bad := filepath.Join(t.TempDir(), "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte(`{"events": [{"reference": "EVT-9", "name": "X", "slug": "x", "dates": [{"reference": "D-9", "start": "2026-12-24T18:00:00Z", "end": "2026-12-24T20:00:00Z", "venue": "accra-arena", "tickets": [{"reference": "T-9", "name": "R", "price": "ten", "currency": "GHS"}]}]}]}`), 0o600))
		_, err := runCLI(t, dbURL, "catalog", "import", bad)
		require.ErrorContains(t, err, `ticket "T-9": price: "ten"`)
		_, err = runCLI(t, dbURL, "catalog", "import", filepath.Join(t.TempDir(), "missing.json"))
		require.Error(t, err)
	})

	t.Run("SeedDemo", func(t *testing.T) {
		demo := mustJSON(t, dbURL, "seed", "demo", "--json")
		require.ElementsMatch(t, []string{"id", "account_id", "name", "test_key", "live_key", "webhook_secret"}, keys(demo))
		require.Equal(t, "ok", authCode(demo["test_key"].(string)))
	})

	t.Run("ErrUsage", func(t *testing.T) {
		_, err := runCLI(t, dbURL, "accounts", "set-status", "1")
		require.ErrorContains(t, err, "needs 2 argument(s)")
		_, err = runCLI(t, dbURL, "apps", "set-status", "x", "active")
		require.ErrorContains(t, err, `app "x" is not a positive integer id`)
	})
}

const cliCatalog = `{
  "venues": [{"reference": "accra-arena", "name": "Accra Arena", "slug": "accra-arena", "city": "Accra"}],
  "events": [{"reference": "EVT-1001", "name": "Highlife Night", "slug": "highlife-night", "timezone": "Africa/Accra",
    "published": true,
    "dates": [{"reference": "DATE-1001-1", "start": "2026-12-24T18:00:00Z", "end": "2026-12-25T02:00:00Z", "venue": "accra-arena",
      "tickets": [{"reference": "TKT-1001-REG", "name": "Regular", "price": "150.00", "quantity": 500, "currency": "GHS"}]}]}]
}`

// TestServeBanner checks what `make run` (serve --demo) prints on a first
// start: the demo app's keys and redirect domain, then where the REST API,
// its reference and the GraphQL playground are.
func TestServeBanner(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PublicBaseURL = "http://localhost:8080"
	m, err := New(cfg, storetest.MustOpen(t, "sqlite"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(m.CatalogWatch.Close)
	require.NoError(t, m.Migrate(context.Background()))
	var out strings.Builder
	require.NoError(t, seedOnFirstStart(context.Background(), &out, m))
	printListening(&out, &net.TCPAddr{IP: net.IPv6zero, Port: 8080}, cfg.PublicBaseURL, nil)
	got := out.String()
	for _, want := range []string{
		"  test key:       svc_test_",
		"  live key:       svc_live_",
		"  webhook secret: whsec_",
		"  redirect domain: partner.example (success_url and cancel_url: https://partner.example/…)",
		"Boxoffice is listening on [::]:8080",
		"  REST:          http://localhost:8080/api/v1/events",
		"  API reference: http://localhost:8080/docs (try requests with your key)",
		"  GraphQL:       http://localhost:8080/graphql (open it in a browser for the playground)",
	} {
		require.Contains(t, got, want)
	}
	t.Log("\n" + got)
}

// TestCLIAccountsAndAudit covers the commands that came with the developer
// portal: listing accounts, removing an allowlist host, and the audit log.
func TestCLIAccountsAndAudit(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "cli.db")
	mustJSON(t, dbURL, "accounts", "create", "--name", "Kofi", "--email", "kofi@kofi.example", "--json")
	mustJSON(t, dbURL, "accounts", "create", "--name", "Ama", "--email", "ama@ama.example", "--status", "pending_approval", "--json")

	all := mustJSON(t, dbURL, "accounts", "list", "--json")
	require.Len(t, all["accounts"], 2)
	pending := mustJSON(t, dbURL, "accounts", "list", "--status", "pending_approval", "--json")
	require.Len(t, pending["accounts"], 1)
	ama := pending["accounts"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"id": 2.0, "name": "Ama", "email": "ama@ama.example", "status": "pending_approval",
		"created_at": ama["created_at"]}, ama)
	text, err := runCLI(t, dbURL, "accounts", "list", "--status", "disabled")
	require.NoError(t, err)
	require.Equal(t, "no accounts\n", text)
	_, err = runCLI(t, dbURL, "accounts", "list", "--status", "bogus")
	require.ErrorContains(t, err, `status "bogus" is not one of active, pending_approval, disabled`)

	mustJSON(t, dbURL, "apps", "create", "--account", "1", "--name", "Shop", "--redirect-domain", "a.kofi.example",
		"--redirect-domain", "b.kofi.example", "--json")
	up := mustJSON(t, dbURL, "apps", "update", "1", "--remove-redirect-domain", "A.kofi.example", "--json")
	require.Equal(t, []any{"b.kofi.example"}, up["redirect_domains"])
	mustJSON(t, dbURL, "keys", "rotate", "--app", "1", "--env", "test", "--json")

	log := mustJSON(t, dbURL, "audit", "list", "--account", "1", "--json")
	var got []string
	for _, e := range log["entries"].([]any) {
		m := e.(map[string]any)
		require.Equal(t, "operator", m["actor"])
		require.Nil(t, m["ip"])
		require.Equal(t, 1.0, m["account_id"])
		got = append(got, m["action"].(string)+" "+m["detail"].(string))
	}
	require.Equal(t, []string{
		"key.rotate test key rotated; the old one is revoked",
		"app.redirect_domain_remove a.kofi.example",
		`app.create name "Shop"; test and live keys and webhook secret issued`,
		"account.create status active",
	}, got, "newest first")
	all = mustJSON(t, dbURL, "audit", "list", "--limit", "2", "--json")
	require.Len(t, all["entries"], 2)
	text, err = runCLI(t, dbURL, "audit", "list", "--account", "2")
	require.NoError(t, err)
	require.Regexp(t, `^\S+Z  operator +account\.create +account 2 +status pending_approval\n$`, text)
}
