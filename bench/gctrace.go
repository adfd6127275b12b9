package main

// gctrace.go: the collector's own account of a run, from the lines
// GODEBUG=gctrace=1 has the Go runtime write to the server's log, one per
// cycle.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"time"
)

// gcTraceEnv has the server's runtime log every collection.
const gcTraceEnv = "GODEBUG=gctrace=1"

// gcTrace sums the gctrace lines of one run.
type gcTrace struct {
	cycles int
	cpu    time.Duration // the cycles' CPU as the runtime reports it: both stops, assists, background and idle marking
	liveMB float64       // median heap left live after a cycle
	goalMB float64       // median goal the next cycle was paced to
}

// gcLine matches a gctrace line: "gc 12 @3.456s 2%: 0.018+1.2+0.003 ms
// clock, 0.036+0.5/1.1/0+0.006 ms cpu, 45->46->20 MB, 47 MB goal, …".
var gcLine = regexp.MustCompile(`^gc \d+ @[0-9.]+s \d+%: [0-9.+]+ ms clock, ([0-9.]+)\+([0-9.]+)/([0-9.]+)/([0-9.]+)\+([0-9.]+) ms cpu, [0-9.]+->[0-9.]+->([0-9.]+) MB, ([0-9.]+) MB goal`)

// parseGCTrace reads the gctrace lines of r, leaving every other line.
func parseGCTrace(r io.Reader) gcTrace {
	var t gcTrace
	var live, goal []float64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := gcLine.FindSubmatch(sc.Bytes())
		if m == nil {
			continue
		}
		t.cycles++
		for _, f := range m[1:6] {
			v, _ := strconv.ParseFloat(string(f), 64)
			t.cpu += time.Duration(v * float64(time.Millisecond))
		}
		l, _ := strconv.ParseFloat(string(m[6]), 64)
		g, _ := strconv.ParseFloat(string(m[7]), 64)
		live, goal = append(live, l), append(goal, g)
	}
	t.liveMB, t.goalMB = spreadOf(live).med, spreadOf(goal).med
	return t
}

// readGCTrace parses what path holds from offset from on.
func readGCTrace(path string, from int64) gcTrace {
	f, err := os.Open(path)
	if err != nil {
		return gcTrace{}
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return gcTrace{}
	}
	return parseGCTrace(f)
}

// fileSize is path's size now, 0 if it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (t gcTrace) perThousand(requests float64) float64 {
	if requests <= 0 {
		return 0
	}
	return 1000 * float64(t.cycles) / requests
}

func (t gcTrace) cpuPer(requests float64) time.Duration {
	if requests <= 0 {
		return 0
	}
	return time.Duration(float64(t.cpu) / requests)
}

// String is the progress line's part: cycles, per 1,000 of requests, live
// heap and goal, collector CPU per request.
func (t gcTrace) String(requests float64) string {
	if t.cycles == 0 {
		return "GC: no gctrace lines"
	}
	return fmt.Sprintf("GC %d cycles (%.1f per 1,000 requests), live %.0f MB, goal %.0f MB, %s CPU/req",
		t.cycles, t.perThousand(requests), t.liveMB, t.goalMB, ms(t.cpuPer(requests)))
}
