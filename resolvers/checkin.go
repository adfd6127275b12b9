package resolvers

import (
	"context"
	"errors"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/live"
)

// scanner is the door device of the request.
// Errors: unauthorized when the request was not authenticated;
// scanner_key_required when an app's key made it.
func scanner(ctx context.Context) (checkin.Scanner, error) {
	p, err := auth.FromContext(ctx)
	if err != nil {
		return checkin.Scanner{}, err
	}
	if err := p.RequireScanner(); err != nil {
		return checkin.Scanner{}, err
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

// CheckInManifest is GET /check-ins/manifest: the tickets of a date of
// the calling scanner's event changed after since, as the door holds
// them to decide offline.
// Errors: unauthorized, scanner_key_required, and those of
// checkin.Service.Manifest.
func (r *Resolver) CheckInManifest(ctx context.Context, req checkin.ManifestRequest) (*checkin.ManifestPage, error) {
	sc, err := scanner(ctx)
	if err != nil {
		return nil, err
	}
	return r.CheckIns.Manifest(ctx, sc, req)
}

// CheckInBatch is POST /check-ins/batch: the scans a door queued, each
// processed as CheckIn with its own idempotency key.
// Errors: unauthorized, scanner_key_required, and those of
// checkin.Service.Batch.
func (r *Resolver) CheckInBatch(ctx context.Context, scans []checkin.BatchScan, problems apperr.Details) ([]checkin.BatchResult, error) {
	sc, err := scanner(ctx)
	if err != nil {
		return nil, err
	}
	return r.CheckIns.Batch(ctx, sc, scans, problems)
}

// CheckInFeed is Subscription.checkIns: every scan of a date of the
// calling scanner's event, in its environment, from now until ctx ends,
// each as its door got it, none skipped (checkin.Feed), woken by the
// date's live.CheckInTopic on any instance. The subscription counts
// against the scanner key's own budget.
// Errors: unauthorized, scanner_key_required, event_date_not_found,
// subscription_limit_reached.
func (r *Resolver) CheckInFeed(ctx context.Context, dateID int64) (<-chan *checkin.View, error) {
	sc, err := scanner(ctx)
	if err != nil {
		return nil, err
	}
	feed, err := r.CheckIns.Feed(ctx, sc, dateID)
	if err != nil {
		return nil, err
	}
	wake, err := live.Watch(ctx, r.Live, live.ScannerTenant(sc.ID), live.CheckInTopic(sc.Environment, dateID))
	if err != nil {
		return nil, err
	}
	out := make(chan *checkin.View)
	go func() {
		defer close(out)
		feed.Follow(ctx, wake, func(v *checkin.View) bool {
			select {
			case out <- v:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return out, nil
}

// toCheckInInput is the checkIn mutation's input as the scan checkin
// validates; the idempotency key travels apart, as REST's header does.
func toCheckInInput(in model.CheckInInput) *checkin.Input {
	return &checkin.Input{Code: in.Code, EventdateID: in.EventdateID, Direction: in.Direction, Gate: in.Gate, ScannedAt: in.ScannedAt}
}

// checkInPayload is the answer of Mutation.checkIn: the scan, admitted or
// rejected, or why the request is not a scan as user errors. Refusals
// that are not about the input (topLevel) are returned as the error.
func checkInPayload(v *checkin.View, replayed bool, err error) (*model.CheckInPayload, error) {
	if err == nil {
		return &model.CheckInPayload{CheckIn: v, Replayed: replayed, UserErrors: []*model.UserError{}}, nil
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || topLevel(ae) {
		return nil, err
	}
	return &model.CheckInPayload{Replayed: replayed, UserErrors: userErrors(ae, "input")}, nil
}
