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
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// receiver is a webhook endpoint that records what it gets and answers
// status.
type receiver struct {
	srv    *httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []http.Header
	bodies [][]byte
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.status.Store(http.StatusOK)
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got, rc.bodies = append(rc.got, r.Header.Clone()), append(rc.bodies, b)
		rc.mu.Unlock()
		w.WriteHeader(int(rc.status.Load()))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

func (rc *receiver) last() (http.Header, []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[len(rc.got)-1], rc.bodies[len(rc.bodies)-1]
}

// fanBundle is a webhook service over a fresh app whose jobs are
// recorded, not run: the test works each delivery with Deliver, as the
// job does.
type fanBundle struct {
	db       *store.DB
	clock    *clock
	hooks    *webhook.Service
	app      *provision.NewApp
	mu       sync.Mutex
	queued   []webhook.Delivery
	notified []string
}

func setupFan(t *testing.T, db *store.DB, legacyURL string) *fanBundle {
	t.Helper()
	fb := &fanBundle{db: db, clock: &clock{now: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)}}
	ctx := context.Background()
	prov := &provision.Service{DB: db, Now: fb.clock.Now, AllowPrivateWebhooks: true}
	acc, err := prov.CreateAccount(ctx, provision.AccountInput{Name: "Partner", Email: fmt.Sprintf("fan-%d@example.com", accounts.Add(1))})
	require.NoError(t, err)
	fb.app, err = prov.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Shop", WebhookURL: legacyURL})
	require.NoError(t, err)
	fb.hooks = &webhook.Service{DB: db, Now: fb.clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Client: webhook.NewClient(true), AllowPrivate: true, Slots: webhook.NewSlots(4, 8), CheckURL: prov.CheckWebhookURL,
		Enqueue: func(_ context.Context, _ bun.Tx, ds []webhook.Delivery) error {
			fb.mu.Lock()
			defer fb.mu.Unlock()
			fb.queued = append(fb.queued, ds...)
			return nil
		},
		NotifyDisabled: func(_ context.Context, _ bun.Tx, id string) error {
			fb.mu.Lock()
			defer fb.mu.Unlock()
			fb.notified = append(fb.notified, id)
			return nil
		}}
	return fb
}

// take returns the deliveries queued since the last call.
func (fb *fanBundle) take() []webhook.Delivery {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	out := fb.queued
	fb.queued = nil
	return out
}

func (fb *fanBundle) emit(t *testing.T, env, typ string) string {
	t.Helper()
	var id string
	require.NoError(t, fb.db.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		id, err = fb.hooks.Emit(ctx, tx, webhook.Event{AppID: fb.app.App.ID, Environment: env, Type: typ, Data: map[string]any{"n": 1}})
		return err
	}))
	return id
}

func (fb *fanBundle) endpoint(t *testing.T, env, url string, events ...string) *webhook.Endpoint {
	t.Helper()
	in := webhook.EndpointInput{URL: &url}
	if len(events) > 0 {
		in.EnabledEvents = events
	}
	ep, err := fb.hooks.CreateEndpoint(context.Background(), fb.app.App.ID, env, in)
	require.NoError(t, err)
	require.NotNil(t, ep.Secret)
	return ep
}

// deliverAll works every queued delivery once and returns them.
func (fb *fanBundle) deliverAll(t *testing.T) []webhook.Delivery { return fb.deliver(t, false) }

// deliver works every queued delivery once, as its last attempt when last.
func (fb *fanBundle) deliver(t *testing.T, last bool) []webhook.Delivery {
	t.Helper()
	ds := fb.take()
	for _, d := range ds {
		_ = fb.hooks.Deliver(context.Background(), d.EventID, d.EndpointID, last)
	}
	return ds
}

func endpointsOf(ds []webhook.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.EndpointID)
	}
	return out
}

// TestFanOut: an event goes to every enabled endpoint of its app and
// environment whose filter takes it, each signed with its own secret, and
// to no other: not a filtered endpoint, not the other environment's.
func TestFanOut(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		legacy, all, orders, door, liveRC := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
		fb := setupFan(t, db, legacy.srv.URL)
		epAll := fb.endpoint(t, store.EnvTest, all.srv.URL, "*")
		epOrders := fb.endpoint(t, store.EnvTest, orders.srv.URL, webhook.OrderPaid, webhook.OrderFailed)
		epDoor := fb.endpoint(t, store.EnvTest, door.srv.URL, webhook.TicketCheckedIn)
		fb.endpoint(t, store.EnvLive, liveRC.srv.URL)

		list, err := fb.hooks.Endpoints(ctx, fb.app.App.ID, store.EnvTest)
		require.NoError(t, err)
		require.Len(t, list, 4, "the app's URL is an endpoint too")
		require.Equal(t, legacy.srv.URL, list[0].URL)
		require.Equal(t, []string{"*"}, list[0].EnabledEvents)
		for _, ep := range list {
			require.Nil(t, ep.Secret, "a list shows no secret")
		}

		id := fb.emit(t, store.EnvTest, webhook.OrderPaid)
		ds := fb.deliverAll(t)
		require.ElementsMatch(t, []string{list[0].ID, epAll.ID, epOrders.ID}, endpointsOf(ds), "one delivery per matching endpoint")
		require.Equal(t, 1, legacy.count())
		require.Equal(t, 1, all.count())
		require.Equal(t, 1, orders.count())
		require.Zero(t, door.count(), "a filtered endpoint never receives another type")
		require.Zero(t, liveRC.count(), "the live endpoint never receives test events")
		for rc, secret := range map[*receiver]string{legacy: fb.app.WebhookSecret, all: *epAll.Secret, orders: *epOrders.Secret} {
			h, body := rc.last()
			require.NoError(t, verify.VerifyAt(secret, h, body, fb.clock.Now()))
			require.NoError(t, verify.VerifyStandardAt(secret, h, body, fb.clock.Now()))
			require.Equal(t, id, h.Get(verify.HeaderEventID))
		}
		ev, err := fb.hooks.Event(ctx, fb.app.App.ID, store.EnvTest, id)
		require.NoError(t, err)
		require.Equal(t, store.WebhookDelivered, ev.Status)
		require.Len(t, ev.Deliveries, 3)
		for _, d := range ev.Deliveries {
			require.Equal(t, store.WebhookDelivered, d.Status)
			require.Len(t, d.AttemptHistory, 1)
			require.EqualValues(t, http.StatusOK, *d.AttemptHistory[0].HTTPStatus)
		}

		fb.emit(t, store.EnvTest, webhook.TicketCheckedIn)
		require.ElementsMatch(t, []string{list[0].ID, epAll.ID, epDoor.ID}, endpointsOf(fb.deliverAll(t)))
		require.Equal(t, 1, door.count())
		require.Equal(t, 1, orders.count(), "the order endpoint got no door event")
	})
}

// TestEndpointIsolation: one endpoint failing, for days, disables that
// endpoint alone (the owner is notified once); the app's other endpoints
// keep receiving, and its failures are no one else's.
func TestEndpointIsolation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		good, bad := newReceiver(t), newReceiver(t)
		bad.status.Store(http.StatusBadGateway)
		fb := setupFan(t, db, "")
		epGood := fb.endpoint(t, store.EnvLive, good.srv.URL)
		epBad := fb.endpoint(t, store.EnvLive, bad.srv.URL)
		for range 10 {
			fb.clock.advance(8 * time.Hour)
			fb.emit(t, store.EnvLive, webhook.OrderPaid)
			fb.deliver(t, true) // each delivery's last attempt: it ends failed
		}
		require.Equal(t, 10, good.count(), "the healthy endpoint got every event")
		require.Equal(t, []string{epBad.ID}, fb.notified, "the owner is told once, of the failing endpoint")
		bads, err := fb.hooks.Endpoint(ctx, fb.app.App.ID, store.EnvLive, epBad.ID)
		require.NoError(t, err)
		require.Equal(t, webhook.StatusDisabled, bads.Status)
		require.Equal(t, webhook.DisabledFailing, *bads.DisabledReason)
		goods, err := fb.hooks.Endpoint(ctx, fb.app.App.ID, store.EnvLive, epGood.ID)
		require.NoError(t, err)
		require.Equal(t, webhook.StatusEnabled, goods.Status)

		// Emitted while disabled: recorded as not sent to it; recover, once
		// it is enabled again, sends it.
		bad.status.Store(http.StatusOK)
		fb.clock.advance(time.Minute)
		missed := fb.emit(t, store.EnvLive, webhook.OrderPaid)
		require.Equal(t, []string{epGood.ID}, endpointsOf(fb.deliverAll(t)))
		ev, err := fb.hooks.Event(ctx, fb.app.App.ID, store.EnvLive, missed)
		require.NoError(t, err)
		require.Equal(t, store.WebhookFailed, ev.Status)
		_, err = fb.hooks.Recover(ctx, fb.app.App.ID, store.EnvLive, epBad.ID, fb.clock.Now().Add(-time.Hour))
		requireErr(t, err, apperr.ValidationFailed, fmt.Sprintf("Deliveries to webhook endpoint %s are disabled since %s, after 10 failed deliveries in a row since %s: enable the endpoint before recovering its events",
			epBad.ID, fb.clock.Now().Add(-time.Minute).Format(time.RFC3339), fb.clock.Now().Add(-72*time.Hour-time.Minute).Format(time.RFC3339)))
		_, err = fb.hooks.UpdateEndpoint(ctx, fb.app.App.ID, store.EnvLive, epBad.ID, webhook.EndpointInput{Status: ptr(webhook.StatusEnabled)})
		require.NoError(t, err)
		n, err := fb.hooks.Recover(ctx, fb.app.App.ID, store.EnvLive, epBad.ID, fb.clock.Now().Add(-30*time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the event after since")
		require.Equal(t, []string{epBad.ID}, endpointsOf(fb.deliverAll(t)))
		ev, err = fb.hooks.Event(ctx, fb.app.App.ID, store.EnvLive, missed)
		require.NoError(t, err)
		require.Equal(t, store.WebhookDelivered, ev.Status)
		n, err = fb.hooks.Recover(ctx, fb.app.App.ID, store.EnvLive, epBad.ID, fb.clock.Now().Add(-29*24*time.Hour))
		require.NoError(t, err)
		require.Equal(t, 10, n, "the ten failed events of the last 30 days")
	})
}

// TestEndpointChanges: disable and enable by hand, rotation with an
// overlap in which both secrets sign, deletion stopping pending
// deliveries, and the 16 endpoints an environment may have.
func TestEndpointChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		rc := newReceiver(t)
		fb := setupFan(t, db, "")
		app := fb.app.App.ID
		ep := fb.endpoint(t, store.EnvTest, rc.srv.URL)

		t.Run("OKDisabledByHand", func(t *testing.T) {
			off, err := fb.hooks.UpdateEndpoint(ctx, app, store.EnvTest, ep.ID, webhook.EndpointInput{Status: ptr(webhook.StatusDisabled)})
			require.NoError(t, err)
			require.Equal(t, webhook.DisabledManual, *off.DisabledReason)
			fb.emit(t, store.EnvTest, webhook.OrderPaid)
			require.Empty(t, fb.take(), "nothing queued for a disabled endpoint")
			_, err = fb.hooks.EmitTest(ctx, app, store.EnvTest)
			requireErr(t, err, apperr.ValidationFailed, "Webhook endpoint "+ep.ID+" is disabled: enable the endpoint before sending a test event")
			on, err := fb.hooks.UpdateEndpoint(ctx, app, store.EnvTest, ep.ID, webhook.EndpointInput{Status: ptr(webhook.StatusEnabled)})
			require.NoError(t, err)
			require.Nil(t, on.DisabledReason)
		})
		t.Run("OKRotationOverlap", func(t *testing.T) {
			rotated, err := fb.hooks.RotateEndpointSecret(ctx, app, store.EnvTest, ep.ID)
			require.NoError(t, err)
			require.NotEqual(t, *ep.Secret, *rotated.Secret)
			fb.emit(t, store.EnvTest, webhook.OrderPaid)
			fb.deliverAll(t)
			h, body := rc.last()
			require.NoError(t, verify.VerifyStandardAt(*rotated.Secret, h, body, fb.clock.Now()))
			require.NoError(t, verify.VerifyStandardAt(*ep.Secret, h, body, fb.clock.Now()), "the old secret still verifies during the overlap")
			require.NoError(t, verify.VerifyAt(*rotated.Secret, h, body, fb.clock.Now()), "X-SVC-Webhook-Signature carries the new one")

			fb.clock.advance(webhook.SecretOverlap)
			fb.emit(t, store.EnvTest, webhook.OrderPaid)
			fb.deliverAll(t)
			h, body = rc.last()
			require.NoError(t, verify.VerifyStandardAt(*rotated.Secret, h, body, fb.clock.Now()))
			require.ErrorIs(t, verify.VerifyStandardAt(*ep.Secret, h, body, fb.clock.Now()), verify.ErrSignature, "after 24 hours only the new one")
		})
		t.Run("OKDeleteStopsPendingDeliveries", func(t *testing.T) {
			doomed := fb.endpoint(t, store.EnvTest, rc.srv.URL)
			id := fb.emit(t, store.EnvTest, webhook.OrderPaid)
			ds := fb.take()
			require.Len(t, ds, 2)
			require.NoError(t, fb.hooks.DeleteEndpoint(ctx, app, store.EnvTest, doomed.ID))
			before := rc.count()
			for _, d := range ds {
				err := fb.hooks.Deliver(ctx, d.EventID, d.EndpointID, false)
				if d.EndpointID == doomed.ID {
					require.ErrorIs(t, err, webhook.ErrGiveUp)
				}
			}
			require.Equal(t, before+1, rc.count(), "only the endpoint still there")
			ev, err := fb.hooks.Event(ctx, app, store.EnvTest, id)
			require.NoError(t, err)
			require.Len(t, ev.Deliveries, 2, "the deleted endpoint's delivery stays in the log")
			_, err = fb.hooks.Endpoint(ctx, app, store.EnvTest, doomed.ID)
			require.Equal(t, apperr.WebhookEndpointNotFound, apperr.CodeOf(err))
		})
		t.Run("ErrSeventeenth", func(t *testing.T) {
			list, err := fb.hooks.Endpoints(ctx, app, store.EnvTest)
			require.NoError(t, err)
			for range webhook.MaxEndpoints - len(list) {
				fb.endpoint(t, store.EnvTest, rc.srv.URL)
			}
			_, err = fb.hooks.CreateEndpoint(ctx, app, store.EnvTest, webhook.EndpointInput{URL: ptr(rc.srv.URL)})
			requireErr(t, err, apperr.ValidationFailed, "This app already has 16 webhook endpoints in the test environment, the most it may have.")
			fb.endpoint(t, store.EnvLive, rc.srv.URL) // the other environment counts apart
		})
	})
}

// TestFanOutCost: recording an event costs the same statements, in the
// change's one transaction, whether it goes to one endpoint or to 16, and
// its delivery jobs are queued in one batch.
func TestFanOutCost(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		counter := storetest.Count(db)
		cost := func(endpoints int) (statements int, batches [][]webhook.Delivery) {
			t.Helper()
			fb := setupFan(t, db, "")
			for range endpoints {
				fb.endpoint(t, store.EnvLive, "https://hooks.example.com/in")
			}
			var calls [][]webhook.Delivery
			fb.hooks.Enqueue = func(_ context.Context, _ bun.Tx, ds []webhook.Delivery) error {
				calls = append(calls, ds)
				return nil
			}
			counter.Reset()
			fb.emit(t, store.EnvLive, webhook.OrderPaid)
			return counter.N(), calls
		}
		one, oneBatches := cost(1)
		sixteen, batches := cost(webhook.MaxEndpoints)
		t.Logf("statements to record an event: %d for 1 endpoint, %d for 16", one, sixteen)
		require.Equal(t, one, sixteen, "no statement per endpoint")
		require.Len(t, oneBatches, 1)
		require.Len(t, batches, 1, "one batch of jobs")
		require.Len(t, batches[0], webhook.MaxEndpoints)
	})
}
