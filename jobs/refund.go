package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/boxoffice/boxoffice/refunds"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"
)

// refundAttempts bounds the attempts to reach a payment provider for one
// refund: with the backoff of RetryBase doubling, days of an unreachable
// provider.
const refundAttempts = 20

// refundCheckAfter is how long a refund the provider accepted but has not
// finished waits before the job asks the provider's list again, in case its
// callback never comes.
const refundCheckAfter = 10 * time.Minute

type refundArgs struct {
	RefundID int64 `json:"refund_id"`
}

func (refundArgs) Kind() string { return "refund_send" }

// InsertOpts makes one unfinished job per refund, so the provider is never
// asked for one refund by two jobs at once.
func (refundArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: refundAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// EnqueueRefund schedules the return of a live refund's money inside tx,
// the refund's own transaction (the outbox).
func (r *Runner) EnqueueRefund(ctx context.Context, tx bun.Tx, refundID int64) error {
	_, err := r.inserter.InsertTx(ctx, tx.Tx, refundArgs{RefundID: refundID}, nil)
	return err
}

type refundWorker struct {
	river.WorkerDefaults[refundArgs]
	refunds *refunds.Service
}

func (w *refundWorker) Work(ctx context.Context, job *river.Job[refundArgs]) error {
	if w.refunds == nil {
		return river.JobCancel(errors.New("jobs: no refund service"))
	}
	err := w.refunds.Send(ctx, job.Args.RefundID)
	if errors.Is(err, refunds.ErrAtProvider) {
		// Not a failed attempt: the provider has the refund; look again
		// later unless its callback settles it first.
		return river.JobSnooze(refundCheckAfter)
	}
	return err
}
