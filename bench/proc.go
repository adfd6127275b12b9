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
	"sync"
	"time"
)

// clockTick is USER_HZ, 100 on every Linux architecture Go supports here.
const clockTick = 10 * time.Millisecond

// procCPU is the user+system CPU time a process has used.
func procCPU(pid int) time.Duration {
	cpu, _, _ := readStat(fmt.Sprintf("/proc/%d/stat", pid))
	return cpu
}

// cpuTracker measures the CPU time a changing set of processes uses over
// an interval: the PostgreSQL backends of one database. Summing the live
// backends' utime+stime at the start and at the end undercounts, and goes
// negative, when a backend exits in between (a pool closing an idle or
// broken connection, a CLI command's connection): its CPU is in the first
// sum and missing from the second. The tracker samples every pollEvery
// and counts, for each process it saw, the CPU used from the start (or
// from its birth, for one that appeared later) to the last sample taken
// while it lived. Processes are told apart by pid and start time, so a
// reused pid is a new process. What it still misses is the CPU an exiting
// process used after its last sample: at most pollEvery of it.
//
// The postmaster's cutime/cstime would count exited backends exactly, but
// of every database on the cluster, and other work shares this one.
type cpuTracker struct {
	match func(cmdline []byte) bool
	proc  string // /proc

	mu      sync.Mutex
	started bool
	seen    map[procID]*procSpan
	known   map[procID]bool // processes already classified by match
	stop    chan struct{}
	done    chan struct{}
}

// procID is one process: pid and its start time (clock ticks after boot).
type procID struct {
	pid   int
	start uint64
}

// procSpan is one process's CPU at the start of the interval (0 when it
// began later) and at its latest sample.
type procSpan struct{ first, last time.Duration }

const pollEvery = 50 * time.Millisecond

// newPGTracker tracks the backends connected to database db (their process
// titles read "postgres: … USER DB …").
func newPGTracker(db string) *cpuTracker {
	word := []byte(" " + db + " ")
	return newCPUTracker(func(cmdline []byte) bool {
		return bytes.HasPrefix(cmdline, []byte("postgres: ")) && bytes.Contains(cmdline, word)
	})
}

func newCPUTracker(match func(cmdline []byte) bool) *cpuTracker {
	return &cpuTracker{match: match, proc: "/proc"}
}

// Start takes the first sample and begins polling.
func (t *cpuTracker) Start() {
	t.mu.Lock()
	t.seen, t.known, t.started = map[procID]*procSpan{}, map[procID]bool{}, false
	t.sampleLocked()
	t.started = true
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	t.mu.Unlock()
	go func() {
		defer close(t.done)
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				t.mu.Lock()
				t.sampleLocked()
				t.mu.Unlock()
			}
		}
	}()
}

// Stop takes the last sample and returns the CPU time used since Start.
func (t *cpuTracker) Stop() time.Duration {
	close(t.stop)
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sampleLocked()
	var total time.Duration
	for _, s := range t.seen {
		total += s.last - s.first
	}
	return total
}

// Processes reports how many distinct matching processes were seen.
func (t *cpuTracker) Processes() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.seen)
}

func (t *cpuTracker) sampleLocked() {
	dirs, _ := filepath.Glob(filepath.Join(t.proc, "[0-9]*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		cpu, start, ok := readStat(filepath.Join(d, "stat"))
		if !ok {
			continue
		}
		id := procID{pid, start}
		m, classified := t.known[id]
		if !classified {
			cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
			if err != nil {
				continue
			}
			m = t.match(cmdline)
			t.known[id] = m
		}
		if !m {
			continue
		}
		if s, ok := t.seen[id]; ok {
			s.last = max(s.last, cpu)
			continue
		}
		s := &procSpan{last: cpu}
		if !t.started { // there at the start: only what it uses from now counts
			s.first = cpu
		}
		t.seen[id] = s
	}
}

// readStat reads utime+stime and the start time of /proc/PID/stat.
func readStat(path string) (cpu time.Duration, start uint64, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	// Fields after the command name in parentheses: state is field 3,
	// utime 14, stime 15, starttime 22.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return 0, 0, false
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	start, _ = strconv.ParseUint(f[19], 10, 64)
	return time.Duration(u+s) * clockTick, start, true
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

// settle waits until process pid is idle — under 2% of a core over a
// quarter-second sample — for at most limit, and returns how long it
// waited. A row's run starts only once the work an earlier row left
// behind (webhook deliveries, jobs, the collector) is done, so that work
// is not charged to the next row's requests.
func settle(pid int, limit time.Duration) time.Duration {
	const sample = 250 * time.Millisecond
	start := time.Now()
	for time.Since(start) < limit {
		c0 := procCPU(pid)
		time.Sleep(sample)
		if procCPU(pid)-c0 < sample/50 {
			break
		}
	}
	return time.Since(start)
}
