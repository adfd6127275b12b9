// Package checkin admits tickets at the door (spec/fulfilment.md section
// 4): it decides each scan, entry or exit, by the spec's reasons in their
// order, records every scan, admitted or rejected, and counts a date's
// door. The rule is written once, in CheckIn, for both APIs. A ticket
// moves in or out with one conditional update of its inside state, so any
// number of concurrent scans, through any number of instances sharing the
// database, admit it once; an admitted entry emits ticket.checked_in to
// the app that sold the order in the same transaction. A date's scans can
// be followed as they are recorded (Feed), each once, in the order they
// became final.
package checkin

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// Reasons a scan is rejected, in the order they are checked.
const (
	// UnknownCode: no ticket has the code in the scanner's environment (a
	// live code read by a test scanner included).
	UnknownCode = "unknown_code"
	// TestTicket: a live scanner read a test ticket's code.
	TestTicket = "test_ticket"
	// WrongEvent: the ticket is for another event.
	WrongEvent = "wrong_event"
	// WrongDate: the ticket is for another date of the event.
	WrongDate = "wrong_date"
	// Void: the ticket is void.
	Void = "void"
	// AlreadyCheckedIn: an entry of a ticket that is inside.
	AlreadyCheckedIn = "already_checked_in"
	// NotInside: an exit of a ticket that is not inside.
	NotInside = "not_inside"
)

// Reasons lists every reason, in the order they are checked.
var Reasons = []string{UnknownCode, TestTicket, WrongEvent, WrongDate, Void, AlreadyCheckedIn, NotInside}

// Service decides and records scans.
type Service struct {
	DB *store.DB
	// Dates finds a date of an event (store.EventDateOfEvent); nil reads
	// the database. The server gives it the catalog cache, so a scan reads
	// no catalog row.
	Dates interface {
		EventDateOfEvent(ctx context.Context, id, eventID int64) (*store.EventDate, error)
	}
	Webhooks *webhook.Service
	// UnknownCodes budgets the scans of codes that match no ticket, per
	// scanner key (keyed by its id): a scan beyond it is refused
	// rate_limit_exceeded and not recorded, so one key guessing codes
	// neither fills the database nor inflates rejected_scans. Scans of
	// real tickets never spend it. nil: no budget.
	UnknownCodes interface {
		Allow(ctx context.Context, key, what string) error
	}
	Now func() time.Time
	// Log hears what a feed's follower could not read; nil is
	// slog.Default().
	Log *slog.Logger
	// Observe, when set, learns each scan recorded (not a replay): its
	// result and reason ("" when admitted). The server gives it its metrics.
	Observe func(result, reason string)
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// Scanner is the door device a scan comes from: a scanner key's id, its
// event and its environment.
type Scanner struct {
	ID          int64
	EventID     int64
	Environment string
}

// View is a Check-in as both APIs, the ticket.checked_in webhook and the
// live feed show it.
type View struct {
	ID        string  `json:"id"`
	Result    string  `json:"result"`
	Reason    *string `json:"reason"`
	Direction string  `json:"direction"`
	Gate      *string `json:"gate"`
	ScannedAt string  `json:"scanned_at"`
	// Offline is true when the scan reached the server more than
	// OfflineAfter after it was made.
	Offline bool `json:"offline"`
	// Ticket is nil for unknown_code.
	Ticket *tickets.View `json:"ticket"`
	// Previous is the admission that stands, for already_checked_in.
	Previous *Previous `json:"previous"`
}

// Previous is the admission that stands: when and at which gate.
type Previous struct {
	ScannedAt string  `json:"scanned_at"`
	Gate      *string `json:"gate"`
}

// Admitted reports whether the scan let the ticket in or out.
func (v *View) Admitted() bool { return v.Result == store.CheckInAdmitted }

// OfflineAfter is how much older than its arrival a scan's scanned_at
// must be for the scan to count as made offline (spec/offline-door.md
// section 3).
const OfflineAfter = 30 * time.Second

// moveAttempts bounds how often a scan decides again after its ticket
// changed under it (another scan, a void). Each retry follows a change
// another transaction committed, so one is almost always enough.
const moveAttempts = 5

// CheckIn decides a scan of sc and records it; a scan made more than
// OfflineAfter before now is recorded offline, and an offline entry of a
// ticket already inside is an offline conflict (Stats). It reports whether the
// answer is the one saved for an earlier scan with the same
// Idempotency-Key (replayed). A scan that is decided answers a View,
// admitted or rejected; only requests that are not scans are errors.
// Order: the key's form, the body, the date, the key's saved answer.
// Errors: invalid_idempotency_key, validation_failed, event_date_not_found
// (not a date of the scanner's event), idempotency_conflict (the key was
// used with another scan), rate_limit_exceeded (a code that matches no
// ticket, beyond the scanner's UnknownCodes budget; nothing is recorded).
//
// A key's saved answer is not looked up first: the scan is decided and
// recorded, and the record's unique key refuses a second scan under the
// same key, which rolls back everything the second one did and answers
// what the first one recorded. A retry costs a little more; every first
// scan, nearly all of them, one statement less.
func (s *Service) CheckIn(ctx context.Context, sc Scanner, r Request) (v *View, replayed bool, err error) {
	if r.Key != "" {
		if err := idempotency.CheckKey(r.Key); err != nil {
			return nil, false, err
		}
	}
	now := s.Now().UTC()
	in, err := validate(r.Input, r.Problems, now)
	if err != nil {
		return nil, false, err
	}
	d, err := s.dateOf(ctx, sc, in.dateID)
	if err != nil {
		return nil, false, err
	}
	in.cancelled = !d.CancelledAt.IsZero()
	var fingerprint string
	if r.Key != "" {
		fingerprint = idempotency.Fingerprint(in.canonical())
	}
	v, err = s.record(ctx, sc, in, r.Key, fingerprint, now)
	if err == nil && s.Observe != nil {
		reason := ""
		if v.Reason != nil {
			reason = *v.Reason
		}
		s.Observe(v.Result, reason)
	}
	if errors.Is(err, store.ErrConflict) && r.Key != "" {
		// A scan under the same key was recorded first (a retry, or the
		// door resending while its first request still ran): everything
		// this one did is rolled back, and it answers what the first one
		// did.
		v, err = s.saved(ctx, sc, r.Key, fingerprint)
		if v == nil && err == nil {
			err = fmt.Errorf("checkin: the scan under an idempotency key of scanner %d vanished", sc.ID)
		}
		return v, v != nil, err
	}
	return v, false, err
}

// saved returns the answer saved for a scanner's key, nil when the key
// is new.
// Errors: idempotency_conflict when the key was used with another scan.
func (s *Service) saved(ctx context.Context, sc Scanner, key, fingerprint string) (*View, error) {
	c, err := store.CheckInByKey(ctx, s.DB, sc.ID, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c.Fingerprint == nil || *c.Fingerprint != fingerprint {
		return nil, apperr.New(apperr.IdempotencyConflict, "This Idempotency-Key was already used with a different scan.")
	}
	return decode(c)
}

// checkDate refuses a date that is not one of the scanner's event's.
// Errors: event_date_not_found.
func (s *Service) checkDate(ctx context.Context, sc Scanner, dateID int64) error {
	_, err := s.dateOf(ctx, sc, dateID)
	return err
}

// dateOf returns a date of the scanner's event. Errors:
// event_date_not_found.
func (s *Service) dateOf(ctx context.Context, sc Scanner, dateID int64) (*store.EventDate, error) {
	var d *store.EventDate
	var err error
	if s.Dates != nil {
		d, err = s.Dates.EventDateOfEvent(ctx, dateID, sc.EventID)
	} else {
		d, err = store.EventDateOfEvent(ctx, s.DB, dateID, sc.EventID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.EventDateNotFound, "Event date %d is not a date of this scanner's event.", dateID)
	}
	return d, err
}

// record decides the scan and writes it, in one transaction: the ticket's
// move, the scan's row, and for an admitted entry the order's touch and
// its ticket.checked_in event. ErrConflict means a scan under the same
// idempotency key was recorded first; nothing of this one remains.
//
// An admitted entry, nearly every scan at a door, is three statements:
// the move with the order's touch, the scan's row with its event, and the
// event's delivery job.
func (s *Service) record(ctx context.Context, sc Scanner, in *scan, key, fingerprint string, now time.Time) (*View, error) {
	var v *View
	err := s.DB.RunInTxNotifyAfter(ctx, func(ctx context.Context, tx bun.Tx) error {
		t, reason, err := s.decide(ctx, tx, sc, in, now)
		if err != nil {
			return err
		}
		row := &store.CheckIn{
			PublicID: newID(), ScannerID: sc.ID, Environment: sc.Environment, EventDateID: in.dateID,
			Direction: in.direction, Gate: in.gate, ScannedAt: in.scannedAt, Result: store.CheckInAdmitted,
			Offline: now.Sub(in.scannedAt) > OfflineAfter, CreatedAt: now,
		}
		if reason != "" {
			row.Result, row.Reason = store.CheckInRejected, &reason
		}
		v = &View{ID: row.PublicID, Result: row.Result, Reason: row.Reason, Direction: row.Direction, Gate: row.Gate,
			ScannedAt: catalog.FormatStamp(row.ScannedAt), Offline: row.Offline}
		if reason != UnknownCode {
			row.TicketID = &t.ID
			v.Ticket = tickets.NewView(&t.IssuedTicket, t.OrderReference)
		}
		if reason == AlreadyCheckedIn {
			if v.Previous, err = standing(ctx, tx, t.ID); err != nil {
				return err
			}
		}
		if key != "" {
			row.IdempotencyKey, row.Fingerprint = &key, &fingerprint
		}
		if v.Admitted() && in.direction == store.CheckInEntry {
			return s.emit(ctx, tx, t, v, row)
		}
		if err := encode(row, v); err != nil {
			return err
		}
		return store.InsertCheckIn(ctx, tx, row)
	})
	return v, err
}

// decide is the rule of the door: the ticket moves in or out (reason "")
// or the scan is rejected for the first of the spec's reasons that holds
// (reject). The move itself (store.MoveAtDoor) is conditional on exactly
// what reject checks, so a scan that will be admitted, nearly all of
// them, is one statement, and no concurrent scan or void can slip between
// a check and the move. A scan that did not move its ticket reads it and
// says why; if nothing in it forbids the move, another transaction
// changed the ticket between the two statements, and the scan tries again.
// t is nil only for unknown_code.
func (s *Service) decide(ctx context.Context, tx bun.Tx, sc Scanner, in *scan, now time.Time) (*store.MovedTicket, string, error) {
	m := store.DoorMove{Code: in.code, Environment: sc.Environment, EventID: sc.EventID, EventDateID: in.dateID,
		Entry: in.direction == store.CheckInEntry, ScannedAt: in.scannedAt, Now: now}
	// Nobody enters a cancelled date: each of its tickets is void at the
	// door (an exit still lets a person out).
	cancelled := in.cancelled && m.Entry
	for range moveAttempts {
		if !cancelled {
			moved, err := store.MoveAtDoor(ctx, tx, m)
			if err != nil || moved != nil {
				return moved, "", err
			}
		}
		t, err := store.DoorTicketByCode(ctx, tx, in.code)
		if errors.Is(err, store.ErrNotFound) {
			if s.UnknownCodes != nil {
				if err := s.UnknownCodes.Allow(ctx, strconv.FormatInt(sc.ID, 10), "scans of codes that match no ticket from this scanner key"); err != nil {
					return nil, "", err
				}
			}
			return nil, UnknownCode, nil
		}
		if err != nil {
			return nil, "", err
		}
		reason := reject(sc, in, t)
		if reason == "" && cancelled {
			reason = Void
		}
		if reason != "" {
			return &store.MovedTicket{DoorTicket: *t}, reason, nil
		}
	}
	return nil, "", fmt.Errorf("checkin: the ticket of a code kept changing under %d scans in a row", moveAttempts)
}

// reject is the reason a scan of t is rejected, in the spec's order, or
// "" when it moves the ticket. store.MoveAtDoor's condition is its "".
func reject(sc Scanner, in *scan, t *store.DoorTicket) string {
	switch {
	case t.Environment != sc.Environment && sc.Environment == store.EnvTest:
		// A test door never learns that a live code exists.
		return UnknownCode
	case t.Environment != sc.Environment:
		return TestTicket
	case t.EventID != sc.EventID:
		return WrongEvent
	case t.EventDateID != in.dateID:
		return WrongDate
	case t.Status == store.TicketVoid:
		return Void
	case in.direction == store.CheckInEntry && t.Inside:
		return AlreadyCheckedIn
	case in.direction == store.CheckInExit && (!t.Inside || in.scannedAt.Before(t.AdmittedAt)):
		// An exit dated before the admission that stands (an offline
		// exit uploaded late) would let out a ticket that came in after
		// it, and let a second person in on it.
		return NotInside
	}
	return ""
}

// standing returns the admission that stands of a ticket inside.
func standing(ctx context.Context, tx bun.Tx, ticketID int64) (*Previous, error) {
	c, err := store.StandingAdmission(ctx, tx, ticketID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &Previous{ScannedAt: catalog.FormatStamp(c.ScannedAt), Gate: c.Gate}, nil
}

// emit records ticket.checked_in for the app that sold t's order, with
// the order's sequence the move took, and the scan's row, in tx.
func (s *Service) emit(ctx context.Context, tx bun.Tx, t *store.MovedTicket, v *View, row *store.CheckIn) error {
	if err := encode(row, v); err != nil {
		return err
	}
	orderID := t.OrderID
	_, err := s.Webhooks.EmitWith(ctx, tx, webhook.Event{
		AppID: t.AppID, Environment: t.Environment, Type: webhook.TicketCheckedIn, OrderID: &orderID, Sequence: t.Sequence,
		Data: map[string]any{"ticket": v.Ticket, "order_reference": t.OrderReference, "check_in": v},
	}, func(ev *store.WebhookEvent) error { return store.InsertCheckInWithEvent(ctx, tx, row, ev) })
	return err
}

// encode saves the answer a scan gets in its row.
func encode(row *store.CheckIn, v *View) error {
	answer, err := json.Marshal(v)
	if err != nil {
		return err
	}
	row.Answer = string(answer)
	return nil
}

// decode reads a recorded scan's answer.
func decode(c *store.CheckIn) (*View, error) {
	v := new(View)
	if err := json.Unmarshal([]byte(c.Answer), v); err != nil {
		return nil, fmt.Errorf("checkin: read the answer of check-in %s: %w", c.PublicID, err)
	}
	return v, nil
}

var codec = base32.StdEncoding.WithPadding(base32.NoPadding)

// newID returns a check-in's API id (chk_…): 128 random bits.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "chk_" + strings.ToLower(codec.EncodeToString(b))
}
