package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestSpread: the median of an odd and an even count, the spread, and the
// format with one run and with several.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		xs          []float64
		med, lo, hi float64
		text        string
	}{
		{[]float64{3, 1, 2}, 2, 1, 3, "2 (1–3)"},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4, "2 (1–4)"}, // 2.5 rounds to even
		{[]float64{7}, 7, 7, 7, "7"},
		{nil, 0, 0, 0, "—"},
	} {
		sp := spreadOf(c.xs)
		if sp.med != c.med || sp.lo != c.lo || sp.hi != c.hi {
			t.Errorf("spreadOf(%v) = %+v, want median %v, %v–%v", c.xs, sp, c.med, c.lo, c.hi)
		}
		if got := sp.format(fmtRate); got != c.text {
			t.Errorf("spreadOf(%v).format = %q, want %q", c.xs, got, c.text)
		}
	}
	s := series{{rps: 100, p50: 10 * time.Millisecond}, {rps: 300, p50: 30 * time.Millisecond}, {rps: 200, p50: 20 * time.Millisecond}}
	if got := s.p50().format(fmtMS); got != "20.00 ms (10.00 ms–30.00 ms)" {
		t.Errorf("p50 %q", got)
	}
	if got := s.rps().med; got != 200 {
		t.Errorf("median rps %v", got)
	}
}

// TestParsePgbench reads pgbench 15's summary.
func TestParsePgbench(t *testing.T) {
	out := `pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: /work/bench/.bin/pgbench-create.sql
scaling factor: 1
query mode: prepared
number of clients: 32
number of threads: 2
maximum number of tries: 1
duration: 10 s
number of transactions actually processed: 1083
number of failed transactions: 0 (0.000%)
latency average = 295.101 ms
initial connection time = 61.233 ms
tps = 108.437483 (without initial connection time)
`
	r, err := parsePgbench(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.tps != 108.437483 || r.txns != 1083 || r.failed != 0 || r.latency != time.Duration(295.101*float64(time.Millisecond)) {
		t.Errorf("parsed %+v", r)
	}
	none := "duration: 1 s\nnumber of transactions actually processed: 0\nnumber of failed transactions: 0 (NaN%)\n"
	if r, err := parsePgbench(none); err != nil || r.tps != 0 || r.txns != 0 {
		t.Errorf("no transaction finished: %+v %v, want 0 tps", r, err)
	}
	if _, err := parsePgbench("pgbench: error: connection failed"); err == nil {
		t.Error("no tps: want an error")
	}
}

// TestPgbenchLimit: the limit is the best median over the client counts.
func TestPgbenchLimit(t *testing.T) {
	runs := []pgbenchRun{{clients: 32, tps: 90}, {clients: 8, tps: 300}, {clients: 32, tps: 110}, {clients: 8, tps: 320}, {clients: 32, tps: 100}, {clients: 8, tps: 10}}
	at, limit := pgbenchLimit(runs, []int{32, 8})
	if at != 8 || limit != 300 {
		t.Errorf("limit %v at %d clients, want 300 at 8", limit, at)
	}
}

// TestStockCheck: held must match the pending orders and sold the paid
// ones above what was seeded.
func TestStockCheck(t *testing.T) {
	ok := stockCheck{before: stockRow{sold: 20}, after: stockRow{sold: 25, held: 7}, pendingQty: 7, paidQt: 5, orders: 12}
	if !ok.ok() {
		t.Errorf("%s: want ok", ok)
	}
	for _, bad := range []stockCheck{
		{before: stockRow{sold: 20}, after: stockRow{sold: 25, held: 8}, pendingQty: 7, paidQt: 5}, // oversold by one hold
		{before: stockRow{sold: 20}, after: stockRow{sold: 24, held: 7}, pendingQty: 7, paidQt: 5}, // a paid order not sold
	} {
		if bad.ok() {
			t.Errorf("%s: want a mismatch", bad)
		}
	}
}

func TestTrendGrowth(t *testing.T) {
	for _, c := range []struct {
		name string
		ys   []float64
		want float64
	}{
		{"flat", []float64{2, 2, 2, 2, 2}, 1},
		{"a straight rise", []float64{1, 1.25, 1.5, 1.75, 2}, 2},
		{"a straight fall", []float64{2, 1.75, 1.5, 1.25, 1}, 0.5},
		// A low first point alone does not make a rise: the line
		// through all five (0.464 to 0.502) rises 1.08x where the last
		// over the first is 1.25x (the sale of 2026-11-26 15:07).
		{"low first point", []float64{0.381, 0.581, 0.493, 0.481, 0.478}, 1.081},
		{"two points", []float64{1, 3}, 3},
		{"one point", []float64{1}, 0},
		{"starts at zero", []float64{0, 1, 2}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := trendGrowth(c.ys); math.Abs(got-c.want) > 0.001 {
				t.Fatalf("trendGrowth(%v) = %.4f, want %.3f", c.ys, got, c.want)
			}
		})
	}
}

// TestParseGCTrace reads the runtime's gctrace lines among a server's
// other log lines.
func TestParseGCTrace(t *testing.T) {
	log := `{"time":"2026-11-26T15:51:05Z","level":"INFO","msg":"request","status":200}
gc 41 @12.345s 3%: 0.020+4.1+0.030 ms clock, 0.040+1.5/3.0/0.50+0.060 ms cpu, 60->62->30 MB, 64 MB goal, 0 MB stacks, 0 MB globals, 2 P
{"time":"2026-11-26T15:51:06Z","level":"INFO","msg":"request","status":200}
gc 42 @13.001s 3%: 0.010+3.9+0.020 ms clock, 0.020+2.0/2.5/0+0.040 ms cpu, 61->63->34 MB, 90 MB goal, 0 MB stacks, 0 MB globals, 2 P
gc 43 @13.900s 3%: 0.010+3.9+0.020 ms clock, 0.020+2.0/2.5/0+0.040 ms cpu, 88->90->32 MB, 96 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)
`
	got := parseGCTrace(strings.NewReader(log))
	if got.cycles != 3 || got.liveMB != 32 || got.goalMB != 90 {
		t.Fatalf("cycles %d, live %.0f MB, goal %.0f MB; want 3, 32, 90", got.cycles, got.liveMB, got.goalMB)
	}
	// 0.040+1.5+3.0+0.50+0.060 + 2 × (0.020+2.0+2.5+0+0.040) ms
	if want := 14.22 * float64(time.Millisecond); math.Abs(float64(got.cpu)-want) > 1000 {
		t.Fatalf("cpu %v, want %v", got.cpu, time.Duration(want))
	}
	if got := parseGCTrace(strings.NewReader("no collections here\n")); got.cycles != 0 || got.String(100) != "GC: no gctrace lines" {
		t.Fatalf("%+v", got)
	}
}
