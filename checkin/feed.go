package checkin

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
)

// Stats are a date's door numbers in the scanner's environment.
type Stats struct {
	EventdateID int64 `json:"eventdate_id"`
	// Issued counts the date's tickets that are not void; CheckedIn those
	// of them admitted at least once; Inside those of them inside now.
	Issued    int64 `json:"issued"`
	CheckedIn int64 `json:"checked_in"`
	Inside    int64 `json:"inside"`
	// RejectedScans counts the date's rejected scans.
	RejectedScans int64 `json:"rejected_scans"`
	// OfflineConflicts counts those of them that were offline entries of
	// a ticket already inside: two people may have entered on one ticket.
	OfflineConflicts int64 `json:"offline_conflicts"`
}

// Stats counts a date of the scanner's event, now, in its environment,
// from indexes alone.
// Errors: event_date_not_found.
func (s *Service) Stats(ctx context.Context, sc Scanner, dateID int64) (*Stats, error) {
	if err := s.checkDate(ctx, sc, dateID); err != nil {
		return nil, err
	}
	c, err := store.DoorCountsOf(ctx, s.DB, sc.Environment, dateID)
	if err != nil {
		return nil, err
	}
	return &Stats{EventdateID: dateID, Issued: c.Issued, CheckedIn: c.CheckedIn, Inside: c.Inside, RejectedScans: c.Rejected,
		OfflineConflicts: c.OfflineConflicts}, nil
}

// MaxScans bounds one read of a date's feed.
const MaxScans = 500

// Feed is the scans of a date of a scanner's event, in its environment,
// as a follower reads them: each scan once, as its door got it, in the
// order their transactions became final, from where the feed started.
// A Feed is one follower's; it is not safe for concurrent use.
type Feed struct {
	s      *Service
	env    string
	dateID int64
	after  store.CheckInCursor
	// skip are scans committed before the feed started that come after
	// its start in feed order (store.CheckInFeedStart); each is passed
	// over once.
	skip map[int64]bool
}

// Feed starts following the scans of a date of sc's event from now: Next
// returns the scans recorded from this moment on, never one recorded
// before.
// Errors: event_date_not_found.
func (s *Service) Feed(ctx context.Context, sc Scanner, dateID int64) (*Feed, error) {
	if err := s.checkDate(ctx, sc, dateID); err != nil {
		return nil, err
	}
	start, skip, err := store.CheckInFeedStart(ctx, s.DB, sc.Environment, dateID)
	if err != nil {
		return nil, err
	}
	f := &Feed{s: s, env: sc.Environment, dateID: dateID, after: start, skip: make(map[int64]bool, len(skip))}
	for _, id := range skip {
		f.skip[id] = true
	}
	return f, nil
}

// Next returns the scans after the last one Next returned, oldest first,
// at most MaxScans; none when the follower has caught up. held reports
// that scans committed after them are not final yet (a transaction older
// than theirs still runs): read again shortly, as no new scan may come to
// say so.
func (f *Feed) Next(ctx context.Context) (scans []*View, held bool, err error) {
	for {
		rows, held, err := store.CheckInsAfter(ctx, f.s.DB, f.env, f.dateID, f.after, MaxScans)
		if err != nil {
			return nil, false, err
		}
		for i := range rows {
			if f.skip[rows[i].ID] {
				delete(f.skip, rows[i].ID)
				continue
			}
			v, err := decode(&rows[i].CheckIn)
			if err != nil {
				return nil, false, err
			}
			scans = append(scans, v)
		}
		if n := len(rows); n > 0 {
			f.after = rows[n-1].Cursor
		}
		// A full page of scans to pass over says nothing of what follows.
		if len(scans) > 0 || len(rows) < MaxScans || held {
			return scans, held, nil
		}
	}
}

// How soon a follower reads again when scans are held back, and after a
// read failed.
const (
	heldRetry   = 100 * time.Millisecond
	failedRetry = time.Second
)

// Follow sends each scan of the feed to send, in order, until ctx ends,
// wake is closed or send reports false. It reads when wake receives (each
// change of the date's live.CheckInTopic, on any instance; the first at
// once), again shortly while scans are held back, and after a second
// when a read failed (logged), so no scan is skipped, however many come
// at once. send may block: a slow receiver delays its own feed only.
func (f *Feed) Follow(ctx context.Context, wake <-chan struct{}, send func(*View) bool) {
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-wake:
			if !ok {
				return
			}
		case <-retry:
		}
		retry = nil
		for {
			scans, held, err := f.Next(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				f.s.log().WarnContext(ctx, "checkin: reading a date's scans for its feed failed; retrying",
					"eventdate_id", f.dateID, "error", err)
				retry = time.After(failedRetry)
				break
			}
			for _, v := range scans {
				if !send(v) {
					return
				}
			}
			if len(scans) == 0 {
				if held {
					retry = time.After(heldRetry)
				}
				break
			}
		}
	}
}

// Record is a ticket as the operator sees it: its state, and every scan
// of it with the name of the scanner that made it.
type Record struct {
	Ticket     *tickets.View
	Inside     bool
	VoidedAt   string
	VoidReason string
	Scans      []RecordScan
}

// RecordScan is one scan of a ticket.
type RecordScan struct {
	*View
	ScannerID   int64
	ScannerName string
}

// Ticket returns the ticket with code (read as a scan reads it),
// whatever its environment, and its scans, oldest first.
// Errors: not_found.
func (s *Service) Ticket(ctx context.Context, code string) (*Record, error) {
	notFound := apperr.New(apperr.NotFound, "No ticket has this code.")
	code = strings.TrimSpace(code)
	if !text(code) || clientinput.Length(code) > MaxCode {
		return nil, notFound
	}
	t, err := store.DoorTicketByCode(ctx, s.DB, store.TypedCode(code))
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	rows, err := store.TicketCheckIns(ctx, s.DB, t.ID)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ScannerID
	}
	names, err := store.ScannerNames(ctx, s.DB, ids)
	if err != nil {
		return nil, err
	}
	rec := &Record{Ticket: tickets.NewView(&t.IssuedTicket, t.OrderReference), Inside: t.Inside, Scans: []RecordScan{}}
	if !t.VoidedAt.IsZero() {
		rec.VoidedAt = catalog.FormatStamp(t.VoidedAt)
	}
	if t.VoidReason != nil {
		rec.VoidReason = *t.VoidReason
	}
	for i := range rows {
		v, err := decode(&rows[i])
		if err != nil {
			return nil, err
		}
		rec.Scans = append(rec.Scans, RecordScan{View: v, ScannerID: rows[i].ScannerID, ScannerName: names[rows[i].ScannerID]})
	}
	return rec, nil
}
