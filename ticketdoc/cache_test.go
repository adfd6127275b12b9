package ticketdoc_test

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/ticketdoc/ticketdoctest"
	"github.com/stretchr/testify/require"
)

// waitUntil polls cond until it holds; the deadline only ends a stuck test.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, time.Millisecond, what)
}

// TestPDFCache: a version of an order is rendered once however many ask
// for it at once or later; a new version is rendered again; a render
// nobody waits for stops; the PDFs kept stay within their bytes.
func TestPDFCache(t *testing.T) {
	t.Parallel()

	t.Run("OneRenderForEightAtOnce", func(t *testing.T) {
		t.Parallel()
		var renders atomic.Int32
		release := make(chan struct{})
		c := &ticketdoc.PDFCache{Render: func(ctx context.Context, w io.Writer, o *ticketdoc.Order) error {
			renders.Add(1)
			<-release
			return ticketdoc.RenderPDFContext(ctx, w, o)
		}}
		o := ticketdoctest.NewOrder(t, false)
		pdfs := make([][]byte, 8)
		var wg sync.WaitGroup
		for i := range pdfs {
			wg.Go(func() {
				pdf, err := c.PDF(context.Background(), o)
				require.NoError(t, err)
				pdfs[i] = pdf
			})
		}
		waitUntil(t, func() bool { return c.Waiting(o) == 8 }, "eight requests wait for the render")
		close(release)
		wg.Wait()
		require.EqualValues(t, 1, renders.Load())
		require.Equal(t, 3, ticketdoctest.PDFPages(pdfs[0]))
		for _, p := range pdfs {
			require.Equal(t, pdfs[0], p)
		}

		// Later, the same version is the kept PDF; the same order loaded
		// again (a copy) is the same version.
		again := *o
		again.Tickets = append([]ticketdoc.Ticket(nil), o.Tickets...)
		pdf, err := c.PDF(context.Background(), &again)
		require.NoError(t, err)
		require.Equal(t, pdfs[0], pdf)
		require.EqualValues(t, 1, renders.Load())

		// A ticket checked in is a new version: rendered again.
		again.Tickets[0].Status = ticketdoc.StatusCheckedIn
		pdf, err = c.PDF(context.Background(), &again)
		require.NoError(t, err)
		require.NotEqual(t, pdfs[0], pdf)
		require.EqualValues(t, 2, renders.Load())
	})

	t.Run("StopsWhenTheClientLeaves", func(t *testing.T) {
		t.Parallel()
		started, stopped := make(chan struct{}), make(chan error, 1)
		c := &ticketdoc.PDFCache{Render: func(ctx context.Context, w io.Writer, o *ticketdoc.Order) error {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return ctx.Err()
		}}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { _, err := c.PDF(ctx, ticketdoctest.NewOrder(t, false)); errc <- err }()
		<-started
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		require.ErrorIs(t, <-stopped, context.Canceled, "the render stops")
		require.Zero(t, c.Size())
	})

	t.Run("GoesOnForWhoeverStillWaits", func(t *testing.T) {
		t.Parallel()
		var renders atomic.Int32
		release := make(chan struct{})
		c := &ticketdoc.PDFCache{Render: func(ctx context.Context, w io.Writer, o *ticketdoc.Order) error {
			renders.Add(1)
			<-release
			if err := ctx.Err(); err != nil {
				return err
			}
			_, err := io.WriteString(w, "%PDF")
			return err
		}}
		o := ticketdoctest.NewOrder(t, false)
		leaver, cancel := context.WithCancel(context.Background())
		left, stayed := make(chan error, 1), make(chan []byte, 1)
		go func() { _, err := c.PDF(leaver, o); left <- err }()
		go func() { pdf, _ := c.PDF(context.Background(), o); stayed <- pdf }()
		waitUntil(t, func() bool { return c.Waiting(o) == 2 }, "two wait")
		cancel()
		require.ErrorIs(t, <-left, context.Canceled)
		close(release)
		require.Equal(t, "%PDF", string(<-stayed))
		require.EqualValues(t, 1, renders.Load())
	})

	t.Run("BoundedInBytes", func(t *testing.T) {
		t.Parallel()
		var renders atomic.Int32
		c := &ticketdoc.PDFCache{MaxBytes: 2500, Render: func(_ context.Context, w io.Writer, o *ticketdoc.Order) error {
			renders.Add(1)
			_, err := w.Write(bytes.Repeat([]byte{'x'}, 1000))
			return err
		}}
		orders := make([]*ticketdoc.Order, 4)
		for i := range orders {
			orders[i] = ticketdoctest.NewOrder(t, false)
			orders[i].Reference += string(rune('a' + i))
			_, err := c.PDF(context.Background(), orders[i])
			require.NoError(t, err)
			require.LessOrEqual(t, c.Size(), int64(2500))
		}
		require.EqualValues(t, 2000, c.Size())
		// The two most recent are kept, the oldest was dropped.
		_, err := c.PDF(context.Background(), orders[3])
		require.NoError(t, err)
		require.EqualValues(t, 4, renders.Load())
		_, err = c.PDF(context.Background(), orders[0])
		require.NoError(t, err)
		require.EqualValues(t, 5, renders.Load())

		// A PDF larger than the whole bound is served and not kept.
		big := &ticketdoc.PDFCache{MaxBytes: 999, Render: c.Render}
		pdf, err := big.PDF(context.Background(), orders[0])
		require.NoError(t, err)
		require.Len(t, pdf, 1000)
		require.Zero(t, big.Size())
	})

	t.Run("RenderStopsBetweenPages", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var buf bytes.Buffer
		require.ErrorIs(t, ticketdoc.RenderPDFContext(ctx, &buf, ticketdoctest.NewOrder(t, false)), context.Canceled)
		require.Zero(t, buf.Len())
	})
}
