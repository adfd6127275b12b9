package boxcli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"
)

// runCLI runs the boxoffice command against dbURL and returns stdout.
func runCLI(t *testing.T, dbURL string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := New(&stdout, &stderr).Run(context.Background(), append([]string{"boxoffice", "--database-url", dbURL}, args...))
	return stdout.String(), err
}

// runMain runs the program as main does, with its error reporting, and
// returns what it printed.
func runMain(t *testing.T, dbURL string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errs bytes.Buffer
	err = Run(context.Background(), append([]string{"boxoffice", "--database-url", dbURL}, args...), &out, &errs)
	return out.String(), errs.String(), err
}

func mustJSON(t *testing.T, dbURL string, args ...string) map[string]any {
	t.Helper()
	out, err := runCLI(t, dbURL, args...)
	require.NoError(t, err, "boxoffice %v", args)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), "stdout must be exactly one JSON object: %q", out)
	return v
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
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
		require.ElementsMatch(t, []string{"venues", "events", "event_dates", "tickets", "created", "updated", "unchanged", "nothing_changed"}, keys(res))
		require.Equal(t, map[string]any{"accra-arena": 1.0}, res["venues"])
		require.Equal(t, map[string]any{"EVT-1001": 1.0}, res["events"])
		one := map[string]any{"venues": 1.0, "events": 1.0, "event_dates": 1.0, "tickets": 1.0}
		none := map[string]any{"venues": 0.0, "events": 0.0, "event_dates": 0.0, "tickets": 0.0}
		require.Equal(t, one, res["created"])
		require.Equal(t, false, res["nothing_changed"])
		again := mustJSON(t, dbURL, "catalog", "import", file, "--json")
		for _, k := range []string{"venues", "events", "event_dates", "tickets"} {
			require.Equal(t, res[k], again[k])
		}
		require.Equal(t, none, again["created"])
		require.Equal(t, none, again["updated"])
		require.Equal(t, one, again["unchanged"])
		require.Equal(t, true, again["nothing_changed"])
		out, err := runCLI(t, dbURL, "catalog", "import", file)
		require.NoError(t, err)
		require.Equal(t, "nothing changed: the catalog already matches "+file+" (1 venue, 1 event, 1 event date, 1 ticket)\n", out)
		edited := filepath.Join(t.TempDir(), "edited.json")
		require.NoError(t, os.WriteFile(edited, []byte(strings.Replace(cliCatalog, `"150.00"`, `"160.00"`, 1)), 0o600))
		out, err = runCLI(t, dbURL, "catalog", "import", edited)
		require.NoError(t, err)
		require.Equal(t, "imported "+edited+": created none; updated 1 ticket; unchanged 1 venue, 1 event, 1 event date\n", out)

		bad := filepath.Join(t.TempDir(), "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte(`{"events": [{"reference": "EVT-9", "name": "X", "slug": "x", "dates": [{"reference": "D-9", "start": "2026-12-24T18:00:00Z", "end": "2026-12-24T20:00:00Z", "venue": "accra-arena", "tickets": [{"reference": "T-9", "name": "R", "price": "ten", "currency": "GHS"}]}]}]}`), 0o600))
		_, err = runCLI(t, dbURL, "catalog", "import", bad)
		require.ErrorContains(t, err, `ticket "T-9": price: "ten"`)

		typed := filepath.Join(t.TempDir(), "typed.json")
		require.NoError(t, os.WriteFile(typed, []byte(strings.NewReplacer(`"quantity": 500`, `"quantity": "500"`, `"published": true`, `"published": "yes"`).Replace(cliCatalog)), 0o600))
		stdout, stderr, err := runMain(t, dbURL, "catalog", "import", typed, "--json")
		require.Error(t, err)
		problems := []any{
			`event "EVT-1001": published: must be true or false, not a string ("yes") (line 4)`,
			`ticket "TKT-1001-REG": quantity: must be a whole number or null, not a string ("500") (line 6)`,
		}
		require.JSONEq(t, mustMarshal(t, map[string]any{"error": "catalog file refused (2 problems):\n  " + problems[0].(string) + "\n  " + problems[1].(string), "problems": problems}), stdout)
		require.Equal(t, "boxoffice: catalog file refused (2 problems):\n  "+problems[0].(string)+"\n  "+problems[1].(string)+"\n", stderr,
			"a refused file lists its problems, one a line")
		_, err = runCLI(t, dbURL, "catalog", "import", filepath.Join(t.TempDir(), "missing.json"))
		require.Error(t, err)
	})

	t.Run("SeedDemo", func(t *testing.T) {
		demo := mustJSON(t, dbURL, "seed", "demo", "--json")
		require.ElementsMatch(t, []string{"id", "account_id", "name", "test_key", "live_key", "webhook_secret"}, keys(demo))
		require.Equal(t, "ok", authCode(demo["test_key"].(string)))
	})

	t.Run("AccountsList", func(t *testing.T) {
		list := mustJSON(t, dbURL, "accounts", "list", "--json")
		require.Equal(t, []string{"accounts"}, keys(list))
		accounts := list["accounts"].([]any)
		require.NotEmpty(t, accounts)
		first := accounts[0].(map[string]any)
		require.ElementsMatch(t, []string{"id", "name", "email", "status", "created_at"}, keys(first))
		require.Equal(t, "ops@kofi.example", first["email"])
		require.Len(t, mustJSON(t, dbURL, "accounts", "list", "--status", "active", "--json")["accounts"], len(accounts))
		require.Equal(t, map[string]any{"accounts": []any{}}, mustJSON(t, dbURL, "accounts", "list", "--status", "disabled", "--json"))
		out, err := runCLI(t, dbURL, "accounts", "list", "--status", "disabled")
		require.NoError(t, err)
		require.Equal(t, "no accounts are disabled\n", out)
		out, err = runCLI(t, dbURL, "accounts", "list")
		require.NoError(t, err)
		require.Contains(t, out, `"Kofi Tickets" <ops@kofi.example>`)
		_, err = runCLI(t, dbURL, "accounts", "list", "--status", "gone")
		require.ErrorContains(t, err, `status "gone" is not one of active, pending_approval, disabled`)
	})

	t.Run("AppsListAndShowNeverShowSecrets", func(t *testing.T) {
		secrets := []string{app["test_key"].(string), app["live_key"].(string), app["webhook_secret"].(string)}
		noSecrets := func(out string) {
			t.Helper()
			for _, s := range secrets {
				require.NotContains(t, out, s)
			}
			require.NotContains(t, out, "whsec_")
		}
		list := mustJSON(t, dbURL, "apps", "list", "--account", "1", "--json")
		apps := list["apps"].([]any)
		require.Len(t, apps, 1)
		require.ElementsMatch(t, []string{"id", "account_id", "name", "status", "redirect_domains", "webhook_url", "ticket_emails", "created_at", "updated_at"},
			keys(apps[0].(map[string]any)))
		noSecrets(mustMarshal(t, list))
		out, err := runCLI(t, dbURL, "apps", "list")
		require.NoError(t, err)
		require.Contains(t, out, `"Kofi shop"`)
		noSecrets(out)
		_, err = runCLI(t, dbURL, "apps", "list", "--account", "99")
		require.ErrorContains(t, err, "account 99 does not exist")

		show := mustJSON(t, dbURL, "apps", "show", "1", "--json")
		require.ElementsMatch(t, []string{"id", "account_id", "name", "status", "redirect_domains", "webhook_url", "ticket_emails", "created_at", "updated_at", "keys"}, keys(show))
		require.Equal(t, "Kofi shop", show["name"])
		keyList := show["keys"].([]any)
		require.NotEmpty(t, keyList)
		for _, k := range keyList {
			k := k.(map[string]any)
			require.ElementsMatch(t, []string{"env", "hint", "created_at"}, keys(k))
			require.Regexp(t, `^[a-z2-7]{4}$`, k["hint"])
		}
		noSecrets(mustMarshal(t, show))
		out, err = runCLI(t, dbURL, "apps", "show", "1")
		require.NoError(t, err)
		require.Contains(t, out, `app 1 "Kofi shop" of account 1 is active`)
		noSecrets(out)
		_, err = runCLI(t, dbURL, "apps", "show", "99")
		require.ErrorContains(t, err, "app 99 does not exist")
	})

	t.Run("AppsRotateWebhookSecret", func(t *testing.T) {
		rot := mustJSON(t, dbURL, "apps", "rotate-webhook-secret", "1", "--json")
		require.ElementsMatch(t, []string{"app_id", "webhook_secret"}, keys(rot))
		require.Equal(t, 1.0, rot["app_id"])
		require.Regexp(t, `^whsec_[A-Za-z0-9+/]{43}=$`, rot["webhook_secret"])
		require.NotEqual(t, app["webhook_secret"], rot["webhook_secret"])
		stored, err := store.AppByID(ctx, db, 1)
		require.NoError(t, err)
		require.Equal(t, rot["webhook_secret"], stored.WebhookSecret, "deliveries are signed with it from now on")
		_, err = runCLI(t, dbURL, "apps", "rotate-webhook-secret", "99")
		require.ErrorContains(t, err, "app 99 does not exist")
	})

	t.Run("WebhooksList", func(t *testing.T) {
		out, err := runCLI(t, dbURL, "webhooks", "list", "--app", "1")
		require.NoError(t, err)
		require.Equal(t, "app 1 has no webhook events yet (boxoffice webhooks test --app 1 --env test emits one)\n", out)
		require.Equal(t, map[string]any{"app_id": 1.0, "events": []any{}}, mustJSON(t, dbURL, "webhooks", "list", "--app", "1", "--json"))
		for _, limit := range []string{"0", "-3", "1001"} {
			_, err = runCLI(t, dbURL, "webhooks", "list", "--app", "1", "--limit", limit)
			require.ErrorContains(t, err, "--limit "+limit+" is not between 1 and 1000")
		}
	})

	t.Run("ErrUsageOneLine", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			want string // the one line, after "boxoffice: "
		}{
			{"ErrUnknownCommand", []string{"bogus"}, `unknown command "bogus" (boxoffice has serve, migrate, seed, catalog, accounts, apps, keys, webhooks, listen, audit, mail, scanners, tickets, orders, dates, healthcheck)`},
			{"ErrUnknownSubcommand", []string{"apps", "bogus"}, `unknown command "apps bogus" (boxoffice apps has create, update, set-ticket-emails, list, show, rotate-webhook-secret, set-status)`},
			{"ErrNoSubcommand", []string{"accounts"}, `accounts needs a command: create, list, reset-link, set-status`},
			{"ErrUnknownFlag", []string{"apps", "list", "--bogus"}, `apps list: flag provided but not defined: -bogus (see boxoffice apps list --help)`},
			{"ErrMissingFlag", []string{"apps", "create", "--name", "x"}, `apps create: Required flag "account" not set (see boxoffice apps create --help)`},
			{"ErrBadFlagValue", []string{"webhooks", "list", "--app", "x"}, `webhooks list: invalid value "x" for flag -app: strconv.ParseInt: parsing "x": invalid syntax (see boxoffice webhooks list --help)`},
			{"ErrMissingArgument", []string{"apps", "show"}, `apps show needs 1 argument(s): ID (see boxoffice apps show --help)`},
			{"ErrStrayArgument", []string{"apps", "list", "3"}, `apps list takes no arguments, but was given "3" (see boxoffice apps list --help)`},
			{"ErrBadLimit", []string{"webhooks", "list", "--app", "1", "--limit", "0"}, `--limit 0 is not between 1 and 1000`},
			{"ErrListenMissingFlags", []string{"listen"}, `listen: Required flags "api-key, forward-to" not set (see boxoffice listen --help)`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				stdout, stderr, err := runMain(t, dbURL, tt.args...)
				require.Error(t, err)
				require.Equal(t, "boxoffice: "+tt.want+"\n", stderr, "one line on stderr")
				require.Empty(t, stdout, "never the help text")

				stdout, stderr, err = runMain(t, dbURL, append(tt.args, "--json")...)
				require.Error(t, err)
				require.Equal(t, 1, strings.Count(stderr, "\n"), "one line on stderr: %q", stderr)
				var body map[string]any
				require.NoError(t, json.Unmarshal([]byte(stdout), &body), "one JSON object on stdout: %q", stdout)
				require.Equal(t, []string{"error"}, keys(body))
				require.Equal(t, strings.TrimSuffix(strings.TrimPrefix(stderr, "boxoffice: "), "\n"), body["error"])
			})
		}
		t.Run("OKHelpWhenAsked", func(t *testing.T) {
			for _, args := range [][]string{nil, {"--help"}, {"apps", "show", "--help"}} {
				stdout, _, err := runMain(t, dbURL, args...)
				require.NoError(t, err)
				require.Contains(t, stdout, "USAGE:")
			}
		})
	})

	t.Run("OKHelpListsOwnFlags", func(t *testing.T) {
		help := func(args ...string) string {
			t.Helper()
			stdout, _, err := runMain(t, dbURL, append(args, "--help")...)
			require.NoError(t, err)
			return stdout
		}
		globals := func(out string) []string {
			_, section, _ := strings.Cut(out, "GLOBAL OPTIONS:")
			return regexp.MustCompile(`(?m)^   (--[a-z-]+)`).FindAllString(section, -1)
		}
		listen := help("listen")
		require.Contains(t, listen, "--forward-to")
		require.Equal(t, []string{"   --addr", "   --public-base-url"}, globals(listen), "listen calls the server serve in the same shell serves")
		require.NotContains(t, listen, "--database-url")
		require.Equal(t, []string{"   --addr"}, globals(help("healthcheck")))
		require.Equal(t, []string{"   --database-url", "   --webhook-allow-private-targets", "   --max-apps-per-account"}, globals(help("apps", "create")))
		require.Equal(t, []string{"   --database-url", "   --addr", "   --public-base-url"}, globals(help("orders", "show")))
		require.Equal(t, []string{"   --database-url"}, globals(help("mail", "list")))
		byCommand, _, err := runMain(t, dbURL, "apps", "help", "list")
		require.NoError(t, err)
		require.Equal(t, []string{"   --database-url"}, globals(byCommand), "help by the help command too")
		apps := help("apps")
		require.Contains(t, apps, "rotate-webhook-secret")
		require.NotContains(t, apps, "GLOBAL OPTIONS", "a group takes no option")
		all := len(globalFlags())
		require.Len(t, globals(help("serve")), all, "serve reads them all")
		root := help()
		require.Equal(t, []string{"   --database-url", "   --help"}, globals(root), "boxoffice --help lists only what every command may read")
		require.LessOrEqual(t, strings.Count(root, "\n"), 30, "boxoffice --help fits a screen:\n%s", root)
		require.Contains(t, root, "serve --help lists the server's")
		for _, c := range New(io.Discard, io.Discard).Commands {
			require.Contains(t, root, "   "+c.Name+" ", "every command is listed")
		}

		// Every command: its own flags, then only the globals it names.
		var walk func(path []string, c *cli.Command)
		walk = func(path []string, c *cli.Command) {
			for _, sub := range c.Commands {
				if sub.Name == "help" {
					continue
				}
				p := append(append([]string{}, path...), sub.Name)
				walk(p, sub)
				name := strings.Join(p, " ")
				if len(sub.Commands) > 0 || name == "serve" {
					continue
				}
				want, ok := commandGlobals[name]
				if !ok {
					want = []string{"database-url"}
				}
				var got []string
				for _, g := range globals(help(p...)) {
					got = append(got, strings.TrimPrefix(g, "   --"))
				}
				require.ElementsMatch(t, want, got, "boxoffice %s --help", name)
			}
		}
		walk(nil, New(io.Discard, io.Discard))
	})

	t.Run("EveryFlagHasHelp", func(t *testing.T) {
		var walk func(prefix string, c *cli.Command)
		walk = func(prefix string, c *cli.Command) {
			name := strings.TrimSpace(prefix + " " + c.Name)
			require.NotEmpty(t, c.Usage, "command %s", name)
			for _, f := range c.Flags {
				df, ok := f.(cli.DocGenerationFlag)
				require.True(t, ok, "%s %v", name, f.Names())
				require.NotEmpty(t, df.GetUsage(), "%s --%s has no help text", name, f.Names()[0])
			}
			for _, sub := range c.Commands {
				walk(name, sub)
			}
		}
		walk("", New(io.Discard, io.Discard))
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
	require.Equal(t, "no accounts are disabled\n", text)
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

// TestCLIAppCap: apps create refuses an account's app beyond
// MAX_APPS_PER_ACCOUNT (--max-apps-per-account), in one line, and in
// --json's error too.
func TestCLIAppCap(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.FreshURL(t, kind)
			mustJSON(t, dbURL, "accounts", "create", "--name", "Kofi", "--email", "kofi@kofi.example", "--json")
			create := func(max, name string, asJSON bool) (string, string, error) {
				args := []string{"--max-apps-per-account", max, "apps", "create", "--account", "1", "--name", name}
				if asJSON {
					args = append(args, "--json")
				}
				return runMain(t, dbURL, args...)
			}
			for _, name := range []string{"Web", "Mobile"} {
				_, _, err := create("2", name, true)
				require.NoError(t, err)
			}
			const refused = "account 1 already has 2 apps, the most one account may have (MAX_APPS_PER_ACCOUNT)"
			for _, tt := range []struct {
				name string
				json bool
			}{{"ErrText", false}, {"ErrJSON", true}} {
				t.Run(tt.name, func(t *testing.T) {
					stdout, stderr, err := create("2", "Kiosk", tt.json)
					require.Error(t, err)
					require.Equal(t, "boxoffice: "+refused+"\n", stderr)
					if tt.json {
						require.JSONEq(t, mustMarshal(t, map[string]any{"error": refused}), stdout)
					} else {
						require.Empty(t, stdout)
					}
				})
			}
			_, _, err := create("3", "Kiosk", true)
			require.NoError(t, err, "an operator may raise the cap")
			list := mustJSON(t, dbURL, "apps", "list", "--account", "1", "--json")
			require.Len(t, list["apps"], 3)
		})
	}
}
