package boxcli

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/stretchr/testify/require"
)

// TestCLIScannersAndTickets: the operator makes, lists and revokes
// scanner keys, looks a ticket up with its scans, and voids tickets, with
// the spec's JSON and readable text.
func TestCLIScannersAndTickets(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "door.db")
	tb := serve(t, storetest.OpenURL(t, dbURL))
	event := fmt.Sprint(tb.demo.Catalog.Events["DEMO-CHALEWOTE"])

	created := mustJSON(t, dbURL, "scanners", "create", "--event", event, "--env", "test", "--name", "Main gate", "--json")
	require.ElementsMatch(t, []string{"id", "name", "event_id", "environment", "key"}, keys(created))
	require.Equal(t, "Main gate", created["name"])
	require.Equal(t, float64(tb.demo.Catalog.Events["DEMO-CHALEWOTE"]), created["event_id"])
	require.Equal(t, "test", created["environment"])
	key := created["key"].(string)
	require.Regexp(t, `^svc_scan_test_[a-z2-7]{32}$`, key)

	out, err := runCLI(t, dbURL, "scanners", "create", "--event", event, "--env", "live", "--name", "Side door")
	require.NoError(t, err)
	require.Contains(t, out, `"Side door" for the live door of event `+event+` (the key is shown only this once):`)
	require.Regexp(t, `\n  svc_scan_live_[a-z2-7]{32}\n`, out)
	require.Contains(t, out, "Open http://localhost:8080/door on the phone")

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--event", event, "--env", "prod", "--name", "X"}, `--env "prod" is not one of test, live`},
		{[]string{"--event", "999999", "--env", "test", "--name", "X"}, "event 999999 does not exist"},
		{[]string{"--event", event, "--env", "test", "--name", " "}, "--name is required"},
		{[]string{"--event", event, "--env", "test"}, "name"},
	} {
		_, err := runCLI(t, dbURL, append([]string{"scanners", "create"}, bad.args...)...)
		require.ErrorContains(t, err, bad.want)
	}

	list := mustJSON(t, dbURL, "scanners", "list", "--event", event, "--json")["scanners"].([]any)
	require.Len(t, list, 2)
	first := list[0].(map[string]any)
	require.ElementsMatch(t, []string{"id", "name", "event_id", "environment", "hint", "created_at", "revoked_at"}, keys(first))
	require.Equal(t, key[len(key)-4:], first["hint"])
	require.NotContains(t, mustMarshal(t, list), key, "never a key")
	require.Empty(t, mustJSON(t, dbURL, "scanners", "list", "--event", "999999", "--json")["scanners"])
	out, err = runCLI(t, dbURL, "scanners", "list")
	require.NoError(t, err)
	require.Contains(t, out, `"Main gate"  key …`+key[len(key)-4:])
	require.NotContains(t, out, key)

	// A ticket, scanned at the door with the new key.
	tk := tb.freeTickets(t, tb.testKey, 2)
	code, ref := tk[0]["code"].(string), tk[0]["order_reference"].(string)
	require.Equal(t, "admitted", tb.checkIn(t, key, tb.scan(code, "DEMO-CHALEWOTE-1", "gate", "North")).data()["result"])
	require.Equal(t, "already_checked_in", tb.checkIn(t, key, tb.scan(code, "DEMO-CHALEWOTE-1")).data()["reason"])

	shown := mustJSON(t, dbURL, "tickets", "show", code, "--json")
	require.ElementsMatch(t, []string{"ticket", "inside", "voided_at", "void_reason", "scans"}, keys(shown))
	require.Equal(t, true, shown["inside"])
	require.Equal(t, "checked_in", shown["ticket"].(map[string]any)["status"])
	scans := shown["scans"].([]any)
	require.Len(t, scans, 2)
	s0 := scans[0].(map[string]any)
	require.Equal(t, "admitted", s0["result"])
	require.Equal(t, "Main gate", s0["scanner_name"])
	require.Equal(t, created["id"], s0["scanner_id"])
	// As printed on the ticket (groups of four), pasted with or without
	// quotes, in lower case too.
	printed := strings.Join(ticketdoc.Groups(code), " ")
	require.Equal(t, shown["ticket"], mustJSON(t, dbURL, append([]string{"tickets", "show", "--json"}, ticketdoc.Groups(code)...)...)["ticket"])
	out, err = runCLI(t, dbURL, "tickets", "show", strings.ToLower(printed))
	require.NoError(t, err)
	require.Contains(t, out, "status checked_in, inside, first admitted ")
	require.Contains(t, out, "2 scan(s):")
	require.Contains(t, out, "rejected (already_checked_in)")
	_, err = runCLI(t, dbURL, "tickets", "show", "NOSUCHCODE")
	require.ErrorContains(t, err, "No ticket has this code.")

	voided := mustJSON(t, dbURL, "tickets", "void", "--code", strings.ToLower(printed), "--reason", "Refunded at the box office", "--json")
	require.Equal(t, 1.0, voided["voided"])
	require.Equal(t, ref, voided["order_reference"])
	require.Equal(t, "void", voided["tickets"].([]any)[0].(map[string]any)["status"])
	shown = mustJSON(t, dbURL, "tickets", "show", code, "--json")
	require.Equal(t, "Refunded at the box office", shown["void_reason"])
	require.NotNil(t, shown["voided_at"])
	require.Equal(t, true, shown["inside"], "a voided ticket inside stays recorded")
	out, err = runCLI(t, dbURL, "tickets", "void", "--order", ref)
	require.NoError(t, err)
	require.Contains(t, out, "voided 1 of 2 ticket(s) of order "+ref+" (the others were void already)")
	require.Equal(t, "void", tb.checkIn(t, key, tb.scan(tk[1]["code"].(string), "DEMO-CHALEWOTE-1")).data()["reason"])
	_, err = runCLI(t, dbURL, "tickets", "void")
	require.ErrorContains(t, err, "--code or --order: give exactly one")
	_, err = runCLI(t, dbURL, "tickets", "void", "--order", "sbx_nosuchorder00000000000000")
	require.ErrorContains(t, err, "No order has the reference")

	revoked := mustJSON(t, dbURL, "scanners", "revoke", fmt.Sprint(created["id"]), "--json")
	require.NotNil(t, revoked["revoked_at"])
	out, err = runCLI(t, dbURL, "scanners", "revoke", fmt.Sprint(created["id"]))
	require.NoError(t, err, "revoking twice changes nothing")
	require.Contains(t, out, `scanner `+fmt.Sprint(created["id"])+` "Main gate" is revoked (since `)
	refused := tb.checkIn(t, key, tb.scan(code, "DEMO-CHALEWOTE-1"))
	require.Equal(t, http.StatusUnauthorized, refused.Status, "%s", refused.Raw)
	require.Equal(t, "invalid_api_key", refused.errorCode(), "%s", refused.Raw)
	_, err = runCLI(t, dbURL, "scanners", "revoke", "999999")
	require.ErrorContains(t, err, "scanner 999999 does not exist")

	// ADDR moved off 8080, PUBLIC_BASE_URL unset: the door is where serve
	// in the same shell serves.
	out, err = runCLI(t, dbURL, "--addr", ":18420", "scanners", "create", "--event", event, "--env", "test", "--name", "Moved")
	require.NoError(t, err)
	require.Contains(t, out, "Open http://localhost:18420/door on the phone")
	out, err = runCLI(t, dbURL, "--addr", ":18420", "--public-base-url", "https://tickets.example/", "scanners", "create", "--event", event, "--env", "test", "--name", "Public")
	require.NoError(t, err)
	require.Contains(t, out, "Open https://tickets.example/door on the phone", "PUBLIC_BASE_URL, when set, wins")
}
