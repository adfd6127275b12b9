package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"
)

// QueueMail is the queue of ticket emails: a slow mail server delays
// neither webhooks nor the expiry sweep.
const QueueMail = "mail"

// DefaultMailRetryBase is MAIL_RETRY_BASE by default.
const DefaultMailRetryBase = 30 * time.Second

// MailRetryWindow is how long a ticket email is retried after temporary
// failures before it is given up (spec/fulfilment.md section 3).
const MailRetryWindow = time.Hour

// mailMaxDelay caps one wait between attempts, so a long retry window is
// many attempts rather than one very late one.
const mailMaxDelay = 30 * time.Minute

// mailTimeout bounds one attempt: the SMTP conversation's own limits plus
// a margin to record the outcome. It stays below DefaultRescueAfter.
const mailTimeout = 45 * time.Second

// mailBackoff waits base·2^(n-1) after the n-th failed attempt, at most
// mailMaxDelay.
type mailBackoff struct{ base time.Duration }

func (b mailBackoff) delay(n int) time.Duration {
	d := b.base << min(max(n-1, 0), 30)
	if d <= 0 || d > mailMaxDelay {
		return mailMaxDelay
	}
	return d
}

// attempts is how many attempts make the waits between them add up to
// MailRetryWindow at least.
func (b mailBackoff) attempts() int {
	var waited time.Duration
	n := 1
	for waited < MailRetryWindow {
		waited += b.delay(n)
		n++
	}
	return n
}

type ticketEmailArgs struct {
	OrderID int64 `json:"order_id"`
}

func (ticketEmailArgs) Kind() string { return "ticket_email" }

// InsertOpts makes one email job per order: an order's tickets are issued
// once, and this holds even if that were ever to run twice.
func (ticketEmailArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMail, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateCompleted, rivertype.JobStateCancelled,
			rivertype.JobStateDiscarded}}}
}

// EnqueueTicketEmail schedules the ticket email of an order inside tx, the
// transaction that issues its tickets (the outbox).
func (r *Runner) EnqueueTicketEmail(ctx context.Context, tx bun.Tx, orderID int64) error {
	_, err := r.inserter.InsertTx(ctx, tx.Tx, ticketEmailArgs{OrderID: orderID}, &river.InsertOpts{MaxAttempts: r.mailAttempts})
	return err
}

type ticketEmailWorker struct {
	river.WorkerDefaults[ticketEmailArgs]
	tickets *tickets.Service
	retry   mailBackoff
}

func (w *ticketEmailWorker) Work(ctx context.Context, job *river.Job[ticketEmailArgs]) error {
	err := w.tickets.SendEmail(ctx, job.Args.OrderID, job.Attempt >= job.MaxAttempts)
	return emailOutcome(err, "ticket email of order %d", job.Args.OrderID)
}

// emailOutcome is what a buyer's email job tells River: nothing on
// success, the end of the job for an email given up, a retry otherwise.
// River logs and keeps a job's error; mail's errors name no address.
func emailOutcome(err error, what string, id int64) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf(what+": %w", id, err)
	if errors.Is(err, tickets.ErrGiveUp) {
		return river.JobCancel(err)
	}
	return err
}

func (w *ticketEmailWorker) NextRetry(job *river.Job[ticketEmailArgs]) time.Time {
	return time.Now().UTC().Add(w.retry.delay(job.Attempt))
}

func (w *ticketEmailWorker) Timeout(*river.Job[ticketEmailArgs]) time.Duration { return mailTimeout }

type refundEmailArgs struct {
	RefundID int64 `json:"refund_id"`
}

func (refundEmailArgs) Kind() string { return "refund_email" }

// InsertOpts makes one email job per refund, as for the ticket email.
func (refundEmailArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMail, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateCompleted, rivertype.JobStateCancelled,
			rivertype.JobStateDiscarded}}}
}

// EnqueueRefundEmail schedules a refund's email inside tx, the refund's
// transaction (the outbox).
func (r *Runner) EnqueueRefundEmail(ctx context.Context, tx bun.Tx, refundID int64) error {
	_, err := r.inserter.InsertTx(ctx, tx.Tx, refundEmailArgs{RefundID: refundID}, &river.InsertOpts{MaxAttempts: r.mailAttempts})
	return err
}

type refundEmailWorker struct {
	river.WorkerDefaults[refundEmailArgs]
	tickets *tickets.Service
	retry   mailBackoff
}

func (w *refundEmailWorker) Work(ctx context.Context, job *river.Job[refundEmailArgs]) error {
	err := w.tickets.SendRefundEmail(ctx, job.Args.RefundID, job.Attempt >= job.MaxAttempts)
	return emailOutcome(err, "refund email of refund %d", job.Args.RefundID)
}

func (w *refundEmailWorker) NextRetry(job *river.Job[refundEmailArgs]) time.Time {
	return time.Now().UTC().Add(w.retry.delay(job.Attempt))
}

func (w *refundEmailWorker) Timeout(*river.Job[refundEmailArgs]) time.Duration { return mailTimeout }

// noticePeriod is how often an account's owner may be told of sign-ups with
// its address: a stranger repeating sign-ups sends one email an hour.
const noticePeriod = time.Hour

type signUpNoticeArgs struct {
	AccountID int64 `json:"account_id"`
}

func (signUpNoticeArgs) Kind() string { return "sign_up_notice" }

// InsertOpts makes one notice per account per noticePeriod.
func (signUpNoticeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMail, UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: noticePeriod}}
}

// EnqueueSignUpNotice schedules, inside tx, the email telling an account's
// owner that someone tried to sign up with its address; at most one per
// account per hour (a repeat inserts nothing).
func (r *Runner) EnqueueSignUpNotice(ctx context.Context, tx bun.Tx, accountID int64) error {
	_, err := r.inserter.InsertTx(ctx, tx.Tx, signUpNoticeArgs{AccountID: accountID}, &river.InsertOpts{MaxAttempts: r.mailAttempts})
	return err
}

type signUpNoticeWorker struct {
	river.WorkerDefaults[signUpNoticeArgs]
	accounts *accounts.Service
	retry    mailBackoff
}

func (w *signUpNoticeWorker) Work(ctx context.Context, job *river.Job[signUpNoticeArgs]) error {
	err := w.accounts.SendSignUpNotice(ctx, job.Args.AccountID)
	if err != nil && mail.IsPermanent(err) {
		return river.JobCancel(fmt.Errorf("sign-up notice to account %d: %w", job.Args.AccountID, err))
	}
	return err
}

func (w *signUpNoticeWorker) NextRetry(job *river.Job[signUpNoticeArgs]) time.Time {
	return time.Now().UTC().Add(w.retry.delay(job.Attempt))
}

func (w *signUpNoticeWorker) Timeout(*river.Job[signUpNoticeArgs]) time.Duration { return mailTimeout }

type endpointNoticeArgs struct {
	EndpointID string `json:"endpoint_id"`
}

func (endpointNoticeArgs) Kind() string { return "endpoint_disabled_notice" }

func (endpointNoticeArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueMail} }

// EnqueueEndpointDisabledNotice schedules, inside tx (the one that
// disabled the endpoint), the email telling the account's owner that
// deliveries to a webhook endpoint stopped.
func (r *Runner) EnqueueEndpointDisabledNotice(ctx context.Context, tx bun.Tx, endpointID string) error {
	_, err := r.inserter.InsertTx(ctx, tx.Tx, endpointNoticeArgs{EndpointID: endpointID}, &river.InsertOpts{MaxAttempts: r.mailAttempts})
	return err
}

type endpointNoticeWorker struct {
	river.WorkerDefaults[endpointNoticeArgs]
	accounts *accounts.Service
	retry    mailBackoff
}

func (w *endpointNoticeWorker) Work(ctx context.Context, job *river.Job[endpointNoticeArgs]) error {
	err := w.accounts.SendEndpointDisabledNotice(ctx, job.Args.EndpointID)
	if err != nil && (mail.IsPermanent(err) || errors.Is(err, store.ErrNotFound)) {
		return river.JobCancel(fmt.Errorf("endpoint notice for %s: %w", job.Args.EndpointID, err))
	}
	return err
}

func (w *endpointNoticeWorker) NextRetry(job *river.Job[endpointNoticeArgs]) time.Time {
	return time.Now().UTC().Add(w.retry.delay(job.Attempt))
}

func (w *endpointNoticeWorker) Timeout(*river.Job[endpointNoticeArgs]) time.Duration {
	return mailTimeout
}
