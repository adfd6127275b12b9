package store

import (
	"context"
	"strconv"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
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
	// Offline is true for a scan the server received more than 30 seconds
	// after it was made (spec/offline-door.md section 3).
	Offline bool `bun:"offline,notnull"`
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

// InsertCheckInWithEvent records a scan and the webhook event it emits
// (ticket.checked_in), in one statement on PostgreSQL, and sets the scan's
// id. Errors: ErrConflict as InsertCheckIn, and then neither row exists.
func InsertCheckInWithEvent(ctx context.Context, db bun.IDB, c *CheckIn, e *WebhookEvent) error {
	if db.Dialect().Name() != dialect.PG {
		// SQLite has no INSERT inside WITH.
		if err := InsertWebhookEvent(ctx, db, e); err != nil {
			return err
		}
		return InsertCheckIn(ctx, db, c)
	}
	_, err := db.NewInsert().With("event", db.NewInsert().Model(e)).Model(c).Returning("id").Exec(ctx)
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

// CheckInCursor is a place in the feed of an event date's scans: a
// follower that has read up to it reads next exactly the scans that
// became final after it. Tx is the writing transaction's id on
// PostgreSQL (0 on SQLite), Seq the row's id; the order is (Tx, Seq). The
// check-in feed migration says why an id alone is not enough.
type CheckInCursor struct {
	Tx  uint64
	Seq int64
}

// FeedCheckIn is a scan as the feed gives it, with its place.
type FeedCheckIn struct {
	CheckIn
	Cursor CheckInCursor
}

// CheckInFeedStart returns the place of "now" in the feed of an event
// date's scans in one environment: a follower starting at cursor, and
// passing over the scans of skip, reads exactly the scans committed from
// now on. On PostgreSQL the scans of transactions younger than the oldest
// one still running are ahead of every cursor that misses none: skip
// lists those of them committed already (a few, unless a transaction is
// held open for long).
func CheckInFeedStart(ctx context.Context, db *DB, env string, dateID int64) (cursor CheckInCursor, skip []int64, err error) {
	q := db.NewSelect().Model((*CheckIn)(nil)).Column("ci.id").
		Where("ci.event_date_id = ?", dateID).Where("ci.environment = ?", env)
	if db.Postgres() {
		horizon, err := streamHorizon(ctx, db)
		if err != nil {
			return CheckInCursor{}, nil, err
		}
		// Read after the horizon, in a statement of its own: it sees
		// every scan of a transaction below the horizon, all of which are
		// behind the cursor.
		err = q.Where("ci.feed_tx >= ?::xid8", strconv.FormatUint(horizon, 10)).Scan(ctx, &skip)
		return CheckInCursor{Tx: horizon}, skip, translate(err)
	}
	var ids []int64
	if err := q.Order("ci.id DESC").Limit(1).Scan(ctx, &ids); err != nil || len(ids) == 0 {
		return CheckInCursor{}, nil, translate(err)
	}
	return CheckInCursor{Seq: ids[0]}, nil, nil
}

type feedRow struct {
	CheckIn `bun:",extend"`
	FeedTx  string `bun:"feed_tx"`
}

// CheckInsAfter returns up to limit scans of an event date in one
// environment that come after cursor, in feed order. held reports that
// scans after the last one returned are committed but not final yet,
// because a transaction older than theirs is still running (PostgreSQL):
// the follower should look again soon, as no new scan may come to wake it.
func CheckInsAfter(ctx context.Context, db *DB, env string, dateID int64, after CheckInCursor, limit int) (scans []FeedCheckIn, held bool, err error) {
	var rows []feedRow
	var horizon uint64
	q := db.NewSelect().Model(&rows).ColumnExpr("ci.*").
		Where("ci.event_date_id = ?", dateID).Where("ci.environment = ?", env)
	if db.Postgres() {
		// Read before the rows, in a statement of its own: the rows'
		// snapshot, taken later, sees every commit below it.
		if horizon, err = streamHorizon(ctx, db); err != nil {
			return nil, false, err
		}
		q = q.ColumnExpr("ci.feed_tx::text AS feed_tx").
			Where("(ci.feed_tx, ci.id) > (?::xid8, ?)", strconv.FormatUint(after.Tx, 10), after.Seq).
			OrderExpr("ci.feed_tx, ci.id")
	} else {
		q = q.ColumnExpr("'0' AS feed_tx").Where("ci.id > ?", after.Seq).OrderExpr("ci.id")
	}
	if err := q.Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, false, translate(err)
	}
	scans = make([]FeedCheckIn, 0, len(rows))
	for _, r := range rows {
		tx, err := strconv.ParseUint(r.FeedTx, 10, 64)
		if err != nil {
			return nil, false, err
		}
		if db.Postgres() && tx >= horizon {
			// An older transaction may still be running, whose scans would
			// sort before this one. Rows sort by transaction, so this
			// holds for every row from here on.
			return scans, true, nil
		}
		r.CheckIn.normalize()
		scans = append(scans, FeedCheckIn{CheckIn: r.CheckIn, Cursor: CheckInCursor{Tx: tx, Seq: r.ID}})
	}
	return scans, false, nil
}

// DoorCounts are the numbers of an event date's door in one environment.
type DoorCounts struct {
	// Issued counts tickets that are not void; CheckedIn those of them
	// admitted at least once; Inside those of them inside now.
	Issued, CheckedIn, Inside int64
	// Rejected counts rejected scans; OfflineConflicts those of them that
	// were offline entries of a ticket already inside.
	Rejected, OfflineConflicts int64
}

// doorCountsQuery reads a date's counts from three indexes
// (issued_tickets_door_idx, and check_ins_rejected_idx and
// check_ins_offline_conflicts_idx, whose predicates the literals match),
// never the tables' other rows.
const doorCountsQuery = `SELECT
	(SELECT COUNT(*) FROM issued_tickets WHERE event_date_id = ? AND environment = ? AND status IN ('valid', 'checked_in')),
	(SELECT COUNT(*) FROM issued_tickets WHERE event_date_id = ? AND environment = ? AND status = 'checked_in'),
	(SELECT COUNT(*) FROM issued_tickets WHERE event_date_id = ? AND environment = ? AND status = 'checked_in' AND inside),
	(SELECT COUNT(*) FROM check_ins WHERE event_date_id = ? AND environment = ? AND result = 'rejected'),
	(SELECT COUNT(*) FROM check_ins WHERE event_date_id = ? AND environment = ? AND offline AND reason = 'already_checked_in')`

// DoorCountsOf counts an event date's door in one environment.
func DoorCountsOf(ctx context.Context, db bun.IDB, env string, dateID int64) (DoorCounts, error) {
	var c DoorCounts
	err := db.NewRaw(doorCountsQuery, dateID, env, dateID, env, dateID, env, dateID, env, dateID, env).
		Scan(ctx, &c.Issued, &c.CheckedIn, &c.Inside, &c.Rejected, &c.OfflineConflicts)
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
