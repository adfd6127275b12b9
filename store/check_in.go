package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Scan directions and results (spec/fulfilment.md section 4).
const (
	CheckInEntry    = "entry"
	CheckInExit     = "exit"
	CheckInAdmitted = "admitted"
	CheckInRejected = "rejected"
)

// CheckIn is one scan at the door, admitted or rejected.
type CheckIn struct {
	bun.BaseModel `bun:"table:check_ins,alias:ci"`

	ID int64 `bun:"id,pk,autoincrement"`
	// PublicID is the API's id (chk_…).
	PublicID    string `bun:"public_id,notnull"`
	ScannerID   int64  `bun:"scanner_id,notnull"`
	Environment string `bun:"environment,notnull"`
	// EventDateID is the date the door scanned for.
	EventDateID int64 `bun:"event_date_id,notnull"`
	// TicketID is the ticket scanned; nil for a code no ticket has, whose
	// text is never stored.
	TicketID  *int64    `bun:"ticket_id"`
	Direction string    `bun:"direction,notnull"`
	Gate      *string   `bun:"gate"`
	ScannedAt time.Time `bun:"scanned_at,notnull"`
	Result    string    `bun:"result,notnull"`
	Reason    *string   `bun:"reason"`
	// IdempotencyKey and Fingerprint are set for a scan sent with an
	// Idempotency-Key: the key and a hash of the scan's body.
	IdempotencyKey *string `bun:"idempotency_key"`
	Fingerprint    *string `bun:"fingerprint"`
	// Answer is the JSON check-in the door got: what a retry under the
	// same key and the date's live feed read back.
	Answer    string    `bun:"answer,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

func (c *CheckIn) normalize() {
	c.ScannedAt, c.CreatedAt = c.ScannedAt.UTC(), c.CreatedAt.UTC()
}

// InsertCheckIn records a scan and sets its id.
// Errors: ErrConflict when the scanner already has a scan with this
// idempotency key.
func InsertCheckIn(ctx context.Context, db bun.IDB, c *CheckIn) error {
	_, err := db.NewInsert().Model(c).Returning("id").Exec(ctx)
	return translate(err)
}

// CheckInByKey returns the scan a scanner sent with an idempotency key.
// Errors: ErrNotFound.
func CheckInByKey(ctx context.Context, db bun.IDB, scannerID int64, key string) (*CheckIn, error) {
	c := new(CheckIn)
	if err := db.NewSelect().Model(c).Where("ci.scanner_id = ?", scannerID).Where("ci.idempotency_key = ?", key).
		Scan(ctx); err != nil {
		return nil, translate(err)
	}
	c.normalize()
	return c, nil
}

// StandingAdmission returns the latest admitted entry of a ticket: while
// the ticket is inside, the admission that let it in. Errors: ErrNotFound.
func StandingAdmission(ctx context.Context, db bun.IDB, ticketID int64) (*CheckIn, error) {
	c := new(CheckIn)
	err := db.NewSelect().Model(c).
		Where("ci.ticket_id = ?", ticketID).Where("ci.result = ?", CheckInAdmitted).Where("ci.direction = ?", CheckInEntry).
		Order("ci.id DESC").Limit(1).Scan(ctx)
	if err != nil {
		return nil, translate(err)
	}
	c.normalize()
	return c, nil
}

// TicketCheckIns returns every scan of a ticket, oldest first.
func TicketCheckIns(ctx context.Context, db bun.IDB, ticketID int64) ([]CheckIn, error) {
	out := []CheckIn{}
	if err := db.NewSelect().Model(&out).Where("ci.ticket_id = ?", ticketID).Order("ci.id").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for i := range out {
		out[i].normalize()
	}
	return out, nil
}

// CheckInsAfter returns the scans of an event date in one environment
// recorded after the scan with row id after (0: from the first), oldest
// first, at most limit.
func CheckInsAfter(ctx context.Context, db bun.IDB, env string, dateID, after int64, limit int) ([]CheckIn, error) {
	out := []CheckIn{}
	if err := db.NewSelect().Model(&out).
		Where("ci.event_date_id = ?", dateID).Where("ci.environment = ?", env).Where("ci.id > ?", after).
		Order("ci.id").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for i := range out {
		out[i].normalize()
	}
	return out, nil
}

// LastCheckIn returns the row id of the latest scan of an event date in one
// environment, 0 when there is none.
func LastCheckIn(ctx context.Context, db bun.IDB, env string, dateID int64) (int64, error) {
	var ids []int64
	err := db.NewSelect().Model((*CheckIn)(nil)).Column("ci.id").
		Where("ci.event_date_id = ?", dateID).Where("ci.environment = ?", env).
		Order("ci.id DESC").Limit(1).Scan(ctx, &ids)
	if err != nil || len(ids) == 0 {
		return 0, translate(err)
	}
	return ids[0], nil
}

// DoorCounts are the numbers of an event date's door in one environment.
type DoorCounts struct {
	// Issued counts tickets that are not void; CheckedIn those of them
	// admitted at least once; Inside those of them inside now.
	Issued, CheckedIn, Inside int64
	// Rejected counts rejected scans.
	Rejected int64
}

// doorCountsQuery reads a date's counts from two indexes
// (issued_tickets_door_idx and check_ins_rejected_idx, whose predicate
// the literal 'rejected' matches), never the tables' other rows.
const doorCountsQuery = `SELECT
	(SELECT COUNT(*) FROM issued_tickets WHERE event_date_id = ? AND environment = ? AND status IN ('valid', 'checked_in')),
	(SELECT COUNT(*) FROM issued_tickets WHERE event_date_id = ? AND environment = ? AND status = 'checked_in'),
	(SELECT COUNT(*) FROM issued_tickets WHERE event_date_id = ? AND environment = ? AND status = 'checked_in' AND inside),
	(SELECT COUNT(*) FROM check_ins WHERE event_date_id = ? AND environment = ? AND result = 'rejected')`

// DoorCountsOf counts an event date's door in one environment.
func DoorCountsOf(ctx context.Context, db bun.IDB, env string, dateID int64) (DoorCounts, error) {
	var c DoorCounts
	err := db.NewRaw(doorCountsQuery, dateID, env, dateID, env, dateID, env, dateID, env).
		Scan(ctx, &c.Issued, &c.CheckedIn, &c.Inside, &c.Rejected)
	return c, translate(err)
}

// TouchOrder marks a change of order id that its row does not show (a
// ticket checked in or voided): it takes the order's next webhook
// sequence number and sets its updated_at to now, so the order's live
// subscribers and its changes feed see it. It returns the order's
// reference and the sequence. Errors: ErrNotFound.
func TouchOrder(ctx context.Context, db bun.IDB, orderID int64, now time.Time) (ref string, seq int64, err error) {
	var rows []struct {
		Reference     string `bun:"reference"`
		EventSequence int64  `bun:"event_sequence"`
	}
	err = db.NewRaw("UPDATE orders SET event_sequence = event_sequence + 1, updated_at = ? WHERE id = ? RETURNING reference, event_sequence",
		now, orderID).Scan(ctx, &rows)
	if err != nil {
		return "", 0, translate(err)
	}
	if len(rows) == 0 {
		return "", 0, ErrNotFound
	}
	return rows[0].Reference, rows[0].EventSequence, nil
}
