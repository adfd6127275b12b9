// Package checkouttest builds, for the tests of the layers above checkout
// (resolvers, rest), a real checkout service over a fresh database holding
// the demo catalog and app: webhooks are recorded but not delivered, and
// live payments go to the development provider.
package checkouttest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// Fixture is one test's checkout service and the demo data behind it.
type Fixture struct {
	DB      *store.DB
	Service *checkout.Service
	Demo    *seed.Result
	// Now is the services' clock, which stands still.
	Now time.Time
}

// MustNew seeds db with the demo catalog and app and returns a checkout
// service over it.
func MustNew(tb testing.TB, db *store.DB) *Fixture {
	tb.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	clock := func() time.Time { return now }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	demo, err := seed.Demo(context.Background(), db, &provision.Service{DB: db, Now: clock, Password: CheapPasswords}, now)
	if err != nil {
		tb.Fatalf("checkouttest: seed: %v", err)
	}
	hooks := &webhook.Service{DB: db, Now: clock, Log: log,
		Enqueue: func(context.Context, bun.Tx, []webhook.Delivery) error { return nil }}
	svc := &checkout.Service{
		DB: db, Idempotency: &idempotency.Service{DB: db, Now: clock}, Webhooks: hooks, Tickets: NewTickets(db, clock),
		Payments: devpay.New("http://boxoffice.test", db, clock), Now: clock, Config: checkout.DefaultConfig(),
	}
	return &Fixture{DB: db, Service: svc, Demo: demo, Now: now}
}

// CheapPasswords are password costs for fixtures: the demo account has a
// password, and hashing it at production cost (19 MiB of argon2id, every
// byte of it checked by the race detector) took about a second of CPU per
// seed, most of the checkout package's. The hash format is the same.
var CheapPasswords = auth.PasswordParams{Memory: 256, Time: 1, Threads: 1}

// NewTickets returns a tickets service over db whose ticket emails are
// queued in the order but never sent (no job runner).
func NewTickets(db *store.DB, now func() time.Time) *tickets.Service {
	return &tickets.Service{DB: db, Now: now, PublicBaseURL: checkout.DefaultConfig().PublicBaseURL,
		EnqueueEmail: func(context.Context, bun.Tx, int64) error { return nil }}
}

// ID returns the id of a demo event, date or ticket by its reference, as
// the APIs take it.
func (f *Fixture) ID(tb testing.TB, ref string) int {
	tb.Helper()
	c := f.Demo.Catalog
	for _, m := range []map[string]int64{c.Events, c.EventDates, c.Tickets} {
		if id, ok := m[ref]; ok {
			return int(id)
		}
	}
	tb.Fatalf("checkouttest: no demo row %s", ref)
	return 0
}
