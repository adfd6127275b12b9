package boxcli

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProgressLine: an import's progress line is rewritten at most every
// 200 ms, always at the end, and ends with a newline.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	clock := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	show := progressLine(&out, func() time.Time { return clock })
	show(10, 100)
	show(20, 100) // within 200 ms: not shown
	clock = clock.Add(250 * time.Millisecond)
	show(50, 100)
	show(100, 100) // the end is always shown
	require.Equal(t, "\rimporting: 10 of 100 rows (10%)\rimporting: 50 of 100 rows (50%)\rimporting: 100 of 100 rows (100%)\n", out.String())
}
