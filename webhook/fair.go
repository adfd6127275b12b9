package webhook

import (
	"errors"
	"sync"
	"time"
)

// ErrAppBusy is what Deliver answers, without making an attempt, when the
// event's app's account already has its share of this instance's delivery
// workers:
// the job waits and tries again (River snoozes it), not counted as an
// attempt.
var ErrAppBusy = errors.New("webhook: the account's deliveries already use its share of the workers")

// SlowAnswer is how long a receiver may take to answer and still count as
// healthy for Slots (a success that took longer counts as struggling).
const SlowAnswer = 5 * time.Second

// DefaultPerApp is how many deliveries of one app run at once on one
// instance by default (WEBHOOK_APP_CONCURRENCY).
const DefaultPerApp = 4

// Slots shares one instance's delivery workers among tenants, so that no
// tenant's receivers — ones that never answer, answer slowly or fail, or
// are sent a burst of events — can occupy the workers other tenants'
// deliveries need. A tenant is an account: all its apps together, so
// making more apps buys no more workers. River (the open-source edition)
// has no concurrency limit per partition of a queue, so the limit is kept
// here, where the account of a job is known:
//
//   - an account has at most perApp deliveries in flight, and perApp is at
//     most half the workers, so one account never holds more than half;
//   - an account whose last delivery on this instance failed or took
//     longer than SlowAnswer (struggling) has at most one in flight, and
//     all struggling accounts together at most half the workers, so
//     however many accounts have bad receivers, half the workers stay for
//     the others.
//
// A delivery refused its slot waits (River snoozes its job), and the
// account is backlogged for a while: its apps' new events are queued
// behind other accounts' (Backlogged), so the queue never has to skip over
// a backlog of them to reach another account's event.
//
// Counts are per instance, as River's MaxWorkers is: with n instances an
// account holds at most n·perApp of n·workers.
type Slots struct {
	perApp     int
	struggling int // most deliveries of struggling apps in flight at once
	now        func() time.Time

	mu sync.Mutex
	// apps are the accounts' slots, by account id.
	apps map[string]*appSlot
	// accountOf is the account of every app seen delivering, so that
	// Backlogged can be asked by app (one entry per app, never dropped:
	// an app's account never changes).
	accountOf map[string]string
	sickIn    int // deliveries of struggling accounts in flight
}

// appSlot is what Slots keeps of an account while it has deliveries in
// flight, a struggling receiver or a recent refusal; it is dropped at the
// next delivery after that, so at most one is kept per account.
type appSlot struct {
	inFlight   int
	struggling bool
	refusedAt  time.Time // the last refusal
}

// BacklogMemory is how long after a refusal an app counts as backlogged.
const BacklogMemory = time.Minute

// NewSlots returns the slots of an instance with workers delivery workers,
// perApp of them at most for one app (capped at half the workers; at
// least 1).
func NewSlots(perApp, workers int) *Slots {
	half := max(workers/2, 1)
	return &Slots{perApp: min(max(perApp, 1), half), struggling: half, now: time.Now,
		apps: map[string]*appSlot{}, accountOf: map[string]string{}}
}

// Backlogged reports whether app's account has more deliveries than its
// share on this instance: its slots are all taken, its receiver is
// struggling, or one of its deliveries was refused a slot within
// BacklogMemory. An app this instance has not delivered for is not.
func (s *Slots) Backlogged(app string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	account, ok := s.accountOf[app]
	if !ok {
		return false
	}
	a := s.apps[account]
	return a != nil && (a.struggling || a.inFlight >= s.perApp || s.now().Sub(a.refusedAt) < BacklogMemory)
}

// PerApp is how many deliveries of one healthy app may run at once.
func (s *Slots) PerApp() int { return s.perApp }

// verdict is what a delivery attempt showed of an endpoint.
type verdict int

const (
	untried    verdict = iota // no request was made: what was known stands
	healthy                   // a 2xx within SlowAnswer
	struggling                // a failure, a timeout, or a slow answer
)

// take reserves a slot for a delivery of app of account. It returns false
// when the account already has its share; otherwise done must be called
// once, when the attempt has ended, with what it showed of the endpoint.
func (s *Slots) take(account, app string) (done func(verdict), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accountOf[app] = account
	a := s.apps[account]
	if a == nil {
		a = &appSlot{}
		s.apps[account] = a
	}
	sick := a.struggling
	if sick && (a.inFlight >= 1 || s.sickIn >= s.struggling) || a.inFlight >= s.perApp {
		a.refusedAt = s.now()
		return nil, false
	}
	a.inFlight++
	if sick {
		s.sickIn++
	}
	var once sync.Once
	return func(v verdict) {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			a.inFlight--
			if sick {
				s.sickIn--
			}
			if v != untried {
				a.struggling = v == struggling
			}
			if a.inFlight == 0 && !a.struggling && s.now().Sub(a.refusedAt) >= BacklogMemory {
				delete(s.apps, account) // healthy, idle, no backlog: nothing to remember
			}
		})
	}, true
}
