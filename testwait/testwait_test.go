package testwait

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestDeadline(t *testing.T) {
	t.Run("AtLeastPatience", func(t *testing.T) {
		got := time.Until(Deadline(t, time.Second))
		if binary, ok := t.Deadline(); ok && time.Until(binary) < Patience+margin {
			t.Skip("the binary's -timeout is shorter than Patience")
		}
		if got < Patience-time.Second {
			t.Fatalf("a one-second wait gives up after %s, want at least %s", got, Patience)
		}
	})
	t.Run("TenTimesLongWaits", func(t *testing.T) {
		if binary, ok := t.Deadline(); ok && time.Until(binary) < 10*time.Hour {
			t.Skip("the binary's -timeout caps the wait")
		}
		if got := time.Until(Deadline(t, time.Hour)); got < 9*time.Hour {
			t.Fatalf("a one-hour wait gives up after %s, want ten hours", got)
		}
	})
	t.Run("BeforeTheBinarysTimeout", func(t *testing.T) {
		binary, ok := t.Deadline()
		if !ok {
			t.Skip("no -timeout")
		}
		if got := Deadline(t, 1000*time.Hour); got.After(binary.Add(-margin)) {
			t.Fatalf("gives up at %s, after the binary's deadline less the margin (%s)", got, binary.Add(-margin))
		}
	})
}

func TestFor(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 5 {
			time.Sleep(time.Millisecond)
			n.Add(1)
		}
	}()
	For(t, time.Second, "five", func() bool { return n.Load() == 5 })
}

func TestStart(t *testing.T) {
	tries := 0
	Start(t, "the runner", func() error {
		tries++
		if tries < 3 {
			return fmt.Errorf("river: check the schema: %w", context.DeadlineExceeded)
		}
		return nil
	})
	if tries != 3 {
		t.Fatalf("started after %d tries, want 3", tries)
	}
}
