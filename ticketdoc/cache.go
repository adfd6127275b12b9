package ticketdoc

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"sync"
)

// Version names what the PDF of o shows: a digest of every field the
// pages print (the tickets with their statuses, the event's name, the
// date in its zone, the venue). Two loads of an order that nothing changed
// in between have one version; a ticket voided or checked in, or a renamed
// event, makes a new one.
func Version(o *Order) string {
	h := sha256.New()
	// Order has only strings, bools, ints and instants: json cannot fail.
	_ = json.NewEncoder(h).Encode(struct {
		*Order
		StartZone, EndZone string
	}{o, o.Start.Location().String(), o.End.Location().String()})
	return hex.EncodeToString(h.Sum(nil))
}

// DefaultPDFCacheBytes bounds the PDFs a PDFCache keeps: a 1,000-ticket
// PDF is a few megabytes, so this holds a handful of the largest orders
// and thousands of ordinary ones.
const DefaultPDFCacheBytes = 32 << 20

// PDFCache renders the PDF of an order at most once per version of the
// order (Version) and keeps the PDFs it rendered, least recently used
// first out, within MaxBytes. Concurrent requests for one version wait for
// one render; the render runs for whoever still waits, and stops (its
// context cancelled) when the last of them leaves. At most one render runs
// at a time, so downloads of large orders take at most one core from
// everyone else. The zero value is ready to use.
type PDFCache struct {
	// MaxBytes bounds the PDFs kept, all together; a PDF larger than it
	// is rendered for its waiters and not kept. Zero is
	// DefaultPDFCacheBytes.
	MaxBytes int64
	// Render draws a PDF; nil is RenderPDFContext. Tests count renders
	// with it.
	Render func(ctx context.Context, w io.Writer, o *Order) error

	mu      sync.Mutex
	lru     *list.List // of *cached, most recent first
	kept    map[string]*list.Element
	size    int64
	flights map[string]*flight
	slot    chan struct{}
}

type cached struct {
	key string
	pdf []byte
}

// flight is one render and the requests waiting for it.
type flight struct {
	done    chan struct{}
	pdf     []byte
	err     error
	waiters int
	cancel  context.CancelFunc
}

// PDF returns the PDF of o: the kept one of o's version, or one rendered
// now (once, however many ask at the same time). Errors: ctx's when the
// caller leaves first (the render stops if nobody else waits for it),
// ErrNoTickets, or the renderer's.
func (c *PDFCache) PDF(ctx context.Context, o *Order) ([]byte, error) {
	key := o.Reference + "\x00" + Version(o)
	c.mu.Lock()
	if c.kept == nil {
		c.lru, c.kept, c.flights = list.New(), map[string]*list.Element{}, map[string]*flight{}
		c.slot = make(chan struct{}, 1)
	}
	if e, ok := c.kept[key]; ok {
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*cached).pdf, nil
	}
	f := c.flights[key]
	if f == nil {
		// The render belongs to no one request: it runs while anyone waits.
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		c.flights[key] = f
		go c.render(fctx, key, f, o)
	}
	f.waiters++
	c.mu.Unlock()

	select {
	case <-f.done:
		return f.pdf, f.err
	case <-ctx.Done():
		c.mu.Lock()
		f.waiters--
		if f.waiters == 0 {
			// Nobody waits: stop, and let the next request start afresh.
			f.cancel()
			if c.flights[key] == f {
				delete(c.flights, key)
			}
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// render draws f's PDF when the render slot is free, keeps it when it
// fits, and hands it to f's waiters.
func (c *PDFCache) render(ctx context.Context, key string, f *flight, o *Order) {
	defer f.cancel()
	var buf bytes.Buffer
	err := ctx.Err()
	select {
	case c.slot <- struct{}{}:
		render := c.Render
		if render == nil {
			render = RenderPDFContext
		}
		err = render(ctx, &buf, o)
		<-c.slot
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.mu.Lock()
	if c.flights[key] == f {
		delete(c.flights, key)
	}
	if err == nil {
		f.pdf = buf.Bytes()
		c.keep(key, f.pdf)
	}
	f.err = err
	c.mu.Unlock()
	close(f.done)
}

// keep adds pdf under key and drops the least recently used PDFs until
// the total fits MaxBytes. c.mu is held.
func (c *PDFCache) keep(key string, pdf []byte) {
	limit := c.MaxBytes
	if limit <= 0 {
		limit = DefaultPDFCacheBytes
	}
	if int64(len(pdf)) > limit {
		return
	}
	c.kept[key] = c.lru.PushFront(&cached{key: key, pdf: pdf})
	c.size += int64(len(pdf))
	for c.size > limit {
		e := c.lru.Back()
		old := e.Value.(*cached)
		c.lru.Remove(e)
		delete(c.kept, old.key)
		c.size -= int64(len(old.pdf))
	}
}

// Size is how many bytes of PDFs c keeps.
func (c *PDFCache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}
