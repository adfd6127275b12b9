package webhook_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// healthBundle is a webhook service over a fresh app whose receiver
// answers status; deliveries are made by calling Deliver, as the job does.
type healthBundle struct {
	db     *store.DB
	clock  *clock
	hooks  *webhook.Service
	prov   *provision.Service
	app    *store.App
	status atomic.Int32
	hits   atomic.Int32
}

// accounts numbers the test's accounts (their emails must differ).
var accounts atomic.Int64

func setupHealth(t *testing.T, db *store.DB) *healthBundle {
	t.Helper()
	hb := &healthBundle{db: db, clock: &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}}
	hb.status.Store(http.StatusServiceUnavailable)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hb.hits.Add(1)
		w.WriteHeader(int(hb.status.Load()))
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	hb.prov = &provision.Service{DB: db, Now: hb.clock.Now, AllowPrivateWebhooks: true}
	acc, err := hb.prov.CreateAccount(ctx, provision.AccountInput{Name: "Partner",
		Email: fmt.Sprintf("partner-%d@example.com", accounts.Add(1))})
	require.NoError(t, err)
	app, err := hb.prov.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Shop", WebhookURL: srv.URL + "/hooks"})
	require.NoError(t, err)
	hb.app = app.App
	hb.hooks = &webhook.Service{DB: db, Now: hb.clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Client: webhook.NewClient(true), AllowPrivate: true, Slots: webhook.NewSlots(4, 8),
		Enqueue: func(context.Context, bun.Tx, []webhook.Delivery) error { return nil }}
	return hb
}

// emit records an order event, as an order change does (whether or not
// deliveries are disabled).
func (hb *healthBundle) emit(t *testing.T) string {
	t.Helper()
	var id string
	require.NoError(t, hb.db.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		id, err = hb.hooks.Emit(ctx, tx, webhook.Event{AppID: hb.app.ID, Environment: store.EnvLive, Type: webhook.OrderPaid,
			Data: map[string]any{"order": map[string]any{"reference": "ord_x"}}})
		return err
	}))
	return id
}

// fail makes n failed deliveries of new events, every gap apart.
func (hb *healthBundle) fail(t *testing.T, n int, gap time.Duration) {
	t.Helper()
	for range n {
		hb.clock.advance(gap)
		require.Error(t, hb.hooks.Deliver(context.Background(), hb.emit(t), "", false))
	}
}

func (hb *healthBundle) health(t *testing.T) *store.WebhookHealth {
	t.Helper()
	h, err := hb.hooks.Health(context.Background(), hb.app.ID)
	require.NoError(t, err)
	return h
}

func (hb *healthBundle) event(t *testing.T, id string) *store.WebhookEvent {
	t.Helper()
	ev, err := store.WebhookEventByID(context.Background(), hb.db, id)
	require.NoError(t, err)
	return ev
}

// TestEndpointHealth: an endpoint whose every delivery fails for
// DisableAfter (and at least ten times) is disabled, as Stripe and Svix do:
// events are still recorded but not sent, and the partner is told why
// until they resume deliveries or set another URL. One success ends a
// streak.
func TestEndpointHealth(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t.Run("OKDisabledAfterDaysOfFailures", func(t *testing.T) {
			hb := setupHealth(t, db)
			start := hb.clock.Now()
			hb.fail(t, 9, 9*time.Hour) // 81 h, nine failures: not yet
			h := hb.health(t)
			require.EqualValues(t, 9, h.Failures)
			require.True(t, h.FailingSince.Equal(start.Add(9*time.Hour)))
			require.Equal(t, "receiver answered 503", h.LastError)
			require.True(t, h.DisabledAt.IsZero())

			hb.fail(t, 1, time.Hour) // the tenth, 73 h into the streak
			h = hb.health(t)
			require.True(t, h.Disabled(hb.app.WebhookURL))
			require.True(t, h.DisabledAt.Equal(hb.clock.Now()))

			hits := hb.hits.Load()
			id := hb.emit(t)
			err := hb.hooks.Deliver(ctx, id, "", false)
			require.ErrorIs(t, err, webhook.ErrGiveUp, "the job ends")
			require.Equal(t, hits, hb.hits.Load(), "nothing is sent")
			ev := hb.event(t, id)
			require.Equal(t, store.WebhookFailed, ev.Status)
			require.Zero(t, ev.Attempts, "no attempt was made, and none is recorded")
			since := "2026-11-24T18:00:00Z"
			reason := fmt.Sprintf("deliveries to the webhook URL are disabled since %s, after 10 failed deliveries in a row since %s",
				hb.clock.Now().Format(time.RFC3339), since)
			require.Equal(t, "not sent: "+reason, *ev.LastError)

			_, err = hb.hooks.EmitTest(ctx, hb.app.ID, store.EnvTest)
			require.NoError(t, err, "the test environment's endpoint has a streak of its own")
			_, err = hb.hooks.EmitTest(ctx, hb.app.ID, store.EnvLive)
			requireErr(t, err, apperr.ValidationFailed, "D"+reason[1:]+": resume deliveries (or set another webhook URL) before sending a test event")
			requireErr(t, hb.hooks.Redeliver(ctx, id), apperr.ValidationFailed,
				"D"+reason[1:]+": resume deliveries (or set another webhook URL) before redelivering an event")

			// The partner fixes the receiver and resumes.
			hb.status.Store(http.StatusOK)
			require.NoError(t, hb.hooks.Resume(ctx, hb.app.ID))
			require.Nil(t, hb.health(t))
			require.NoError(t, hb.hooks.Redeliver(ctx, id))
			require.NoError(t, hb.hooks.Deliver(ctx, id, "", false))
			require.Equal(t, store.WebhookDelivered, hb.event(t, id).Status)
			requireErr(t, hb.hooks.Resume(ctx, hb.app.ID), apperr.ValidationFailed,
				fmt.Sprintf("Deliveries to the webhook URL of app %d are not disabled.", hb.app.ID))
			entries, err := audit.List(ctx, db, hb.app.AccountID, 100)
			require.NoError(t, err)
			require.Equal(t, audit.WebhookResume, entries[1].Action)
			require.Equal(t, "after 10 failed deliveries in a row since "+since, entries[1].Detail)
			require.Equal(t, store.ActorOperator, entries[1].Actor)
		})
		t.Run("OKQuickFailuresDoNotDisable", func(t *testing.T) {
			hb := setupHealth(t, db)
			hb.fail(t, 30, time.Minute) // a bad half hour is not days
			h := hb.health(t)
			require.EqualValues(t, 30, h.Failures)
			require.False(t, h.Disabled(hb.app.WebhookURL))
		})
		t.Run("OKFewFailuresDoNotDisable", func(t *testing.T) {
			hb := setupHealth(t, db)
			hb.fail(t, 2, 0)
			hb.fail(t, 1, 5*24*time.Hour) // a quiet endpoint, down twice days apart
			require.False(t, hb.health(t).Disabled(hb.app.WebhookURL))
		})
		t.Run("OKSuccessEndsTheStreak", func(t *testing.T) {
			hb := setupHealth(t, db)
			hb.fail(t, 9, 9*time.Hour)
			hb.status.Store(http.StatusNoContent)
			require.NoError(t, hb.hooks.Deliver(ctx, hb.emit(t), "", false))
			require.Nil(t, hb.health(t))
			hb.status.Store(http.StatusInternalServerError)
			hb.fail(t, 1, 9*time.Hour)
			h := hb.health(t)
			require.EqualValues(t, 1, h.Failures, "a new streak")
			require.True(t, h.FailingSince.Equal(hb.clock.Now()))
		})
		t.Run("OKAnotherURLIsANewEndpoint", func(t *testing.T) {
			hb := setupHealth(t, db)
			hb.fail(t, 10, 8*time.Hour)
			require.True(t, hb.health(t).Disabled(hb.app.WebhookURL))
			// The partner points the app elsewhere: the old URL's streak
			// stops nothing, and the new URL's first failure starts anew.
			u := hb.app.WebhookURL + "/v2"
			_, err := hb.prov.UpdateApp(ctx, hb.app.ID, provision.AppUpdate{WebhookURL: &u})
			require.NoError(t, err)
			hb.app.WebhookURL = u
			require.Nil(t, hb.health(t))
			hits := hb.hits.Load()
			hb.fail(t, 1, time.Hour)
			require.Equal(t, hits+1, hb.hits.Load(), "sent to the new URL")
			h := hb.health(t)
			require.Equal(t, u, h.URL)
			require.EqualValues(t, 1, h.Failures)
			require.True(t, h.DisabledAt.IsZero())
		})
		t.Run("OKGiveUpIsNoFailureOfTheEndpoint", func(t *testing.T) {
			hb := setupHealth(t, db)
			u := "http://hooks.example/x"
			hb.hooks.AllowPrivate = false // http:// refused before any request
			_, err := hb.prov.UpdateApp(ctx, hb.app.ID, provision.AppUpdate{WebhookURL: &u})
			require.NoError(t, err)
			require.ErrorIs(t, hb.hooks.Deliver(ctx, hb.emit(t), "", false), webhook.ErrGiveUp)
			require.Nil(t, hb.health(t))
		})
	})
}

func requireErr(t *testing.T, err error, code apperr.Code, msg string) {
	t.Helper()
	require.Error(t, err)
	e := apperr.From(err)
	require.Equal(t, code, e.Code, "error: %v", err)
	require.Equal(t, msg, e.Message)
}
