package checkout

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// groupCommit writes the orders of concurrent live paid creates of the
// same tickets in one transaction. In a flash sale every create updates
// one ticket row, and a row lock is held until the transaction's commit
// is flushed to disk: one order per transaction would sell at most one
// order per WAL flush, however fast the statements. Creates that arrive
// while a batch of their tickets is being written wait for it, then go
// together in the next one (group commit, as PostgreSQL itself does for
// independent commits), so each flush sells as many orders as were
// waiting. Each create's writes are its own (see Service.writeHeld): a
// refusal (sold_out, a key that has an answer) undoes the little it did
// and leaves the others alone; any other error fails the whole batch,
// which commits nothing, and every create in it gets that error.
//
// Creates are grouped by the set of tickets they hold, and each takes its
// rows in id order, so batches of different carts cannot deadlock.
type groupCommit struct {
	mu    sync.Mutex
	lines map[string]*line
}

// groupCommits are the batches of each database handle: services are
// plain values (tests copy them), so the batches cannot live in one.
var groupCommits sync.Map // *store.DB → *groupCommit

func batchesOf(db *store.DB) *groupCommit {
	g, _ := groupCommits.LoadOrStore(db, &groupCommit{})
	return g.(*groupCommit)
}

// line is the batches of one set of tickets.
type line struct {
	// writing is held by the batch whose transaction runs.
	writing sync.Mutex
	// open is the batch gathering creates while that one runs.
	open *batch
	// users counts the creates on the line, so an idle line is dropped.
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

// do runs write in the transaction of the next batch of key, and returns
// its result once that transaction has committed or rolled back.
func (g *groupCommit) do(ctx context.Context, db *store.DB, key string, write func(ctx context.Context, tx bun.Tx) error) error {
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
		l.open = nil // later creates start the next batch
		jobs := b.jobs
		g.mu.Unlock()
		// The batch is everyone's: a client that leaves does not cancel it.
		err := db.RunInTxNotifyAfter(context.WithoutCancel(ctx), func(ctx context.Context, tx bun.Tx) error {
			for _, j := range jobs {
				if j.err = j.write(ctx, tx); j.err != nil && !refusal(j.err) {
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

// refusal reports whether err is a create's own answer, which leaves its
// batch going: a business refusal, or its key already having an answer.
func refusal(err error) bool {
	var ae *apperr.Error
	return errors.As(err, &ae) || errors.Is(err, idempotency.ErrTaken)
}

// lineKey names the set of tickets a cart holds.
func lineKey(req *request) string {
	_, ids := lockOrder(req)
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}
