package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The child processes of TestCPUTrackerCountsExitedProcesses: the test
// binary run again with cpuChildEnv set, named on its command line by a
// marker the tracker matches.
const cpuChildEnv = "BENCH_CPU_CHILD"

// TestCPUChild is not a test: it is the body of a child process. It burns
// the CPU time given in the environment, says "ready", and on a line from
// stdin burns the second amount, lingers, and exits.
func TestCPUChild(t *testing.T) {
	spec := os.Getenv(cpuChildEnv)
	if spec == "" {
		t.Skip("the body of TestCPUTrackerCountsExitedProcesses' child processes")
	}
	var d [3]time.Duration
	for i, f := range strings.Fields(spec) {
		var err error
		if d[i], err = time.ParseDuration(f); err != nil {
			t.Fatal(err)
		}
	}
	before, after, linger := d[0], d[1], d[2]
	burn(before)
	fmt.Println("ready")
	if after >= 0 {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		burn(before + after)
		time.Sleep(linger)
		os.Exit(0)
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // stays until its stdin closes
	os.Exit(0)
}

// burn spins until this process has used total CPU time.
func burn(total time.Duration) {
	for {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= total {
			return
		}
		for i := 0; i < 1_000_000; i++ {
			_ = i * i
		}
	}
}

type cpuChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startCPUChild starts a child that burns before, says ready, then (after
// go_) burns after and exits linger later; after < 0: it burns nothing more
// and stays until stopped.
func startCPUChild(t *testing.T, marker string, before, after, linger time.Duration) *cpuChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCPUChild$", "-test.count=1", marker)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s", cpuChildEnv, before, after, linger))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("child: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return &cpuChild{cmd: cmd, stdin: stdin}
}

func (c *cpuChild) proceed(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// liveSum is how the benchmark used to measure PostgreSQL's CPU: the sum
// over the matching processes alive at that moment.
func liveSum(match func([]byte) bool) time.Duration {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var total time.Duration
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !match(cmdline) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		total += procCPU(pid)
	}
	return total
}

// TestCPUTrackerCountsExitedProcesses: a process that used CPU before the
// interval and exits during it, and one that starts during it, are counted
// for what they used inside the interval, so the figure is never negative
// and never counts what was used before the start. The difference of two
// sums over live processes, the old measure, goes negative here.
func TestCPUTrackerCountsExitedProcesses(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	marker := "bench-cpu-child-" + rand.Text()
	match := func(cmdline []byte) bool { return bytes.Contains(cmdline, []byte(marker)) }

	// A uses 400 ms before the interval, 200 ms in it, then exits.
	a := startCPUChild(t, marker, 400*time.Millisecond, 200*time.Millisecond, 10*pollEvery)
	// C uses 300 ms before the interval and nothing in it.
	startCPUChild(t, marker, 300*time.Millisecond, -1, 0)

	tr := newCPUTracker(match)
	tr.Start()
	before := liveSum(match)
	a.proceed(t)
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("child A: %v", err)
	}
	// B starts inside the interval and uses 150 ms (plus its start-up).
	startCPUChild(t, marker, 150*time.Millisecond, -1, 0)
	got := tr.Stop()
	old := liveSum(match) - before

	t.Logf("tracker %s over %d processes; old live-sum difference %s", got, tr.Processes(), old)
	// Inside the interval: A's 200 ms and B's 150 ms and start-up. A's
	// last 10×pollEvery were idle, so the last sample saw all of its CPU.
	if got < 300*time.Millisecond || got > 700*time.Millisecond {
		t.Errorf("tracker counted %s, want about 350 ms (A's 200 ms after the start, B's 150 ms; nothing of C)", got)
	}
	if tr.Processes() != 3 {
		t.Errorf("tracker saw %d processes, want 3", tr.Processes())
	}
	if old >= 0 {
		t.Errorf("the live-sum difference was %s: the scenario no longer shows the bug it guards against", old)
	}
}
