package store

import (
	"context"
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
