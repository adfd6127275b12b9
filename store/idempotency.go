package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Idempotency record states.
const (
	IdempotencyInProgress = "in_progress"
	IdempotencyDone       = "done"
)

// IdempotencyRecord remembers one Idempotency-Key of one app and
// environment: the request's fingerprint, who is running it and, once done,
// the saved response.
type IdempotencyRecord struct {
	bun.BaseModel `bun:"table:idempotency_keys,alias:ik"`

	ID          int64     `bun:"id,pk,autoincrement"`
	AppID       int64     `bun:"app_id,notnull"`
	Environment string    `bun:"environment,notnull"`
	Key         string    `bun:"key,notnull"`
	Fingerprint string    `bun:"fingerprint,notnull"`
	State       string    `bun:"state,notnull"`
	Owner       string    `bun:"owner,notnull"`
	LockedUntil time.Time `bun:"locked_until,notnull"`
	Response    string    `bun:"response,nullzero"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
	ExpiresAt   time.Time `bun:"expires_at,notnull"`
}

// InsertIdempotencyRecord stores r unless its (app, environment, key) is
// taken, and reports whether it did.
func InsertIdempotencyRecord(ctx context.Context, db bun.IDB, r *IdempotencyRecord) (bool, error) {
	res, err := db.NewInsert().Model(r).On("CONFLICT (app_id, environment, key) DO NOTHING").Returning("id").Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// IdempotencyRecordByKey returns the record of a key in its scope.
func IdempotencyRecordByKey(ctx context.Context, db bun.IDB, appID int64, env, key string) (*IdempotencyRecord, error) {
	r := new(IdempotencyRecord)
	err := db.NewSelect().Model(r).
		Where("app_id = ?", appID).Where("environment = ?", env).Where("key = ?", key).
		Scan(ctx)
	return r, translate(err)
}

// DeleteExpiredIdempotencyRecord removes one record if it has expired at now.
func DeleteExpiredIdempotencyRecord(ctx context.Context, db bun.IDB, id int64, now time.Time) error {
	_, err := db.NewDelete().Model((*IdempotencyRecord)(nil)).
		Where("id = ?", id).Where("expires_at <= ?", now).Exec(ctx)
	return translate(err)
}

// TakeOverIdempotencyRecord gives an in-progress record whose lock has run
// out (its first request died) to a new owner, and reports whether it did.
func TakeOverIdempotencyRecord(ctx context.Context, db bun.IDB, id int64, owner string, now, lockedUntil time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*IdempotencyRecord)(nil)).
		Set("owner = ?", owner).Set("locked_until = ?", lockedUntil).
		Where("id = ?", id).Where("state = ?", IdempotencyInProgress).Where("locked_until <= ?", now).
		Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CompleteIdempotencyRecord saves the response of a record its owner still
// holds, and reports whether it did; false means the lock was lost.
func CompleteIdempotencyRecord(ctx context.Context, db bun.IDB, id int64, owner, response string) (bool, error) {
	res, err := db.NewUpdate().Model((*IdempotencyRecord)(nil)).
		Set("state = ?", IdempotencyDone).Set("response = ?", response).
		Where("id = ?", id).Where("owner = ?", owner).Where("state = ?", IdempotencyInProgress).
		Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ReleaseIdempotencyRecord deletes an in-progress record its owner holds,
// so the key can be used again.
func ReleaseIdempotencyRecord(ctx context.Context, db bun.IDB, id int64, owner string) error {
	_, err := db.NewDelete().Model((*IdempotencyRecord)(nil)).
		Where("id = ?", id).Where("owner = ?", owner).Where("state = ?", IdempotencyInProgress).
		Exec(ctx)
	return translate(err)
}

// PurgeIdempotencyRecords deletes every record expired at now and returns how many.
func PurgeIdempotencyRecords(ctx context.Context, db bun.IDB, now time.Time) (int64, error) {
	res, err := db.NewDelete().Model((*IdempotencyRecord)(nil)).Where("expires_at <= ?", now).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// SaveIdempotencyRecord stores r, a finished request's record, in one
// statement unless its (app, environment, key) is taken, and reports
// whether it did. On PostgreSQL the statement first takes lock, a
// transaction-level advisory lock of the key, without waiting: a key
// whose first request is still in its transaction reads as taken at
// once, instead of this statement waiting on that transaction's unique
// index entry. db is usually the transaction that made the request's
// changes, which then holds the lock until it ends.
func SaveIdempotencyRecord(ctx context.Context, db bun.IDB, pg bool, r *IdempotencyRecord, lock int64) (bool, error) {
	guard := ""
	args := []any{r.AppID, r.Environment, r.Key, r.Fingerprint, r.State, r.Owner, r.LockedUntil, r.Response, r.CreatedAt, r.ExpiresAt}
	if pg {
		guard = " WHERE pg_try_advisory_xact_lock(?)"
		args = append(args, lock)
	}
	res, err := db.ExecContext(ctx, `INSERT INTO idempotency_keys
		(app_id, environment, key, fingerprint, state, owner, locked_until, response, created_at, expires_at)
		SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`+guard+`
		ON CONFLICT (app_id, environment, key) DO NOTHING`, args...)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DeleteStaleIdempotencyClaim removes one in-progress record whose lock ran
// out at now (its request died), so the key can be used again.
func DeleteStaleIdempotencyClaim(ctx context.Context, db bun.IDB, id int64, now time.Time) error {
	_, err := db.NewDelete().Model((*IdempotencyRecord)(nil)).
		Where("id = ?", id).Where("state = ?", IdempotencyInProgress).Where("locked_until <= ?", now).Exec(ctx)
	return translate(err)
}

// SaveIdempotencyRecords is SaveIdempotencyRecord for several records at
// once, locks[i] being rs[i]'s: saved[i] reports whether rs[i] was stored.
// On PostgreSQL it is one statement for them all; on SQLite, where
// writers take turns anyway, one per record. Of two records of one key,
// only the first can be stored.
func SaveIdempotencyRecords(ctx context.Context, db bun.IDB, pg bool, rs []*IdempotencyRecord, locks []int64) ([]bool, error) {
	saved := make([]bool, len(rs))
	if !pg {
		for i, r := range rs {
			ok, err := SaveIdempotencyRecord(ctx, db, pg, r, locks[i])
			if err != nil {
				return nil, err
			}
			saved[i] = ok
		}
		return saved, nil
	}
	type scopeKey struct {
		app      int64
		env, key string
	}
	first := make(map[scopeKey]int, len(rs))
	var values strings.Builder
	var args []any
	for i, r := range rs {
		k := scopeKey{r.AppID, r.Environment, r.Key}
		if _, dup := first[k]; dup {
			continue
		}
		first[k] = i
		if len(args) > 0 {
			values.WriteString(", ")
		}
		values.WriteString("(?::bigint, ?::text, ?::text, ?::text, ?::text, ?::text, ?::timestamptz, ?::text, ?::timestamptz, ?::timestamptz, ?::bigint)")
		args = append(args, r.AppID, r.Environment, r.Key, r.Fingerprint, r.State, r.Owner, r.LockedUntil, r.Response, r.CreatedAt, r.ExpiresAt, locks[i])
	}
	var stored []struct {
		AppID       int64  `bun:"app_id"`
		Environment string `bun:"environment"`
		Key         string `bun:"key"`
	}
	// The advisory lock, as in SaveIdempotencyRecord, is taken row by row:
	// a key whose first request is still in its transaction is refused.
	err := db.NewRaw(`INSERT INTO idempotency_keys
		(app_id, environment, key, fingerprint, state, owner, locked_until, response, created_at, expires_at)
		SELECT v.app_id, v.environment, v.key, v.fingerprint, v.state, v.owner, v.locked_until, v.response, v.created_at, v.expires_at
		FROM (VALUES `+values.String()+`) AS v (app_id, environment, key, fingerprint, state, owner, locked_until, response, created_at, expires_at, lock)
		WHERE pg_try_advisory_xact_lock(v.lock)
		ON CONFLICT (app_id, environment, key) DO NOTHING
		RETURNING app_id, environment, key`, args...).Scan(ctx, &stored)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate(err)
	}
	for _, s := range stored {
		if i, ok := first[scopeKey{s.AppID, s.Environment, s.Key}]; ok {
			saved[i] = true
		}
	}
	return saved, nil
}
