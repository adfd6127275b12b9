// Package jobs runs Boxoffice's durable background work on River: webhook
// deliveries (retried with exponential backoff, at most webhook.MaxAttempts
// times, in a queue of their own; a delivery whose app already has its
// share of the workers, webhook.Slots, is snoozed rather than run), ticket
// emails (retried for at least MailRetryWindow, in a queue of their own),
// the return of live refunds' money at the payment provider, the
// periodic sweep that expires pending orders, and the periodic purge of
// expired idempotency keys and portal sessions. Jobs live in the service's
// own database, are inserted in the transaction of the change
// that causes them, survive restarts, and are shared safely by every
// instance: each job is worked by one of them, and the periodic ones are
// scheduled by the elected leader only.
package jobs

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/cancellation"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"
)

// Config tunes the runner.
type Config struct {
	// RetryBase is the first webhook retry delay; attempt n waits base·2^(n-1).
	RetryBase time.Duration
	// MailRetryBase is the first ticket email retry delay, doubling.
	MailRetryBase time.Duration
	// SweepInterval is how often pending orders are checked for expiry.
	SweepInterval time.Duration
	// PurgeInterval is how often expired idempotency keys and portal
	// sessions are deleted; zero means DefaultPurgeInterval.
	PurgeInterval time.Duration
	// PollInterval is how often workers look for due jobs (retries of a few
	// seconds are found by polling, whatever the database).
	PollInterval time.Duration
	// Workers is how many jobs of each queue (webhook deliveries, the
	// rest) one instance works at once.
	Workers int
	// RescueAfter is how long a job may stay running before River takes it
	// for stuck (its instance crashed mid-job) and schedules it again; zero
	// means DefaultRescueAfter. It must exceed JobTimeout.
	RescueAfter time.Duration
}

// JobTimeout bounds one run of a job: what a webhook delivery needs (the
// HTTP client's timeout) plus a margin to record the attempt, so a slow
// receiver is recorded as a failed attempt rather than cut off mid-write.
const JobTimeout = webhook.Timeout + 5*time.Second

// DefaultRescueAfter is RescueAfter by default. River's rescuer runs every
// 30 s, so a job interrupted by a crash is rescued within two minutes of
// its start and retried on the usual backoff as a failed attempt (River's
// own default would leave it running for an hour).
const DefaultRescueAfter = 90 * time.Second

// DefaultPurgeInterval is PurgeInterval by default. Expired keys and
// sessions are ignored (and removed) when met, so the purge only keeps the
// tables small and need not run often.
const DefaultPurgeInterval = 5 * time.Minute

// DefaultConfig returns production settings.
func DefaultConfig() Config {
	return Config{RetryBase: webhook.DefaultRetryBase, MailRetryBase: DefaultMailRetryBase, SweepInterval: 10 * time.Second, PurgeInterval: DefaultPurgeInterval,
		PollInterval: 250 * time.Millisecond, Workers: 8, RescueAfter: DefaultRescueAfter}
}

// Runner inserts and works jobs.
type Runner struct {
	inserter *river.Client[*sql.Tx]
	// mailAttempts is how many attempts a ticket email gets.
	mailAttempts int
	worker       startStopper
	log          *slog.Logger
	rescueAfter  time.Duration
	dates        *cancellation.Service
}

type startStopper interface {
	Start(context.Context) error
	Stop(context.Context) error
	StopAndCancel(context.Context) error
}

// Migrate creates or updates River's tables.
func Migrate(ctx context.Context, db *store.DB) error {
	var (
		m   *rivermigrate.Migrator[*sql.Tx]
		err error
	)
	if db.Postgres() {
		m, err = rivermigrate.New(riverdatabasesql.New(db.DB.DB), nil)
	} else {
		m, err = rivermigrate.New(riversqlite.New(db.DB.DB), nil)
	}
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("jobs: migrate: %w", err)
	}
	return nil
}

// riverConfig is the configuration of the client that works jobs.
// Errors: a RescueAfter not above JobTimeout, which would rescue jobs
// still running.
func riverConfig(cfg Config, workers *river.Workers, log *slog.Logger) (*river.Config, error) {
	rescueAfter := cmp.Or(cfg.RescueAfter, DefaultRescueAfter)
	if rescueAfter <= JobTimeout {
		return nil, fmt.Errorf("jobs: RescueAfter (%s) must be longer than the job timeout (%s)", rescueAfter, JobTimeout)
	}
	return &river.Config{
		Logger: slog.New(atLeast{log.Handler(), slog.LevelWarn}).With("component", "jobs"),
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: max(cfg.Workers, 1)}, QueueWebhooks: {MaxWorkers: max(cfg.Workers, 1), FetchCooldown: 10 * time.Millisecond},
			QueueMail: {MaxWorkers: max(cfg.Workers/2, 1)}},
		Workers:              workers,
		RetryPolicy:          backoff{base: cfg.RetryBase},
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        min(cfg.PollInterval, 50*time.Millisecond),
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: rescueAfter,
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(
				river.PeriodicInterval(cfg.SweepInterval),
				func() (river.JobArgs, *river.InsertOpts) { return expireArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: expireArgs{}.Kind()},
			),
			river.NewPeriodicJob(
				river.PeriodicInterval(cmp.Or(cfg.PurgeInterval, DefaultPurgeInterval)),
				func() (river.JobArgs, *river.InsertOpts) { return purgeArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: purgeArgs{}.Kind()},
			),
		},
	}, nil
}

// New builds a runner over db. It does not start working until Start.
func New(db *store.DB, hooks *webhook.Service, orders *checkout.Service, tk *tickets.Service, keys *idempotency.Service, sessions *accounts.Service,
	money *refunds.Service, dates *cancellation.Service, cfg Config, log *slog.Logger) (*Runner, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &refundWorker{refunds: money})
	river.AddWorker(workers, &cancelWorker{dates: dates})
	river.AddWorker(workers, &deliverWorker{hooks: hooks})
	mailBase := cmp.Or(cfg.MailRetryBase, DefaultMailRetryBase)
	river.AddWorker(workers, &ticketEmailWorker{tickets: tk, retry: mailBackoff{base: mailBase}})
	river.AddWorker(workers, &refundEmailWorker{tickets: tk, retry: mailBackoff{base: mailBase}})
	river.AddWorker(workers, &signUpNoticeWorker{accounts: sessions, retry: mailBackoff{base: mailBase}})
	river.AddWorker(workers, &endpointNoticeWorker{accounts: sessions, retry: mailBackoff{base: mailBase}})
	river.AddWorker(workers, &expireWorker{orders: orders, log: log})
	river.AddWorker(workers, &purgeWorker{keys: keys, sessions: sessions, log: log})
	rc, err := riverConfig(cfg, workers, log)
	if err != nil {
		return nil, err
	}
	r := &Runner{log: log, rescueAfter: rc.RescueStuckJobsAfter, mailAttempts: mailBackoff{base: mailBase}.attempts(), dates: dates}
	if db.Postgres() {
		// Inserts go through database/sql so they join Bun's transactions;
		// the worker listens on the pgx pool for prompt pick-up.
		ins, err := river.NewClient(riverdatabasesql.New(db.DB.DB), &river.Config{Workers: workers})
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		w, err := river.NewClient(riverpgxv5.New(db.Pool), rc)
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		r.inserter, r.worker = ins, w
		return r, nil
	}
	c, err := river.NewClient(riversqlite.New(db.DB.DB), rc)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	r.inserter, r.worker = c, c
	return r, nil
}

// EnqueueDeliveries schedules delivery jobs inside tx, one per event and
// endpoint, in one batch; a job behind others (its endpoint is
// backlogged) gets a lower River priority, so every other endpoint's
// waiting job is fetched before it. A delivery has at most one unfinished
// job (River enforces it, see deliverArgs): when one already has one, the
// error wraps webhook.ErrDeliveryPending and says where that job stands
// (the caller's transaction is to roll back).
func (r *Runner) EnqueueDeliveries(ctx context.Context, tx bun.Tx, ds []webhook.Delivery) error {
	params := make([]river.InsertManyParams, len(ds))
	for i, d := range ds {
		opts := &river.InsertOpts{Priority: priorityNow}
		if d.Behind {
			opts.Priority = priorityBehind
		}
		params[i] = river.InsertManyParams{Args: deliverArgs{EventID: d.EventID, EndpointID: d.EndpointID}, InsertOpts: opts}
	}
	res, err := r.inserter.InsertManyTx(ctx, tx.Tx, params)
	if err != nil {
		return err
	}
	for _, x := range res {
		if x.UniqueSkippedAsDuplicate {
			return fmt.Errorf("%w: %s", webhook.ErrDeliveryPending, r.describe(x.Job))
		}
	}
	return nil
}

// describe says where an unfinished delivery job stands, for an operator.
func (r *Runner) describe(j *rivertype.JobRow) string {
	at := func(t *time.Time) string { return t.UTC().Format(time.RFC3339) }
	switch j.State {
	case rivertype.JobStateRunning:
		return fmt.Sprintf("job %d is running attempt %d of %d since %s (if its instance died, it is retried after %s)",
			j.ID, j.Attempt, j.MaxAttempts, at(j.AttemptedAt), r.rescueAfter)
	case rivertype.JobStateRetryable, rivertype.JobStateScheduled:
		return fmt.Sprintf("job %d will make attempt %d of %d at %s", j.ID, j.Attempt+1, j.MaxAttempts, at(&j.ScheduledAt))
	}
	if j.ScheduledAt.After(time.Now()) {
		// Snoozed briefly: the app's other deliveries use its share of the workers.
		return fmt.Sprintf("job %d waits for the app's other deliveries, then makes attempt %d of %d (from %s)",
			j.ID, j.Attempt+1, j.MaxAttempts, at(&j.ScheduledAt))
	}
	return fmt.Sprintf("job %d is %s, about to make attempt %d of %d", j.ID, j.State, j.Attempt+1, j.MaxAttempts)
}

// Start begins working jobs until Stop.
func (r *Runner) Start(ctx context.Context) error {
	if err := r.worker.Start(ctx); err != nil {
		return err
	}
	return r.ResumeCancellations(ctx)
}

// Stop lets running jobs finish (cancelling them if ctx ends first) and
// stops; unfinished deliveries stay in the database for the next start.
func (r *Runner) Stop(ctx context.Context) error {
	if err := r.worker.Stop(ctx); err != nil {
		hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return errors.Join(err, r.worker.StopAndCancel(hard))
	}
	return nil
}

// backoff waits base·2^(n-1) after the n-th failed attempt.
type backoff struct{ base time.Duration }

func (b backoff) NextRetry(job *rivertype.JobRow) time.Time {
	n := min(max(job.Attempt, 1), 20)
	return time.Now().UTC().Add(b.base << (n - 1))
}

// deliverArgs names a delivery: an event to one endpoint (no endpoint:
// a job queued before endpoints, for the one that follows the app's URL).
type deliverArgs struct {
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id,omitempty"`
}

func (deliverArgs) Kind() string { return "webhook_delivery" }

// River priorities of delivery jobs (1 is fetched first): an app's jobs
// while it is backlogged go behind every other app's.
const (
	priorityNow    = 1
	priorityBehind = 2
)

// QueueWebhooks is the queue of webhook deliveries: a queue of their own,
// so a backlog of deliveries never delays the order-expiry sweep (which
// releases held stock) or other jobs of the default queue.
const QueueWebhooks = "webhooks"

// InsertOpts makes a delivery job unique per event and endpoint among
// unfinished jobs, so one delivery never has two chains at once (a redelivery while
// one is under way is refused). Finished jobs (completed, discarded,
// cancelled) do not count: an event delivered or given up on can be
// delivered again.
func (deliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: webhook.MaxAttempts, Queue: QueueWebhooks, UniqueOpts: river.UniqueOpts{
		ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled},
	}}
}

type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	hooks *webhook.Service
}

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	err := w.hooks.Deliver(ctx, job.Args.EventID, job.Args.EndpointID, job.Attempt >= job.MaxAttempts)
	switch {
	case errors.Is(err, webhook.ErrAppBusy):
		// Not an attempt: River gives the worker back at once and counts
		// nothing against MaxAttempts.
		return river.JobSnooze(snoozeFor(job.JobRow))
	case errors.Is(err, webhook.ErrGiveUp) || errors.Is(err, store.ErrNotFound):
		return river.JobCancel(err)
	}
	return err
}

// snoozeFor is how long a delivery whose app has its share of the workers
// waits before it looks again: about 1 s, doubling with each time it has
// waited (River counts them in the job's metadata) up to about 30 s, spread
// over half to one and a half times that, so a burst does not come back
// at once. A short wait moves on soon; a long one (a receiver that never
// answers, sent a burst) is looked at ever more rarely and costs the
// database little. Other apps' jobs do not wait behind these: a snoozed
// job goes to the back, and a backlogged app's new jobs have a lower
// priority (EnqueueDeliveries).
func snoozeFor(job *rivertype.JobRow) time.Duration {
	var meta struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &meta) // none yet: 0
	d := min(snoozeBase<<min(meta.Snoozes, 10), snoozeMax)
	return d/2 + rand.N(d)
}

const (
	snoozeBase = time.Second
	snoozeMax  = 30 * time.Second
)

type expireArgs struct{}

func (expireArgs) Kind() string { return "expire_pending_orders" }

func (expireArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

type expireWorker struct {
	river.WorkerDefaults[expireArgs]
	orders *checkout.Service
	log    *slog.Logger
}

func (w *expireWorker) Work(ctx context.Context, _ *river.Job[expireArgs]) error {
	n, err := w.orders.ExpireDue(ctx)
	if n > 0 {
		w.log.Info("expired pending orders", "count", n)
	}
	return err
}

type purgeArgs struct{}

func (purgeArgs) Kind() string { return "purge_expired" }

// InsertOpts runs a purge once: a failed one is run again at the next
// interval anyway.
func (purgeArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

// purgeWorker deletes expired idempotency keys and portal sessions. Both
// are also ignored (and removed) when met, so this only keeps the tables
// small; one failing does not stop the other.
type purgeWorker struct {
	river.WorkerDefaults[purgeArgs]
	keys     *idempotency.Service
	sessions *accounts.Service
	log      *slog.Logger
}

func (w *purgeWorker) Work(ctx context.Context, _ *river.Job[purgeArgs]) error {
	var errs []error
	for _, p := range []struct {
		what  string
		purge func(context.Context) (int64, error)
	}{
		{"idempotency keys", w.keys.Purge},
		{"portal sessions", w.sessions.PurgeSessions},
	} {
		n, err := p.purge(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil { // not a shutdown
				w.log.Warn("purging "+p.what+" failed", "error", err)
			}
			errs = append(errs, fmt.Errorf("purging %s: %w", p.what, err))
		case n > 0:
			w.log.Info("purged expired "+p.what, "count", n)
		}
	}
	return errors.Join(errs...)
}

// atLeast drops records below a level: River's own info lines (leader
// elections, poll mode) are noise next to the service's logs.
type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(attrs []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(attrs), h.min}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.min}
}
