package checkin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/idempotency"
)

// MaxBatch bounds the scans of one batch (spec/offline-door.md section 2).
const MaxBatch = 500

// BatchScan is one scan of a batch as the body gave it: a scan's input,
// its idempotency key (nil when absent) and the problems decoding found.
// Input is nil when the scan was not a JSON object.
type BatchScan struct {
	Key      *string
	Input    *Input
	Problems apperr.Details
}

// BatchResult is one scan's answer: the Check-in it got, or why it is
// not a scan.
type BatchResult struct {
	CheckIn *View
	Err     *apperr.Error
}

// Batch processes the scans a door queued, in the order sent, each
// exactly as CheckIn with its idempotency key (required here): sending
// the same batch again answers the same and records nothing new. A scan
// that is not one (validation_failed, event_date_not_found,
// idempotency_conflict, and rate_limit_exceeded for a code that matches
// no ticket beyond the scanner's budget, not recorded) answers its error
// in its place; the others are processed all the same. problems are what
// decoding the body found outside the scans.
// Errors: validation_failed (the body, or not 1 to MaxBatch scans; details
// keyed scans); an error that is not a refusal of one scan ends the batch,
// and a resend is safe: what was recorded answers its saved answer.
func (s *Service) Batch(ctx context.Context, sc Scanner, scans []BatchScan, problems apperr.Details) ([]BatchResult, error) {
	d := apperr.Details{}
	for f, msgs := range problems {
		d[f] = append(d[f], msgs...)
	}
	if len(d) == 0 && (len(scans) < 1 || len(scans) > MaxBatch) {
		d.Add("scans", fmt.Sprintf("must hold 1 to %d scans", MaxBatch))
	}
	if err := apperr.Validation(d); err != nil {
		return nil, err
	}
	out := make([]BatchResult, len(scans))
	for i, b := range scans {
		r := Request{Input: b.Input, Problems: b.Problems}
		if problem := batchKeyProblem(b.Key); problem != "" {
			r.Problems = apperr.Details{}
			for f, msgs := range b.Problems {
				r.Problems[f] = append(r.Problems[f], msgs...)
			}
			r.Problems.Add("idempotency_key", problem)
		} else {
			r.Key = *b.Key
		}
		v, _, err := s.CheckIn(ctx, sc, r)
		var ae *apperr.Error
		switch {
		case err == nil:
			out[i].CheckIn = v
		case errors.As(err, &ae):
			out[i].Err = ae
		default:
			return nil, err
		}
	}
	return out, nil
}

// batchKeyProblem says what is wrong with a batch scan's idempotency key,
// "" when nothing is.
func batchKeyProblem(key *string) string {
	switch {
	case key == nil || *key == "":
		return "is required"
	case utf8.RuneCountInString(*key) > idempotency.MaxKeyLength:
		return fmt.Sprintf("must be at most %d characters", idempotency.MaxKeyLength)
	case !utf8.ValidString(*key) || strings.ContainsFunc(*key, unicode.IsControl):
		return "must be UTF-8 text without control characters"
	}
	return ""
}
