package checkin

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/boxoffice/boxoffice/store"
)

// Bounds of a scan (spec/fulfilment.md section 4).
const (
	// MaxCode and MaxGate are in characters.
	MaxCode = 128
	MaxGate = 64
	// MaxAhead and MaxAge bound an offline scan's scanned_at against the
	// server's clock: a device's clock may run a little fast, and a
	// device offline for days still uploads what it scanned.
	MaxAhead = 5 * time.Minute
	MaxAge   = 7 * 24 * time.Hour
)

// Input is a scan as either API hands it over; a nil field is absent.
// ScannedAt is an RFC 3339 date-time (GraphQL's DateTime, REST's string).
type Input struct {
	Code        *string
	EventdateID *int
	Direction   *string
	Gate        *string
	ScannedAt   *string
}

// Request is one scan under its optional Idempotency-Key ("" for none),
// with the problems REST's decoding of the body found (GraphQL coerces its
// input before the resolver runs, so it has none). Input is nil when REST
// could not read its body as a JSON object.
type Request struct {
	Key      string
	Input    *Input
	Problems apperr.Details
}

// scan is a validated Input.
type scan struct {
	code      string
	dateID    int64
	direction string
	gate      *string
	scannedAt time.Time
	// offline is the scanned_at the door sent, in UTC; "" when it sent none.
	offline string
	// cancelled is set when the date was cancelled: its tickets are void
	// at the door.
	cancelled bool
}

// validate checks a scan against the bounds, at now, adding its problems
// to those decoding found. The code is trimmed and upper-cased: codes are
// A-Z and 0-9 only, and a person typing one, or a reader that adds a line
// end, should not be refused for it. Text that is not UTF-8 or holds
// control characters (a NUL, say) is refused here and never reaches the
// database.
// Errors: validation_failed.
func validate(in *Input, problems apperr.Details, now time.Time) (*scan, error) {
	d := apperr.Details{}
	for f, msgs := range problems {
		d[f] = append(d[f], msgs...)
	}
	if in == nil {
		if len(d) == 0 {
			d.Add("body", "is required")
		}
		return nil, apperr.Validation(d)
	}
	s := &scan{direction: store.CheckInEntry, scannedAt: now}
	switch code := strings.TrimSpace(deref(in.Code)); {
	case in.Code == nil && d["code"] != nil: // the wrong type, already said
	case code == "":
		d.Add("code", "is required")
	case !text(code):
		d.Add("code", "must be UTF-8 text without control characters")
	case clientinput.Length(code) > MaxCode:
		d.Add("code", fmt.Sprintf("must be at most %d characters", MaxCode))
	default:
		s.code = store.TypedCode(code)
	}
	switch {
	case in.EventdateID == nil && d["eventdate_id"] != nil:
	case in.EventdateID == nil:
		d.Add("eventdate_id", "is required")
	case *in.EventdateID < 1:
		d.Add("eventdate_id", "must be a positive integer")
	default:
		s.dateID = int64(*in.EventdateID)
	}
	if in.Direction != nil {
		switch *in.Direction {
		case store.CheckInEntry, store.CheckInExit:
			s.direction = *in.Direction
		default:
			d.Add("direction", "must be entry or exit")
		}
	}
	if in.Gate != nil {
		switch g := strings.TrimSpace(*in.Gate); {
		case g == "":
		case !utf8.ValidString(g):
			d.Add("gate", "must be UTF-8 text")
		case clientinput.Length(g) > MaxGate:
			d.Add("gate", fmt.Sprintf("must be at most %d characters", MaxGate))
		case clientinput.NameProblem(g) != "":
			// Shown to door staff and operators: no control characters,
			// no bidirectional overrides.
			d.Add("gate", clientinput.NameProblem(g))
		default:
			s.gate = &g
		}
	}
	if in.ScannedAt != nil {
		at, err := time.Parse(time.RFC3339Nano, *in.ScannedAt)
		switch {
		case err != nil:
			d.Add("scanned_at", "must be an RFC 3339 date-time such as 2026-12-24T18:05:00Z")
		case at.After(now.Add(MaxAhead)):
			d.Add("scanned_at", "must not be more than 5 minutes ahead of the server's clock")
		case at.Before(now.Add(-MaxAge)):
			d.Add("scanned_at", "must not be more than 7 days old")
		default:
			s.scannedAt = at.UTC()
			s.offline = s.scannedAt.Format(time.RFC3339Nano)
		}
	}
	if err := apperr.Validation(d); err != nil {
		return nil, err
	}
	return s, nil
}

// text reports whether s is UTF-8 without control characters.
func text(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// canonical is what an Idempotency-Key's fingerprint hashes: the scan as
// validated, so a retry that spells the same scan differently (the
// default direction written out, a lower-case code) is the same scan.
func (s *scan) canonical() []byte {
	b, _ := json.Marshal([]any{s.code, s.dateID, s.direction, s.gate, s.offline})
	return b
}
