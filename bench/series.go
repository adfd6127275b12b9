package main

// series.go: repeated runs of one row, summarised as the median and the
// spread (min–max) of each figure.

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// series is the runs of one row, in the order they ran.
type series []stats

// spread is one figure over a series: its median, smallest and largest.
type spread struct {
	med, lo, hi float64
	n           int
}

// spreadOf summarises xs; the median of an even count is the mean of the
// middle two.
func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{med: m, lo: s[0], hi: s[len(s)-1], n: len(s)}
}

func (s series) of(f func(stats) float64) spread {
	xs := make([]float64, len(s))
	for i, st := range s {
		xs[i] = f(st)
	}
	return spreadOf(xs)
}

func (s series) rps() spread { return s.of(func(st stats) float64 { return st.rps }) }
func (s series) p50() spread { return s.of(func(st stats) float64 { return msf(st.p50) }) }
func (s series) p99() spread { return s.of(func(st stats) float64 { return msf(st.p99) }) }
func (s series) max() spread { return s.of(func(st stats) float64 { return msf(st.max) }) }
func (s series) srvCPU() spread {
	return s.of(func(st stats) float64 { return msf(st.serverCPU) })
}
func (s series) pgCPU() spread { return s.of(func(st stats) float64 { return msf(st.pgCPU) }) }
func (s series) other() spread { return s.of(func(st stats) float64 { return 100 * st.otherCPU }) }

// errors is the total of every run's errors, and their kinds.
func (s series) errors() (int, map[string]int) {
	n, codes := 0, map[string]int{}
	for _, st := range s {
		n += st.errors
		for k, v := range st.codes {
			codes[k] += v
		}
	}
	return n, codes
}

// hwm is the largest VmHWM after any run.
func (s series) hwm() int64 {
	var m int64
	for _, st := range s {
		m = max(m, st.hwm)
	}
	return m
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// format writes the median with the spread in brackets when there is more
// than one run, each value by f.
func (sp spread) format(f func(float64) string) string {
	if sp.n == 0 {
		return "—"
	}
	if sp.n == 1 {
		return f(sp.med)
	}
	return fmt.Sprintf("%s (%s–%s)", f(sp.med), f(sp.lo), f(sp.hi))
}

// Value formats for spread.format.
func fmtRate(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
func fmtMS(v float64) string   { return ms(time.Duration(v * float64(time.Millisecond))) }
func fmtMS1(v float64) string  { return strconv.FormatFloat(v, 'f', 1, 64) }
func fmtPct(v float64) string  { return strconv.FormatFloat(v, 'f', 0, 64) + "%" }
func fmtNum(v float64) string  { return strconv.FormatFloat(v, 'f', 1, 64) }

// trendGrowth fits a least-squares line through ys (one value per equal
// step, in order) and answers the line's value at the last step over its
// value at the first: how much the series grew, weighing every point,
// where the last value over the first weighs two and moves with whatever
// happened in either. 0 when there are fewer than two values or the line
// does not start above zero.
func trendGrowth(ys []float64) float64 {
	n := float64(len(ys))
	if n < 2 {
		return 0
	}
	var meanX, meanY float64
	for i, y := range ys {
		meanX += float64(i)
		meanY += y
	}
	meanX /= n
	meanY /= n
	var sxy, sxx float64
	for i, y := range ys {
		dx := float64(i) - meanX
		sxy += dx * (y - meanY)
		sxx += dx * dx
	}
	slope := sxy / sxx
	first := meanY - slope*meanX
	last := meanY + slope*(n-1-meanX)
	if first <= 0 {
		return 0
	}
	return last / first
}
