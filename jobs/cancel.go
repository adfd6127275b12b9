package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/boxoffice/boxoffice/cancellation"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"
)

// cancelBudget is how many orders one run of a cancellation's job refunds
// before it makes way for other jobs and runs again: a few seconds of work.
const cancelBudget = 200

// cancelTimeout bounds one run; a run killed by it, or by the death of
// its instance, is run again (the work resumes from the database).
const cancelTimeout = 5 * time.Minute

type cancelArgs struct {
	EventdateID int64 `json:"eventdate_id"`
}

func (cancelArgs) Kind() string { return "date_cancellation" }

// InsertOpts makes one unfinished job per date: cancelling again while it
// runs adds nothing; after it finished, cancelling again (adding refunds)
// starts another.
func (cancelArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
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

func (w *cancelWorker) Timeout(*river.Job[cancelArgs]) time.Duration { return cancelTimeout }
