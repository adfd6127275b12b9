package checkin

import (
	"context"
	"errors"
	"strings"

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
	return &Stats{EventdateID: dateID, Issued: c.Issued, CheckedIn: c.CheckedIn, Inside: c.Inside, RejectedScans: c.Rejected}, nil
}

// Scan is a recorded scan with its place in its date's feed.
type Scan struct {
	// Seq orders a date's scans: each is greater than every earlier one's.
	Seq int64
	*View
}

// MaxScans bounds one read of a date's feed.
const MaxScans = 500

// Scans returns the scans of a date of the scanner's event, in its
// environment, recorded after the scan with sequence after (0: from the
// first), oldest first, at most limit (1 to MaxScans): what the door's
// live feed reads whenever live.CheckInTopic wakes it. Each is the
// answer its door got.
// Errors: event_date_not_found.
func (s *Service) Scans(ctx context.Context, sc Scanner, dateID, after int64, limit int) ([]Scan, error) {
	if err := s.checkDate(ctx, sc, dateID); err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), MaxScans)
	rows, err := store.CheckInsAfter(ctx, s.DB, sc.Environment, dateID, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Scan, len(rows))
	for i := range rows {
		v, err := decode(&rows[i])
		if err != nil {
			return nil, err
		}
		out[i] = Scan{Seq: rows[i].ID, View: v}
	}
	return out, nil
}

// LastSeq returns the sequence of the latest scan of a date in an
// environment (0 when there is none): the value of live.CheckInTopic,
// which moves with every scan, whoever asks.
func (s *Service) LastSeq(ctx context.Context, env string, dateID int64) (int64, error) {
	return store.LastCheckIn(ctx, s.DB, env, dateID)
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
	t, err := store.DoorTicketByCode(ctx, s.DB, strings.ToUpper(code))
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
