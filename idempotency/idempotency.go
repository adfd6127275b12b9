// Package idempotency makes a request with an Idempotency-Key run once. The
// database decides, not process memory: a key is claimed by inserting a row
// unique per (app, environment, key), so any number of server instances
// sharing the database agree. The claim carries an owner token and a lock
// that runs out, so a request that died mid-way never blocks its key
// forever; saving the response checks the owner, so a request that lost its
// claim cannot also save.
package idempotency

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Defaults of the contract: keys are kept 60 minutes (spec 4.5 rule 4) and
// are at most 128 characters.
const (
	DefaultRetention   = 60 * time.Minute
	DefaultLockTimeout = 15 * time.Second
	MaxKeyLength       = 128
)

// ErrTaken is Save's news that the key already has a record: a saved
// answer, a request still running under it, or one that expired. Taken
// says which.
var ErrTaken = errors.New("idempotency: key taken")

// ErrGone is Taken's news that the key's record is no longer there (it
// expired, or the request holding it gave it up): the request may run
// and Save again.
var ErrGone = errors.New("idempotency: key free again")

// Service claims, completes and releases idempotency keys.
type Service struct {
	DB  *store.DB
	Now func() time.Time
	// Retention is how long a key is remembered (DefaultRetention when zero).
	Retention time.Duration
	// LockTimeout is how long a claim holds before another request may take
	// the key over (DefaultLockTimeout when zero).
	LockTimeout time.Duration
}

// Scope is who a key belongs to: keys of different apps or environments
// never collide.
type Scope struct {
	AppID       int64
	Environment string
}

// Claim is a key this request now owns; exactly one of Complete and
// Release must follow.
type Claim struct {
	id    int64
	owner string
}

// CheckKey validates an Idempotency-Key header value.
// Errors: missing_idempotency_key, invalid_idempotency_key.
func CheckKey(key string) error {
	switch {
	case key == "":
		return apperr.New(apperr.MissingIdempotencyKey, "The Idempotency-Key header is required.")
	case utf8.RuneCountInString(key) > MaxKeyLength:
		return apperr.New(apperr.InvalidIdempotencyKey, "The Idempotency-Key header must be at most %d characters.", MaxKeyLength)
	case !utf8.ValidString(key) || strings.ContainsFunc(key, unicode.IsControl):
		return apperr.New(apperr.InvalidIdempotencyKey, "The Idempotency-Key header must be UTF-8 text without control characters.")
	}
	return nil
}

// Fingerprint hashes a canonical form of a request body.
func Fingerprint(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// Begin claims key for a request with this fingerprint. It returns either a
// Claim to run the request under, or the saved response of an earlier run
// of the same request.
// Errors: idempotency_conflict (same key, different request),
// idempotency_in_progress (the first request still runs; RetryAfter set).
func (s *Service) Begin(ctx context.Context, scope Scope, key, fingerprint string) (*Claim, []byte, error) {
	now := s.Now().UTC()
	owner := newOwner()
	for attempt := 0; attempt < 3; attempt++ {
		rec := &store.IdempotencyRecord{
			AppID: scope.AppID, Environment: scope.Environment, Key: key, Fingerprint: fingerprint,
			State: store.IdempotencyInProgress, Owner: owner, LockedUntil: now.Add(s.lockTimeout()),
			CreatedAt: now, ExpiresAt: now.Add(s.retention()),
		}
		inserted, err := store.InsertIdempotencyRecord(ctx, s.DB, rec)
		if err != nil {
			return nil, nil, err
		}
		if inserted {
			return &Claim{id: rec.ID, owner: owner}, nil, nil
		}
		old, err := store.IdempotencyRecordByKey(ctx, s.DB, scope.AppID, scope.Environment, key)
		if errors.Is(err, store.ErrNotFound) {
			continue // released or purged meanwhile: claim it afresh
		}
		if err != nil {
			return nil, nil, err
		}
		switch {
		case !old.ExpiresAt.After(now):
			if err := store.DeleteExpiredIdempotencyRecord(ctx, s.DB, old.ID, now); err != nil {
				return nil, nil, err
			}
			continue
		case old.Fingerprint != fingerprint:
			return nil, nil, apperr.New(apperr.IdempotencyConflict,
				"This Idempotency-Key was already used with a different request body.")
		case old.State == store.IdempotencyDone:
			return nil, []byte(old.Response), nil
		case old.LockedUntil.After(now):
			return nil, nil, inProgress(old.LockedUntil.Sub(now))
		}
		took, err := store.TakeOverIdempotencyRecord(ctx, s.DB, old.ID, owner, now, now.Add(s.lockTimeout()))
		if err != nil {
			return nil, nil, err
		}
		if took {
			return &Claim{id: old.ID, owner: owner}, nil, nil
		}
		return nil, nil, inProgress(time.Second)
	}
	return nil, nil, inProgress(time.Second)
}

// Save records the answer of a request that ran without a claim, in one
// statement, in db: the request's own transaction, so its changes and its
// answer commit together or not at all (one commit for the whole
// request), or the database itself for a refusal that changed nothing.
// Requests that call nothing outside the database run so: they need no
// claim, because nothing they do is visible before their commit. Errors:
// ErrTaken when the key has a record, or a request still in its
// transaction under it (db's transaction must then roll back, and Taken
// gives the answer).
func (s *Service) Save(ctx context.Context, db bun.IDB, scope Scope, key, fingerprint string, response []byte) error {
	rec := s.doneRecord(scope, key, fingerprint, response, s.Now().UTC())
	ok, err := store.SaveIdempotencyRecord(ctx, db, s.DB.Postgres(), rec, lockID(scope, key))
	if err != nil {
		return err
	}
	if !ok {
		return ErrTaken
	}
	return nil
}

// doneRecord is the record of a request's saved answer, as Save and
// SaveAll store it.
func (s *Service) doneRecord(scope Scope, key, fingerprint string, response []byte, now time.Time) *store.IdempotencyRecord {
	return &store.IdempotencyRecord{
		AppID: scope.AppID, Environment: scope.Environment, Key: key, Fingerprint: fingerprint,
		State: store.IdempotencyDone, Owner: "", LockedUntil: now, Response: string(response),
		CreatedAt: now, ExpiresAt: now.Add(s.retention()),
	}
}

// Saving is one answer SaveAll records: Save's arguments.
type Saving struct {
	Scope            Scope
	Key, Fingerprint string
	Response         []byte
}

// SaveAll is Save for the answers of several requests that ran in one
// transaction (a batch of checkout creates), in one statement on
// PostgreSQL: taken[i] is ErrTaken where Save would have said so, and for
// a key that an earlier answer of the batch has; nil where saved.
func (s *Service) SaveAll(ctx context.Context, db bun.IDB, saves []Saving) (taken []error, err error) {
	now := s.Now().UTC()
	recs := make([]*store.IdempotencyRecord, len(saves))
	locks := make([]int64, len(saves))
	for i, v := range saves {
		recs[i] = s.doneRecord(v.Scope, v.Key, v.Fingerprint, v.Response, now)
		locks[i] = lockID(v.Scope, v.Key)
	}
	saved, err := store.SaveIdempotencyRecords(ctx, db, s.DB.Postgres(), recs, locks)
	if err != nil {
		return nil, err
	}
	taken = make([]error, len(saves))
	for i, ok := range saved {
		if !ok {
			taken[i] = ErrTaken
		}
	}
	return taken, nil
}

// Taken answers a request whose key Save found taken: the saved response
// of the same request.
// Errors: idempotency_conflict (same key, different request),
// idempotency_in_progress (the first request still runs; RetryAfter set),
// ErrGone (the record expired, or its request died or gave the key up:
// run again).
func (s *Service) Taken(ctx context.Context, scope Scope, key, fingerprint string) ([]byte, error) {
	now := s.Now().UTC()
	old, err := store.IdempotencyRecordByKey(ctx, s.DB, scope.AppID, scope.Environment, key)
	if errors.Is(err, store.ErrNotFound) {
		// Not there for us to read: either its first request is still in
		// its transaction (PostgreSQL's advisory lock said so), or it
		// ended without saving. Which one, only a retry can tell.
		if s.DB.Postgres() {
			return nil, inProgress(time.Second)
		}
		return nil, ErrGone
	}
	if err != nil {
		return nil, err
	}
	switch {
	case !old.ExpiresAt.After(now):
		if err := store.DeleteExpiredIdempotencyRecord(ctx, s.DB, old.ID, now); err != nil {
			return nil, err
		}
		return nil, ErrGone
	case old.Fingerprint != fingerprint:
		return nil, apperr.New(apperr.IdempotencyConflict,
			"This Idempotency-Key was already used with a different request body.")
	case old.State == store.IdempotencyDone:
		return []byte(old.Response), nil
	case !old.LockedUntil.After(now):
		// A claim whose request died: the key is free again.
		if err := store.DeleteStaleIdempotencyClaim(ctx, s.DB, old.ID, now); err != nil {
			return nil, err
		}
		return nil, ErrGone
	}
	wait := old.LockedUntil.Sub(now)
	if wait < time.Second {
		wait = time.Second
	}
	return nil, inProgress(wait)
}

// lockID is the advisory lock of a key: 64 bits of FNV-1a over its scope
// and text (two keys sharing one only wait for each other a moment).
func lockID(scope Scope, key string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%s", scope.AppID, scope.Environment, key)
	return int64(h.Sum64())
}

// Complete saves the response of a claimed request; db may be the
// transaction that made the request's changes, so both commit or neither.
// Errors: idempotency_in_progress when the claim was lost (its lock ran out
// and another request took the key over).
func (s *Service) Complete(ctx context.Context, db bun.IDB, c *Claim, response []byte) error {
	ok, err := store.CompleteIdempotencyRecord(ctx, db, c.id, c.owner, string(response))
	if err != nil {
		return err
	}
	if !ok {
		return inProgress(time.Second)
	}
	return nil
}

// Release gives a claimed key up without saving anything, so the same key
// can be sent again (used for answers that are not saved: validation, rate
// limits, server errors).
func (s *Service) Release(ctx context.Context, c *Claim) error {
	return store.ReleaseIdempotencyRecord(context.WithoutCancel(ctx), s.DB, c.id, c.owner)
}

// Purge deletes the keys that have expired and returns how many.
func (s *Service) Purge(ctx context.Context) (int64, error) {
	return store.PurgeIdempotencyRecords(ctx, s.DB, s.Now().UTC())
}

func inProgress(wait time.Duration) *apperr.Error {
	e := apperr.New(apperr.IdempotencyInProgress, "A request with this Idempotency-Key is still being processed; retry shortly.")
	e.RetryAfter = int(math.Ceil(wait.Seconds()))
	return e
}

func (s *Service) retention() time.Duration {
	if s.Retention > 0 {
		return s.Retention
	}
	return DefaultRetention
}

func (s *Service) lockTimeout() time.Duration {
	if s.LockTimeout > 0 {
		return s.LockTimeout
	}
	return DefaultLockTimeout
}

func newOwner() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
