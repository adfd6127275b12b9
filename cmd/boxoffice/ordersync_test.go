package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// buildOrdersync builds the example client of docs/api.md
// (examples/ordersync) into a directory of the test's own.
func buildOrdersync(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ordersync")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/boxoffice/boxoffice/examples/ordersync")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestOrdersyncExample runs the example client against a live server: it
// catches up with every order, remembers where it stopped, and on its next
// run prints only what changed since.
func TestOrdersyncExample(t *testing.T) {
	t.Parallel()
	bin := buildOrdersync(t)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		state := filepath.Join(t.TempDir(), "state")
		run := func(key string) (map[string]string, []string, error) {
			t.Helper()
			storetest.ChangesSettled(t, db)
			cmd := exec.Command(bin, "-once", "-state", state)
			cmd.Env = append(os.Environ(), "BOXOFFICE_URL="+tb.srv.URL, "BOXOFFICE_API_KEY="+key)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				return nil, nil, &exitError{err, stderr.String()}
			}
			statuses := map[string]string{}
			var refs []string
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if line == "" {
					continue
				}
				f := strings.Fields(line)
				require.GreaterOrEqual(t, len(f), 6, "line %q", line)
				statuses[f[0]] = f[1]
				refs = append(refs, f[0])
			}
			return statuses, refs, nil
		}

		free := tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2)
		pending, paid := tb.placed(t, tb.testKey, tb.highlife(1)), tb.placed(t, tb.testKey, free)
		other := tb.placed(t, tb.testKey, tb.highlife(2))
		tb.placed(t, tb.liveKey, tb.highlife(1)) // live: not the test key's

		got, refs, err := run(tb.testKey)
		require.NoError(t, err)
		require.Equal(t, map[string]string{pending: "pending", paid: "paid", other: "pending"}, got)
		require.Equal(t, []string{pending, paid, other}, refs, "in the order of their changes")

		res := tb.do(t, http.MethodPost, "/api/v1/checkout-sessions/"+pending+"/expire", tb.testKey, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		got, _, err = run(tb.testKey)
		require.NoError(t, err)
		require.Equal(t, map[string]string{pending: "expired"}, got, "a second run reads only what changed")

		got, _, err = run(tb.testKey)
		require.NoError(t, err)
		require.Empty(t, got)

		_, _, err = run("svc_test_nope")
		require.ErrorContains(t, err, "invalid_api_key")
	})
}

type exitError struct {
	err    error
	stderr string
}

func (e *exitError) Error() string { return e.err.Error() + ": " + e.stderr }
