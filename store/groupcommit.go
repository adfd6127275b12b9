package store

import (
	"context"
	"sync"

	"github.com/uptrace/bun"
)

// GroupCommit writes concurrent writers' work in shared transactions,
// one line of batches per key. Writers that arrive while a batch of their
// key is being written wait for it, then go together in the next one
// (group commit, as PostgreSQL itself does for independent commits), so
// one commit — one WAL flush, one round of BEGIN and COMMIT — serves as
// many writers as were waiting. It is for hot paths where each writer's
// transaction would otherwise queue on the one before, such as checkout
// creates of one ticket (its row lock is held until the commit is
// flushed). It does not pay where writers do not contend: a batch runs its
// writers one after another on one connection, and scans at a door, which
// touch rows of their own, went from 476 to 287 a second when batched by
// date (2-core machine, PostgreSQL 15).
//
// Each writer's work must leave the transaction usable whatever it
// decides. A writer's error for which Refusal reports true (a business
// refusal that has undone what its writer did) leaves the batch going;
// any other error fails the whole batch, which commits nothing, and every
// writer in it gets that error. Writers of one key never run in two transactions at
// once on this handle; writers of different keys must not take each
// other's rows in opposite orders.
type GroupCommit struct {
	// Refusal reports whether a writer's error is its own answer, which
	// leaves its batch going; nil: none is.
	Refusal func(error) bool

	mu    sync.Mutex
	lines map[string]*line
}

// line is the batches of one key.
type line struct {
	// writing is held by the batch whose transaction runs.
	writing sync.Mutex
	// open is the batch gathering creates while that one runs.
	open *batch
	// users counts the writers on the line, so an idle line is dropped.
	users int
}

type batch struct {
	jobs []*job
	done chan struct{}
}

type job struct {
	write func(ctx context.Context, tx bun.Tx) error
	err   error
}

// Do runs write in the transaction of the next batch of key on db, and
// returns its result once that transaction has committed or rolled back.
func (g *GroupCommit) Do(ctx context.Context, db *DB, key string, write func(ctx context.Context, tx bun.Tx) error) error {
	j := &job{write: write}
	g.mu.Lock()
	if g.lines == nil {
		g.lines = map[string]*line{}
	}
	l := g.lines[key]
	if l == nil {
		l = &line{}
		g.lines[key] = l
	}
	l.users++
	b := l.open
	lead := b == nil
	if lead {
		b = &batch{done: make(chan struct{})}
		l.open = b
	}
	b.jobs = append(b.jobs, j)
	g.mu.Unlock()

	if lead {
		l.writing.Lock()
		g.mu.Lock()
		l.open = nil // later writers start the next batch
		jobs := b.jobs
		g.mu.Unlock()
		// The batch is everyone's: a client that leaves does not cancel it.
		err := db.RunInTx(context.WithoutCancel(ctx), nil, func(ctx context.Context, tx bun.Tx) error {
			for _, j := range jobs {
				if j.err = j.write(ctx, tx); j.err != nil && (g.Refusal == nil || !g.Refusal(j.err)) {
					return j.err
				}
			}
			return nil
		})
		if err != nil {
			for _, j := range jobs {
				j.err = err
			}
		}
		l.writing.Unlock()
		close(b.done)
	} else {
		<-b.done
	}

	g.mu.Lock()
	if l.users--; l.users == 0 {
		delete(g.lines, key)
	}
	g.mu.Unlock()
	return j.err
}

// Waiting returns how many writers of key wait in its open batch (for
// tests and metrics).
func (g *GroupCommit) Waiting(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.lines[key]; l != nil && l.open != nil {
		return len(l.open.jobs)
	}
	return 0
}

// Lines returns how many keys have writers (an idle line is dropped).
func (g *GroupCommit) Lines() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.lines)
}
