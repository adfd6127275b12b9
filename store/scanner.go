package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Scanner is a door device's key: one event, one environment; only its
// SHA-256 hash is kept.
type Scanner struct {
	bun.BaseModel `bun:"table:scanners,alias:sc"`

	ID          int64     `bun:"id,pk,autoincrement"`
	Name        string    `bun:"name,notnull"`
	EventID     int64     `bun:"event_id,notnull"`
	Environment string    `bun:"environment,notnull"`
	KeyHash     string    `bun:"key_hash,notnull"`
	Hint        string    `bun:"hint,notnull"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
	RevokedAt   time.Time `bun:"revoked_at,nullzero"`
}

// ScannerKey is what authentication needs to know about a scanner key.
type ScannerKey struct {
	ID          int64
	EventID     int64
	Environment string
	Revoked     bool
}

// scannerKeyQuery is the statement behind ScannerKeyByHash, bound like
// keyOwnerQuery: every scan makes it.
const scannerKeyQuery = `SELECT id, event_id, environment, revoked_at IS NOT NULL
	FROM scanners WHERE key_hash = $1 LIMIT 1`

// ScannerKeyByHash finds the scanner whose key has this hash; an unknown
// hash is ErrNotFound.
func ScannerKeyByHash(ctx context.Context, db *DB, hash string) (*ScannerKey, error) {
	var k *ScannerKey
	err := db.queryBound(ctx, scannerKeyQuery, []any{hash}, func(r row) error {
		k = new(ScannerKey)
		return r.Scan(&k.ID, &k.EventID, &k.Environment, &k.Revoked)
	})
	if err == nil && k == nil {
		err = ErrNotFound
	}
	return k, err
}

// InsertScanner stores a new scanner and sets its id.
func InsertScanner(ctx context.Context, db bun.IDB, s *Scanner) error {
	_, err := db.NewInsert().Model(s).Returning("id").Exec(ctx)
	return translate(err)
}

// Scanners returns the scanners of one event (every event when eventID is
// 0), revoked ones included, oldest first.
func Scanners(ctx context.Context, db bun.IDB, eventID int64) ([]Scanner, error) {
	out := []Scanner{}
	q := db.NewSelect().Model(&out).Order("sc.id")
	if eventID != 0 {
		q = q.Where("sc.event_id = ?", eventID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for i := range out {
		out[i].CreatedAt, out[i].RevokedAt = out[i].CreatedAt.UTC(), utc(out[i].RevokedAt)
	}
	return out, nil
}

// ScannerNames returns the names of scanners by id.
func ScannerNames(ctx context.Context, db bun.IDB, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []Scanner
	if err := db.NewSelect().Model(&rows).Column("id", "name").Where("sc.id IN (?)", bun.In(ids)).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for _, s := range rows {
		out[s.ID] = s.Name
	}
	return out, nil
}

// RevokeScanner revokes scanner id at now, unless it already is, and
// returns the scanner. Errors: ErrNotFound.
func RevokeScanner(ctx context.Context, db bun.IDB, id int64, now time.Time) (*Scanner, error) {
	if _, err := db.NewUpdate().Model((*Scanner)(nil)).Set("revoked_at = ?", now).
		Where("id = ?", id).Where("revoked_at IS NULL").Exec(ctx); err != nil {
		return nil, translate(err)
	}
	s := new(Scanner)
	if err := db.NewSelect().Model(s).Where("sc.id = ?", id).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	s.CreatedAt, s.RevokedAt = s.CreatedAt.UTC(), utc(s.RevokedAt)
	return s, nil
}
