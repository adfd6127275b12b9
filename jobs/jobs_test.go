package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/boxoffice/boxoffice/apperr"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestRiverConfig(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		rc, err := riverConfig(DefaultConfig(), river.NewWorkers(), discard)
		require.NoError(t, err)
		require.Equal(t, 90*time.Second, rc.RescueStuckJobsAfter)
		require.Equal(t, webhook.Timeout+5*time.Second, rc.JobTimeout)
		require.Greater(t, rc.JobTimeout, webhook.Timeout, "a slow receiver times out in the HTTP client, and the attempt is recorded")
		require.Greater(t, rc.RescueStuckJobsAfter, rc.JobTimeout, "a job still running is never rescued")
		require.LessOrEqual(t, rc.RescueStuckJobsAfter+30*time.Second, 2*time.Minute,
			"a job interrupted by a crash is rescued within two minutes (River's rescuer runs every 30 s)")
	})
	t.Run("ZeroRescueAfterIsTheDefault", func(t *testing.T) {
		rc, err := riverConfig(Config{PollInterval: time.Second}, river.NewWorkers(), discard)
		require.NoError(t, err)
		require.Equal(t, DefaultRescueAfter, rc.RescueStuckJobsAfter)
	})
	t.Run("PeriodicJobs", func(t *testing.T) {
		rc, err := riverConfig(DefaultConfig(), river.NewWorkers(), discard)
		require.NoError(t, err)
		require.Len(t, rc.PeriodicJobs, 2, "the expiry sweep and the purge, scheduled by the elected leader")
	})
	t.Run("ErrRescueAfterNotAboveJobTimeout", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.RescueAfter = JobTimeout
		_, err := riverConfig(cfg, river.NewWorkers(), discard)
		require.EqualError(t, err, "jobs: RescueAfter (15s) must be longer than the job timeout (15s)")
	})
}

// receiver is a webhook endpoint that answers each event with the status
// set for it (or the default) and counts what arrived.
type receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	answer   map[string]int // by event id
	fallback int            // for events without an answer of their own
	got      map[string]int // deliveries by event id
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{answer: map[string]int{}, fallback: http.StatusOK, got: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(verify.HeaderEventID)
		rc.mu.Lock()
		rc.got[id]++
		status, ok := rc.answer[id]
		if !ok {
			status = rc.fallback
		}
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) answerWith(id string, status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.answer[id] = status
}

// answerOthersWith sets the answer to events without one of their own.
func (rc *receiver) answerOthersWith(status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.fallback = status
}

func (rc *receiver) deliveries(id string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[id]
}

// testBundle is a runner over a fresh database with one app whose webhooks
// go to a test receiver.
type testBundle struct {
	db     *store.DB
	runner *Runner
	hooks  *webhook.Service
	rc     *receiver
	appID  int64
	// accountID owns the app.
	accountID int64
}

func setup(t *testing.T, db *store.DB, cfg Config) *testBundle {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, Migrate(ctx, db))
	now := func() time.Time { return time.Now().UTC() }
	rc := newReceiver(t)
	prov := &provision.Service{DB: db, Now: now, AllowPrivateWebhooks: true}
	acc, err := prov.CreateAccount(ctx, provision.AccountInput{Name: "Partner", Email: "partner@example.com"})
	require.NoError(t, err)
	app, err := prov.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Shop", WebhookURL: rc.srv.URL})
	require.NoError(t, err)
	hooks := &webhook.Service{DB: db, Now: now, Log: discard, Client: webhook.NewClient(true), AllowPrivate: true}
	tk := &tickets.Service{DB: db, Now: now}
	orders := &checkout.Service{DB: db, Webhooks: hooks, Tickets: tk, Now: now, Config: checkout.DefaultConfig()}
	runner, err := New(db, hooks, orders, tk, &idempotency.Service{DB: db, Now: now}, &accounts.Service{DB: db, Now: now}, nil, nil, cfg, discard)
	require.NoError(t, err)
	hooks.Enqueue = runner.EnqueueDeliveries
	tk.EnqueueEmail = runner.EnqueueTicketEmail
	return &testBundle{db: db, runner: runner, hooks: hooks, rc: rc, appID: app.App.ID, accountID: acc.ID}
}

// start works jobs until the test ends.
func (tb *testBundle) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, tb.runner.Start(ctx))
	t.Cleanup(func() {
		stop, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		require.NoError(t, tb.runner.Stop(stop))
		cancel()
	})
}

func (tb *testBundle) emit(t *testing.T) string {
	t.Helper()
	id, err := tb.hooks.EmitTest(context.Background(), tb.appID, store.EnvLive)
	require.NoError(t, err)
	return id
}

func (tb *testBundle) event(t *testing.T, id string) *store.WebhookEvent {
	t.Helper()
	ev, err := store.WebhookEventByID(context.Background(), tb.db, id)
	require.NoError(t, err)
	return ev
}

// jobsOf returns the delivery jobs of an event, oldest first.
func (tb *testBundle) jobsOf(t *testing.T, eventID string) []*rivertype.JobRow {
	t.Helper()
	res, err := tb.runner.inserter.JobList(context.Background(), river.NewJobListParams().Kinds(deliverArgs{}.Kind()).First(1000))
	require.NoError(t, err)
	var out []*rivertype.JobRow
	for _, j := range res.Jobs {
		var a deliverArgs
		require.NoError(t, json.Unmarshal(j.EncodedArgs, &a))
		if a.EventID == eventID {
			out = append(out, j)
		}
	}
	return out
}

// unfinished returns the jobs of an event that are not finished.
func (tb *testBundle) unfinished(t *testing.T, eventID string) []*rivertype.JobRow {
	t.Helper()
	var out []*rivertype.JobRow
	for _, j := range tb.jobsOf(t, eventID) {
		if j.FinalizedAt == nil {
			out = append(out, j)
		}
	}
	return out
}

// onlyJob returns the one delivery job of an event.
func (tb *testBundle) onlyJob(t *testing.T, eventID string) *rivertype.JobRow {
	t.Helper()
	js := tb.jobsOf(t, eventID)
	require.Len(t, js, 1)
	return js[0]
}

// setJob rewrites a job as River's own code would (the driver's full
// update), to put it where a crash or a failure would have left it.
func (tb *testBundle) setJob(t *testing.T, p *riverdriver.JobUpdateFullParams) {
	t.Helper()
	_, err := tb.runner.inserter.Driver().GetExecutor().JobUpdateFull(context.Background(), p)
	require.NoError(t, err)
}

// crashed puts an event's job where `kill -9` of the instance working it
// left it: running its first attempt, begun at startedAt.
func (tb *testBundle) crashed(t *testing.T, eventID string, startedAt time.Time) {
	t.Helper()
	tb.setJob(t, &riverdriver.JobUpdateFullParams{ID: tb.onlyJob(t, eventID).ID,
		StateDoUpdate: true, State: rivertype.JobStateRunning,
		AttemptDoUpdate: true, Attempt: 1,
		AttemptedAtDoUpdate: true, AttemptedAt: &startedAt,
		AttemptedByDoUpdate: true, AttemptedBy: []string{"killed-instance"}})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, 0, what, cond)
}

func fastConfig() Config {
	cfg := DefaultConfig()
	cfg.PollInterval = 20 * time.Millisecond
	cfg.RetryBase = 10 * time.Millisecond
	cfg.SweepInterval = time.Hour
	return cfg
}

// TestRescueAfterCrash: a delivery whose instance was killed mid-attempt is
// taken up again by River's rescuer (run by the elected leader, on both
// drivers) once it has been running longer than RescueAfter, and delivered;
// one running for less is left alone.
func TestRescueAfterCrash(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		tb := setup(t, db, fastConfig())
		stuck, working := tb.emit(t), tb.emit(t)
		now := time.Now().UTC()
		tb.crashed(t, stuck, now.Add(-DefaultRescueAfter-10*time.Second))
		tb.crashed(t, working, now.Add(-30*time.Second))

		tb.start(t)
		waitFor(t, "the stuck delivery to be rescued and delivered", func() bool {
			return tb.event(t, stuck).Status == store.WebhookDelivered
		})
		require.Equal(t, 1, tb.rc.deliveries(stuck))
		require.EqualValues(t, 1, tb.event(t, stuck).Attempts, "the killed attempt never reached the receiver's log")
		waitFor(t, "River to record the job's end", func() bool {
			return tb.onlyJob(t, stuck).State == rivertype.JobStateCompleted
		})
		job := tb.onlyJob(t, stuck)
		require.Equal(t, 2, job.Attempt, "the killed attempt, then the rescued one")
		require.Len(t, job.Errors, 1)
		require.Equal(t, "Stuck job rescued by JobRescuer", job.Errors[0].Error)

		require.Equal(t, rivertype.JobStateRunning, tb.onlyJob(t, working).State, "running for less than RescueAfter: left alone")
		require.Equal(t, 0, tb.rc.deliveries(working))
	})
}

// TestRedeliver: an event has one delivery chain at a time. A redelivery
// while one is queued, waiting to retry or running is refused and changes
// nothing; once it has ended, redelivery starts a new one.
func TestRedeliver(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		cfg := fastConfig()
		cfg.RetryBase = time.Hour // a failed attempt waits for its retry
		tb := setup(t, db, cfg)
		ctx := context.Background()
		refused := func(t *testing.T, id, where string) {
			t.Helper()
			err := tb.hooks.Redeliver(ctx, id)
			require.ErrorIs(t, err, webhook.ErrDeliveryPending)
			require.Regexp(t, fmt.Sprintf(`^event %s was not queued again: a delivery of the event is still under way: job \d+ %s; redeliver it once that delivery has ended$`, id, where), apperr.From(err).Message)
			require.Len(t, tb.unfinished(t, id), 1, "no second delivery chain")
		}

		// A failed event (no job left) is redelivered by two operators at
		// once, before any instance works jobs: one chain is queued.
		gaveUp := &store.WebhookEvent{ID: "evt_gaveup", AppID: tb.appID, Environment: store.EnvLive, Type: webhook.Test,
			Payload: `{"id":"evt_gaveup"}`, Status: store.WebhookFailed, Attempts: webhook.MaxAttempts, CreatedAt: time.Now().UTC()}
		require.NoError(t, store.InsertWebhookEvent(ctx, db, gaveUp))
		errs := make(chan error, 2)
		for range 2 {
			go func() { errs <- tb.hooks.Redeliver(ctx, gaveUp.ID) }()
		}
		first, second := <-errs, <-errs
		if first != nil {
			first, second = second, first
		}
		require.NoError(t, first)
		require.ErrorIs(t, second, webhook.ErrDeliveryPending)
		require.Len(t, tb.unfinished(t, gaveUp.ID), 1)
		refused(t, gaveUp.ID, `is available, about to make attempt 1 of 10`)

		tb.start(t)
		waitFor(t, "the redelivery", func() bool { return tb.event(t, gaveUp.ID).Status == store.WebhookDelivered })
		require.Equal(t, 1, tb.rc.deliveries(gaveUp.ID))

		t.Run("ErrDeliveryPendingWaitingToRetry", func(t *testing.T) {
			tb.rc.answerOthersWith(http.StatusServiceUnavailable) // from the first attempt on
			id := tb.emit(t)
			tb.rc.answerWith(id, http.StatusServiceUnavailable)
			tb.rc.answerOthersWith(http.StatusOK)
			waitFor(t, "the first attempt to fail", func() bool {
				js := tb.jobsOf(t, id)
				return len(js) == 1 && js[0].State == rivertype.JobStateRetryable
			})
			refused(t, id, `will make attempt 2 of 10 at \S+`)

			now := time.Now().UTC()
			tb.setJob(t, &riverdriver.JobUpdateFullParams{ID: tb.onlyJob(t, id).ID,
				StateDoUpdate: true, State: rivertype.JobStateRunning, AttemptDoUpdate: true, Attempt: 2,
				AttemptedAtDoUpdate: true, AttemptedAt: &now})
			refused(t, id, `is running attempt 2 of 10 since \S+ \(if its instance died, it is retried after 1m30s\)`)

			// The chain ends without recording an outcome (its job was
			// cancelled): the event can be redelivered.
			tb.setJob(t, &riverdriver.JobUpdateFullParams{ID: tb.onlyJob(t, id).ID,
				StateDoUpdate: true, State: rivertype.JobStateCancelled, FinalizedAtDoUpdate: true, FinalizedAt: &now})
			tb.rc.answerWith(id, http.StatusOK)
			require.NoError(t, tb.hooks.Redeliver(ctx, id))
			waitFor(t, "the redelivery", func() bool { return tb.event(t, id).Status == store.WebhookDelivered })
			require.Equal(t, 2, tb.rc.deliveries(id))
		})
		t.Run("OKRightAfterDelivery", func(t *testing.T) {
			// The outcome is recorded a moment before River marks the job
			// finished; an operator acting on it at once is not refused.
			id := tb.emit(t)
			waitFor(t, "the delivery", func() bool { return tb.event(t, id).Status == store.WebhookDelivered })
			require.NoError(t, tb.hooks.Redeliver(ctx, id))
			waitFor(t, "the redelivery", func() bool {
				ev := tb.event(t, id)
				return ev.Status == store.WebhookDelivered && ev.Attempts == 2
			})
			require.Equal(t, 2, tb.rc.deliveries(id))
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			ae := apperr.From(tb.hooks.Redeliver(ctx, "evt_nope"))
			require.Equal(t, apperr.NotFound, ae.Code)
			require.Equal(t, "webhook event evt_nope does not exist", ae.Message)
		})
	})
}

// TestPurge: the purge runs as a River periodic job, scheduled by the
// elected leader only (two instances, one job), and deletes expired
// idempotency keys and portal sessions while keeping live ones.
func TestPurge(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		tb := setup(t, db, fastConfig())
		ctx, now := context.Background(), time.Now().UTC()
		keys := map[string]time.Time{"expired": now.Add(-time.Minute), "live": now.Add(time.Hour)}
		for key, expires := range keys {
			_, err := store.InsertIdempotencyRecord(ctx, db, &store.IdempotencyRecord{AppID: tb.appID, Environment: store.EnvTest,
				Key: key, Fingerprint: "f", State: store.IdempotencyDone, Owner: "o", LockedUntil: now, CreatedAt: now.Add(-time.Hour), ExpiresAt: expires})
			require.NoError(t, err)
			require.NoError(t, store.InsertSession(ctx, db, &store.PortalSession{TokenHash: key, AccountID: tb.accountID,
				CreatedAt: now.Add(-time.Hour), ExpiresAt: expires}))
		}
		remaining := func() (keys, sessions []string) {
			require.NoError(t, db.NewSelect().Model((*store.IdempotencyRecord)(nil)).Column("key").Order("key").Scan(ctx, &keys))
			require.NoError(t, db.NewSelect().Model((*store.PortalSession)(nil)).Column("token_hash").Order("token_hash").Scan(ctx, &sessions))
			return keys, sessions
		}
		purges := func() []*rivertype.JobRow {
			res, err := tb.runner.inserter.JobList(ctx, river.NewJobListParams().Kinds(purgeArgs{}.Kind()))
			require.NoError(t, err)
			return res.Jobs
		}

		// A second instance on the same database: only the leader schedules.
		orders := &checkout.Service{DB: db, Webhooks: tb.hooks, Now: time.Now, Config: checkout.DefaultConfig()}
		other, err := New(db, tb.hooks, orders, &tickets.Service{DB: db, Now: time.Now}, &idempotency.Service{DB: db, Now: time.Now}, &accounts.Service{DB: db, Now: time.Now}, nil, nil, fastConfig(), discard)
		require.NoError(t, err)
		tb.start(t)
		(&testBundle{runner: other}).start(t)
		waitFor(t, "the purge job to complete", func() bool {
			js := purges()
			return len(js) > 0 && js[0].State == rivertype.JobStateCompleted
		})
		keysLeft, sessionsLeft := remaining()
		require.Equal(t, []string{"live"}, keysLeft)
		require.Equal(t, []string{"live"}, sessionsLeft)

		js := purges()
		require.Len(t, js, 1, "one instance, the leader, schedules the purge")
		var meta map[string]any
		require.NoError(t, json.Unmarshal(js[0].Metadata, &meta))
		require.Equal(t, true, meta["periodic"], "inserted by River's periodic job enqueuer")
		require.Equal(t, purgeArgs{}.Kind(), meta["river:periodic_job_id"])
	})
}

func TestSnoozeFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		metadata string
		around   time.Duration
	}{
		{"OKFirst", `{}`, time.Second},
		{"OKNoMetadata", ``, time.Second},
		{"OKThird", `{"snoozes": 2}`, 4 * time.Second},
		{"OKAtMost", `{"snoozes": 40}`, snoozeMax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seen := map[time.Duration]bool{}
			for range 100 {
				d := snoozeFor(&rivertype.JobRow{Metadata: []byte(tc.metadata)})
				require.GreaterOrEqual(t, d, tc.around/2)
				require.Less(t, d, tc.around*3/2)
				seen[d] = true
			}
			require.Greater(t, len(seen), 50, "spread, so a burst does not come back at once")
		})
	}
}

// TestEnqueueBehind: the delivery job of a backlogged app's event gets a
// lower River priority than others, so every other app's job is fetched
// first however many of its jobs wait.
func TestEnqueueBehind(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		tb := setup(t, db, fastConfig())
		ctx := context.Background()
		for _, tc := range []struct {
			id       string
			behind   bool
			priority int
		}{{"evt_now", false, 1}, {"evt_behind", true, 2}} {
			require.NoError(t, store.InsertWebhookEvent(ctx, db, &store.WebhookEvent{ID: tc.id, AppID: tb.appID, Environment: store.EnvLive,
				Type: webhook.Test, Payload: `{}`, Status: store.WebhookPending, CreatedAt: time.Now().UTC()}))
			require.NoError(t, db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				return tb.runner.EnqueueDeliveries(ctx, tx, []webhook.Delivery{{EventID: tc.id, EndpointID: "we_x", Behind: tc.behind}})
			}))
			job := tb.onlyJob(t, tc.id)
			require.Equal(t, tc.priority, job.Priority, tc.id)
			require.Equal(t, QueueWebhooks, job.Queue)
		}
	})
}
