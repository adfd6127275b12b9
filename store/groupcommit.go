package store

import (
	"context"
	"sync"
)

// GroupCommit gathers concurrent callers of one key into batches, each
// written by one of them for all (group commit, as PostgreSQL itself does
// for independent commits), so that one transaction — one WAL flush, one
// round of BEGIN and COMMIT, and whatever the batch can write together —
// serves as many callers as were waiting. It is for hot paths where each
// caller's transaction would otherwise queue on the one before, such as
// checkout creates of one ticket (its row lock is held until the commit
// is flushed). It does not pay where callers do not contend: scans at a
// door, which touch rows of their own, got slower when batched by date
// (docs/benchmarks.md, "Figures that used to live in comments").
//
// Up to Writers batches of one key are written at once (each on its own
// connection); a caller that arrives while they all are joins the next
// batch, which starts as soon as one of them ends. How a batch is written,
// in how many transactions, and which callers it refuses is the write
// function's: GroupCommit only gathers.
type GroupCommit[J any] struct {
	// Writers is how many batches of one key are written at once; 0 is 1.
	Writers int

	mu    sync.Mutex
	lines map[string]*line[J]
}

// line is the batches of one key.
type line[J any] struct {
	slots chan struct{} // a token per batch being written
	open  *batch[J]     // the batch new callers join; nil when none waits
	users int           // callers in the line, so an idle line can go
}

// batch is one transaction's worth of callers.
type batch[J any] struct {
	jobs []J
	errs []error
	done chan struct{}
}

// Do adds job to the open batch of key and returns its outcome once the
// batch is written. The caller that opens a batch writes it: it waits for
// one of the key's Writers, takes every job that joined meanwhile, and
// calls write with them; write returns one error per job, in their order
// (nil for a job written). A caller that leaves while its batch is
// pending does not stop the batch, whose work is committed or not as
// write decides; ctx's values reach write, its cancellation does not.
func (g *GroupCommit[J]) Do(ctx context.Context, key string, job J, write func(ctx context.Context, jobs []J) []error) error {
	g.mu.Lock()
	if g.lines == nil {
		g.lines = map[string]*line[J]{}
	}
	l := g.lines[key]
	if l == nil {
		l = &line[J]{slots: make(chan struct{}, max(g.Writers, 1))}
		g.lines[key] = l
	}
	l.users++
	b := l.open
	lead := b == nil
	if lead {
		b = &batch[J]{done: make(chan struct{})}
		l.open = b
	}
	i := len(b.jobs)
	b.jobs = append(b.jobs, job)
	g.mu.Unlock()

	if lead {
		l.slots <- struct{}{}
		g.mu.Lock()
		l.open = nil // later callers start the next batch
		jobs := b.jobs
		g.mu.Unlock()
		b.errs = write(context.WithoutCancel(ctx), jobs)
		<-l.slots
		close(b.done)
	} else {
		<-b.done
	}

	g.mu.Lock()
	if l.users--; l.users == 0 {
		delete(g.lines, key)
	}
	g.mu.Unlock()
	return b.errs[i]
}

// Waiting is how many callers of key wait in its open batch (tests).
func (g *GroupCommit[J]) Waiting(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.lines[key]; l != nil && l.open != nil {
		return len(l.open.jobs)
	}
	return 0
}

// Lines is how many keys have callers (tests).
func (g *GroupCommit[J]) Lines() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.lines)
}
