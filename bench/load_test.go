package main

import "testing"

// TestErrorsScan finds the "errors" key wherever the writes split it, and
// nothing in an answer without one.
func TestErrorsScan(t *testing.T) {
	withErrors := `{"data":{"e":{"name":"errors"}},"errors":[{"message":"x"}]}`
	without := `{"data":{"e":{"name":"\"errors\":"}}}`
	for _, c := range []struct {
		body string
		want bool
	}{{withErrors, true}, {without, false}} {
		for size := 1; size <= len(c.body); size++ {
			var s errorsScan
			for b := c.body; b != ""; {
				n := min(size, len(b))
				_, _ = s.Write([]byte(b[:n]))
				b = b[n:]
			}
			if s.found != c.want {
				t.Errorf("writes of %d bytes of %s: found %v", size, c.body, s.found)
			}
			if string(s.head) != c.body[:min(512, len(c.body))] {
				t.Errorf("writes of %d bytes: head %q", size, s.head)
			}
		}
	}
}

// TestPeersSection: make bench-peers writes its section into results.md,
// replacing the previous one, and make bench keeps it when it rewrites the
// file.
func TestPeersSection(t *testing.T) {
	sec := func(s string) string { return peersBegin + "\n" + s + "\n" + peersEnd + "\n" }
	report := "# Boxoffice benchmark results\n\nfigures\n"
	eq := func(want, got, why string) {
		t.Helper()
		if got != want {
			t.Errorf("%s:\ngot  %q\nwant %q", why, got, want)
		}
	}
	eq(report, withPeersSection(report, "", ""), "nothing to keep")
	first := withPeersSection(report, report, sec("ratios 1"))
	eq(report+"\n"+sec("ratios 1"), first, "added")
	second := withPeersSection(first, first, sec("ratios 2"))
	eq(report+"\n"+sec("ratios 2"), second, "replaced, not added")
	rerun := withPeersSection("# Boxoffice benchmark results\n\nnew figures\n", second, "")
	eq("# Boxoffice benchmark results\n\nnew figures\n\n"+sec("ratios 2"), rerun, "make bench keeps it")
}
