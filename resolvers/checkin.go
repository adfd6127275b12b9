package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkin"
)

// scanner is the door device of the request.
// Errors: unauthorized when the request was not authenticated;
// scanner_key_required when an app's key made it.
func scanner(ctx context.Context) (checkin.Scanner, error) {
	p, err := auth.FromContext(ctx)
	if err != nil {
		return checkin.Scanner{}, err
	}
	if !p.Scanner() {
		return checkin.Scanner{}, apperr.New(apperr.ScannerKeyRequired,
			"Check-in takes a scanner key (svc_scan_…), not an app's API key.")
	}
	return checkin.Scanner{ID: p.KeyID, EventID: p.EventID, Environment: p.Environment}, nil
}

// CheckIn is POST /check-ins (and the checkIn mutation): one scan of the
// calling scanner under its optional Idempotency-Key (key "" for none).
// in is nil when REST could not read its body as a JSON object; problems
// are what REST's decoding found. replayed reports that the answer is
// the one saved for the key.
// Errors: unauthorized, scanner_key_required, and those of
// checkin.Service.CheckIn.
func (r *Resolver) CheckIn(ctx context.Context, key string, in *checkin.Input, problems apperr.Details) (v *checkin.View, replayed bool, err error) {
	sc, err := scanner(ctx)
	if err != nil {
		return nil, false, err
	}
	return r.CheckIns.CheckIn(ctx, sc, checkin.Request{Key: key, Input: in, Problems: problems})
}

// CheckInStats is GET /check-ins/stats (and Query.checkInStats): the door
// numbers of a date of the calling scanner's event, read now.
// Errors: unauthorized, scanner_key_required, event_date_not_found.
func (r *Resolver) CheckInStats(ctx context.Context, dateID int64) (*checkin.Stats, error) {
	sc, err := scanner(ctx)
	if err != nil {
		return nil, err
	}
	return r.CheckIns.Stats(ctx, sc, dateID)
}
