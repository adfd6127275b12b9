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
