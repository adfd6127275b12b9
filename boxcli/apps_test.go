package boxcli

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCLISetTicketEmails: apps set-ticket-emails switches an app's ticket
// emails, and apps show says which way.
func TestCLISetTicketEmails(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "cli.db")
	acc := mustJSON(t, dbURL, "accounts", "create", "--name", "Kofi", "--email", "kofi@kofi.example", "--json")
	app := mustJSON(t, dbURL, "apps", "create", "--account", fmt.Sprint(acc["id"]), "--name", "Shop", "--json")
	id := fmt.Sprint(app["id"])
	require.Equal(t, map[string]any{"id": app["id"], "ticket_emails": false}, mustJSON(t, dbURL, "apps", "set-ticket-emails", id, "off", "--json"))
	require.Equal(t, false, mustJSON(t, dbURL, "apps", "show", id, "--json")["ticket_emails"])
	out, err := runCLI(t, dbURL, "apps", "set-ticket-emails", id, "on")
	require.NoError(t, err)
	require.Contains(t, out, "ticket emails on (the service emails buyers their tickets)")
	_, err = runCLI(t, dbURL, "apps", "set-ticket-emails", id, "maybe")
	require.ErrorContains(t, err, `the second argument is on or off, not "maybe"`)
	_, err = runCLI(t, dbURL, "apps", "set-ticket-emails", "999", "on")
	require.Error(t, err)
}
