package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary play the boxoffice command, so an
// end-to-end test can run the real program as a process.
func TestMain(m *testing.M) {
	if os.Getenv("BOXOFFICE_RUN_MAIN") == "1" {
		os.Args = append([]string{"boxoffice"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestServeSIGTERM starts `boxoffice serve --demo` as a process, uses it,
// and checks that SIGTERM makes it stop gracefully with exit status 0.
func TestServeSIGTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "serve", "--demo")
	cmd.Env = append(os.Environ(), "BOXOFFICE_RUN_MAIN=1", "ADDR=127.0.0.1:0", "ADMIN_ADDR=127.0.0.1:0",
		"DATABASE_URL=sqlite://"+filepath.Join(dir, "e2e.db"))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var key, addr, metrics string
	keyRE := regexp.MustCompile(`test key:\s+(svc_test_\S+)`)
	addrRE := regexp.MustCompile(`listening on (\S+)`)
	metricsRE := regexp.MustCompile(`Metrics:\s+(http://\S+/metrics)`)
	sc := bufio.NewScanner(stdout)
	deadline := testwait.After(t, 30*time.Second)
	lines := make(chan string)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for addr == "" || metrics == "" {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the server exited early")
			if m := keyRE.FindStringSubmatch(line); m != nil {
				key = m[1]
			}
			if m := addrRE.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
			if m := metricsRE.FindStringSubmatch(line); m != nil {
				metrics = m[1]
			}
		case <-deadline:
			t.Fatal("the server did not start")
		}
	}
	go func() {
		for range lines {
		}
	}()
	require.NotEmpty(t, key, "the first start prints the demo keys")

	req, err := http.NewRequestWithContext(context.Background(), "GET", "http://"+addr+"/api/v1/events", nil)
	require.NoError(t, err)
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	res, err = http.Get(metrics)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode, "serve starts the admin listener")
	require.Contains(t, string(body), `boxoffice_webhook_deliveries_total{outcome="delivered"} 0`)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "SIGTERM ends serve with exit status 0")
	case <-testwait.After(t, 25*time.Second):
		t.Fatal("serve did not stop after SIGTERM")
	}
	// The port is free again, and a test running beside this one may have
	// been given it for a server of its own: what must not answer is this
	// server, the only one that knows key.
	res, err = http.DefaultClient.Do(req.Clone(context.Background()))
	if err == nil {
		res.Body.Close()
		require.NotEqual(t, 200, res.StatusCode, "nothing of the stopped server answers any more")
	}
}
