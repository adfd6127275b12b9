package main

// proc.go: CPU time and memory of processes, from /proc, and optional perf
// profiles of the server.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, 100 on every Linux architecture Go supports here.
const clockTick = 10 * time.Millisecond

// procCPU is the user+system CPU time a process has used.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name in parentheses: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * clockTick
}

// pgBackendsCPU sums the CPU time of the PostgreSQL backends connected to
// database db (their process titles read "postgres: … USER DB …").
func pgBackendsCPU(db string) time.Duration {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var total time.Duration
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte("postgres: ")) {
			continue
		}
		if !bytes.Contains(cmdline, []byte(" "+db+" ")) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		total += procCPU(pid)
	}
	return total
}

// loadAvg is the 1-minute load average, showing other work on the machine.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// perfProfile records the server with perf for d while load runs, and
// returns the top n symbols by self and by inclusive time.
func perfProfile(pid int, out string, d time.Duration, load func(), n int) (string, error) {
	cmd := exec.Command("perf", "record", "-F", "499", "--call-graph", "fp", "-p", strconv.Itoa(pid),
		"-o", out, "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 1, 64))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	load()
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("perf record: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	top := func(children bool) string {
		mode := "--no-children"
		if children {
			mode = "--children"
		}
		rep, err := exec.Command("perf", "report", "-i", out, mode, "--sort", "symbol", "--stdio", "-g", "none").Output()
		if err != nil {
			return "perf report failed: " + err.Error()
		}
		var keep []string
		for line := range strings.SplitSeq(string(rep), "\n") {
			t := strings.TrimSpace(line)
			if t == "" || strings.HasPrefix(t, "#") || !strings.Contains(t, "%") {
				continue
			}
			// Frames every request passes through say nothing about where time goes.
			if children && (strings.Contains(t, "runtime.goexit") || strings.Contains(t, "net/http.") ||
				strings.Contains(t, "go-chi/chi") || strings.Contains(t, "main.(*Main)") ||
				strings.Contains(t, "entry_SYSCALL") || strings.Contains(t, "do_syscall_64")) {
				continue
			}
			f := strings.Fields(t)
			for len(f) > 0 && f[len(f)-1] == "-" { // perf's empty parent/srcline columns
				f = f[:len(f)-1]
			}
			keep = append(keep, strings.Join(f, " "))
			if len(keep) == n {
				break
			}
		}
		return strings.Join(keep, "\n")
	}
	return "self (flat):\n" + top(false) + "\n\ninclusive (children; request plumbing frames omitted):\n" + top(true), nil
}

// machineBusy is the CPU time every process on the machine has used
// (/proc/stat: user, nice, system, irq, softirq, steal).
func machineBusy() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		busy += v
	}
	return time.Duration(busy) * clockTick
}
