package jobs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMailBackoff: a ticket email is retried, doubling from its base and at
// most mailMaxDelay apart, until the waits add up to an hour at least.
func TestMailBackoff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		base     time.Duration
		attempts int
	}{
		{30 * time.Second, 8},        // 30 s, 1, 2, 4, 8, 16, 32 min: 63.5 min
		{200 * time.Millisecond, 16}, // 0.2 s … 54.6 min
		{time.Hour, 3},               // capped: two waits of 30 min
		{0, 3},                       // a zero base waits the longest, never zero
	} {
		b := mailBackoff{base: c.base}
		require.Equal(t, c.attempts, b.attempts(), "base %s", c.base)
		var waited time.Duration
		for n := 1; n < c.attempts; n++ {
			d := b.delay(n)
			require.Positive(t, d)
			require.LessOrEqual(t, d, mailMaxDelay)
			waited += d
		}
		require.GreaterOrEqual(t, waited, MailRetryWindow, "base %s", c.base)
		require.Less(t, waited-b.delay(c.attempts-1), MailRetryWindow, "base %s: no attempt more than needed", c.base)
	}
}
