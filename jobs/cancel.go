package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/boxoffice/boxoffice/cancellation"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"
)

// cancelBudget is how many orders one run of a cancellation's job refunds
// before it makes way for other jobs and runs again: a few seconds of work.
const cancelBudget = 200

type cancelArgs struct {
	EventdateID int64 `json:"eventdate_id"`
}

func (cancelArgs) Kind() string { return "date_cancellation" }

// InsertOpts: no uniqueness. The job of an instance killed mid-run stays
// "running" until River's rescuer takes it (minutes), and a server
// starting meanwhile inserts another to resume the work at once
// (ResumeCancellations); River's unique jobs would refuse that one. Two
// runs of one date at a time are safe: each order's refund is made under
// its own idempotency key, and a run with nothing left ends at once.
func (cancelArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: cancelAttempts}
}

// cancelAttempts is high and cancelRetryMax short: a cancellation's work
// must not give up, nor wait long after a passing error (a busy database,
// a restart), since buyers wait for their money; each run is safe to
// repeat.
const (
	cancelAttempts = 10000
	cancelRetryMax = 30 * time.Second
)

// ResumeCancellations schedules the work of every cancelled date whose
// work is not finished: what a server starting after a crash does, so the
// refunds go on without waiting for the rescue of the dead run.
func (r *Runner) ResumeCancellations(ctx context.Context) error {
	if r.dates == nil {
		return nil
	}
	ids, err := r.dates.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := r.inserter.Insert(ctx, cancelArgs{EventdateID: id}, nil); err != nil {
			return err
		}
	}
	return nil
}

// EnqueueCancellation schedules a cancelled date's work inside tx, the
// cancellation's transaction (the outbox).
func (r *Runner) EnqueueCancellation(ctx context.Context, tx bun.Tx, dateID int64) error {
	_, err := r.inserter.InsertTx(ctx, tx.Tx, cancelArgs{EventdateID: dateID}, nil)
	return err
}

type cancelWorker struct {
	river.WorkerDefaults[cancelArgs]
	dates *cancellation.Service
}

func (w *cancelWorker) Work(ctx context.Context, job *river.Job[cancelArgs]) error {
	if w.dates == nil {
		return river.JobCancel(errors.New("jobs: no cancellation service"))
	}
	more, err := w.dates.Work(ctx, job.Args.EventdateID, cancelBudget)
	if err != nil || !more {
		return err
	}
	// Not a failure: orders are left. Run again at once, after the jobs
	// waiting meanwhile.
	return river.JobSnooze(time.Millisecond)
}

// NextRetry waits a second per failed attempt, at most cancelRetryMax,
// instead of River's polynomial backoff, which would leave a date's
// refunds waiting for hours after a few errors.
func (w *cancelWorker) NextRetry(job *river.Job[cancelArgs]) time.Time {
	return time.Now().UTC().Add(min(time.Duration(job.Attempt)*time.Second, cancelRetryMax))
}
