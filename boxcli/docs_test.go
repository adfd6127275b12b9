package boxcli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// docBlock is a shell block of the documentation that runs curl.
type docBlock struct {
	where string // file:line
	text  string
}

// curlBlocks returns the ```sh and ```bash blocks of README.md and docs/
// that call curl, in file order.
func curlBlocks(t *testing.T) []docBlock {
	t.Helper()
	files := []string{"../README.md"}
	more, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	files = append(files, more...)
	var out []docBlock
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		var cur *docBlock
		for i, line := range strings.Split(string(src), "\n") {
			trimmed := strings.TrimSpace(line)
			switch {
			case cur == nil && (trimmed == "```sh" || trimmed == "```bash"):
				cur = &docBlock{where: fmt.Sprintf("%s:%d", strings.TrimPrefix(f, "../"), i+1)}
			case cur != nil && trimmed == "```":
				if strings.Contains(cur.text, "curl ") {
					out = append(out, *cur)
				}
				cur = nil
			case cur != nil:
				cur.text += line + "\n"
			}
		}
	}
	return out
}

// demoServer starts `boxoffice serve --demo` as `make run` does, on a
// fresh SQLite file, and returns its base URL and demo keys.
func demoServer(t *testing.T, dbURL string) (base, testKey, liveKey string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--demo")
	cmd.Env = append(os.Environ(), "BOXOFFICE_RUN_MAIN=1", "ADDR=127.0.0.1:0", "ADMIN_ADDR=127.0.0.1:0",
		"DATABASE_URL="+dbURL, "PAYMENT_PROVIDER=dev")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	keyRE := regexp.MustCompile(`(test|live) key:\s+(svc_\S+)`)
	addrRE := regexp.MustCompile(`listening on (\S+)`)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := testwait.After(t, 60*time.Second)
	for base == "" {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the server exited early")
			if m := keyRE.FindStringSubmatch(line); m != nil && m[1] == "test" {
				testKey = m[2]
			} else if m != nil {
				liveKey = m[2]
			}
			if m := addrRE.FindStringSubmatch(line); m != nil {
				base = "http://" + m[1]
			}
		case <-deadline:
			t.Fatal("the server did not start")
		}
	}
	go func() {
		for range lines {
		}
	}()
	require.NotEmpty(t, testKey)
	require.NotEmpty(t, liveKey)
	return base, testKey, liveKey
}

// TestDocsCommands runs every curl block of README.md and docs/ against a
// server started as `make run` starts one, each block in a shell of its
// own with only KEY set (as the README tells the reader to), first in the
// order of the documentation and then in the reverse order: pasted in any
// order, every command answers 2xx (curl --fail-with-body). The
// placeholders a reader replaces with their own (svc_test_…, an order
// reference sbx_…, a cursor or a next_since …) are replaced with real ones; any other "…"
// left in a command fails the test, as would a block a reader cannot run.
func TestDocsCommands(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(dir, "boxoffice.db")
	base, testKey, liveKey := demoServer(t, dbURL)

	// bin/boxoffice, as `make run` leaves it: this test binary running main.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	wrapper := fmt.Sprintf("#!/bin/sh\nBOXOFFICE_RUN_MAIN=1 DATABASE_URL=%q exec %q \"$@\"\n", dbURL, os.Args[0])
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "boxoffice"), []byte(wrapper), 0o755))

	// What a reader has by the time a block names it: a sandbox order, and
	// the cursor of a page of paid orders.
	call := func(method, path, key, idem string, body any) map[string]any {
		raw, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(context.Background(), method, base+path, strings.NewReader(string(raw)))
		require.NoError(t, err)
		req.Header.Set("X-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var v map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&v))
		require.Less(t, res.StatusCode, 300, "%v", v)
		return v
	}
	free := func(i int) string {
		v := call(http.MethodPost, "/api/v1/checkout-sessions", testKey, fmt.Sprintf("docs-free-%d", i), map[string]any{
			"event_id": 9, "eventdate_id": 13, "items": []any{map[string]any{"ticket_id": 16, "quantity": 1}},
			"customer":    map[string]any{"name": "Ama Mensah", "email": "ama@example.com", "phone": "024 123 4567"},
			"success_url": "https://partner.example/done", "cancel_url": "https://partner.example/cancel",
		})
		return v["data"].(map[string]any)["order_reference"].(string)
	}
	ref := free(0)
	free(1)
	free(2)
	page := call(http.MethodGet, "/api/v1/orders?status=paid&limit=2", testKey, "", nil)
	cursor, _ := page["meta"].(map[string]any)["next_cursor"].(string)
	require.NotEmpty(t, cursor, "%v", page)
	changes := call(http.MethodGet, "/api/v1/order-changes?limit=1", testKey, "", nil)
	since, _ := changes["meta"].(map[string]any)["next_since"].(string)
	require.NotEmpty(t, since, "%v", changes)

	replacer := strings.NewReplacer(
		"http://localhost:8080", base,
		"svc_test_…", testKey, "svc_live_…", liveKey,
		"sbx_…", ref,
	)
	cursorRE := regexp.MustCompile(`cursor=[A-Za-z0-9_=-]*…`)
	sinceRE := regexp.MustCompile(`SINCE=[A-Za-z0-9_=-]*…`)
	blocks := curlBlocks(t)
	require.NotEmpty(t, blocks)
	run := func(b docBlock) {
		text := replacer.Replace(b.text)
		text = cursorRE.ReplaceAllString(text, "cursor="+cursor)
		text = sinceRE.ReplaceAllString(text, "SINCE="+since)
		for _, line := range strings.Split(text, "\n") {
			code, _, _ := strings.Cut(line, "#")
			require.NotContains(t, code, "…", "%s: a placeholder a reader cannot resolve: %s", b.where, line)
		}
		script := "set -euo pipefail\ncurl() { command curl -sS --fail-with-body \"$@\"; }\nKEY=" + testKey + "\n" + text
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s failed:\n%s\n--- output:\n%s", b.where, b.text, out)
	}
	for _, b := range blocks {
		run(b)
	}
	for _, b := range slices.Backward(blocks) {
		run(b)
	}
	t.Logf("%d blocks ran twice", len(blocks))
}
