package main

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// TestDatabaseFilesPrivate runs the real program as `make run` does
// (`serve --demo`, no DATABASE_URL, so ./data/boxoffice.db) under umask
// 000, and checks while it serves that the data directory is 0700 and the
// database and its -wal and -shm files are 0600: they hold webhook secrets
// and customers' data.
func TestDatabaseFilesPrivate(t *testing.T) {
	t.Parallel()
	requireModes := func(t *testing.T, dir string, want fs.FileMode, names ...string) {
		t.Helper()
		for _, name := range names {
			st, err := os.Stat(filepath.Join(dir, name))
			require.NoError(t, err)
			require.Equal(t, want, st.Mode().Perm(), "mode of %s", name)
		}
	}
	dbFiles := []string{"boxoffice.db", "boxoffice.db-wal", "boxoffice.db-shm"}

	t.Run("FreshDefaultDir", func(t *testing.T) {
		t.Parallel()
		cwd := t.TempDir()
		serveIn(t, cwd, func() {
			requireModes(t, cwd, 0o700, "data")
			requireModes(t, filepath.Join(cwd, "data"), 0o600, dbFiles...)
		})
	})
	t.Run("OldDefaultDirTightened", func(t *testing.T) {
		t.Parallel()
		// What an earlier release left behind: a world-readable ./data.
		cwd := t.TempDir()
		data := filepath.Join(cwd, "data")
		require.NoError(t, os.Mkdir(data, 0o755))
		require.NoError(t, os.Chmod(data, 0o777))
		for _, name := range []string{"boxoffice.db", "boxoffice.db-wal"} {
			require.NoError(t, os.WriteFile(filepath.Join(data, name), nil, 0o644))
			require.NoError(t, os.Chmod(filepath.Join(data, name), 0o666))
		}
		serveIn(t, cwd, func() {
			requireModes(t, cwd, 0o700, "data")
			requireModes(t, data, 0o600, dbFiles...)
		})
	})
	t.Run("OperatorDirKeepsItsMode", func(t *testing.T) {
		t.Parallel()
		// DATABASE_URL in a directory the operator made (it may be
		// shared): the directory keeps its mode, the files are private;
		// directories the program creates are private.
		cwd := t.TempDir()
		shared := filepath.Join(cwd, "shared")
		require.NoError(t, os.Mkdir(shared, 0o755))
		require.NoError(t, os.Chmod(shared, 0o775))
		serveIn(t, cwd, func() {
			requireModes(t, cwd, 0o775, "shared")
			requireModes(t, shared, 0o700, "new")
			requireModes(t, filepath.Join(shared, "new"), 0o600, "x.db", "x.db-wal", "x.db-shm")
		}, "DATABASE_URL=sqlite://shared/new/x.db")
	})
}

// serveIn runs `boxoffice serve --demo` in dir under umask 000, calls
// check once it listens, then stops it with SIGTERM.
func serveIn(t *testing.T, dir string, check func(), env ...string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `umask 000 && exec "$0" serve --demo`, os.Args[0])
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "BOXOFFICE_RUN_MAIN=1", "ADDR=127.0.0.1:0", "ADMIN_ADDR=127.0.0.1:0")
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				close(listening)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("serve exited before listening: %v", err)
	case <-testwait.After(t, 60*time.Second):
		t.Fatal("serve did not start")
	}
	check()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-testwait.After(t, 25*time.Second):
		t.Fatal("serve did not stop after SIGTERM")
	}
}
