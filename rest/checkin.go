package rest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkin"
)

// maxCheckInBody bounds a check-in request body; the largest valid one
// (a 128-character code, a 64-character gate) is far smaller.
const maxCheckInBody = 16 << 10

// checkInPrefix is where the check-in routes live: they take scanner
// keys, and no other route does.
const checkInPrefix = "/api/v1/check-ins"

// CheckInRoute reports whether r is for a check-in route (spec/fulfilment.md
// section 4), those a scanner key opens and an app's key does not.
func CheckInRoute(r *http.Request) bool {
	return r.URL.Path == checkInPrefix || strings.HasPrefix(r.URL.Path, checkInPrefix+"/")
}

// checkIn is POST /api/v1/check-ins: the optional Idempotency-Key header
// and the decoded JSON body go to the resolver the checkIn mutation
// calls. A decided scan, admitted or rejected, is a 200.
func (h *Handler) checkIn(w http.ResponseWriter, r *http.Request) {
	var (
		in       *checkin.Input
		problems apperr.Details
	)
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		problems = apperr.Details{"body": {"Content-Type must be application/json"}}
	} else {
		in, problems = decodeCheckIn(http.MaxBytesReader(w, r.Body, maxCheckInBody))
	}
	v, replayed, err := h.Resolver.CheckIn(r.Context(), r.Header.Get("Idempotency-Key"), in, problems)
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data *checkin.View `json:"data"`
		Meta statusMeta    `json:"meta"`
	}{v, statusMeta{http.StatusOK}})
}

// checkInStats is GET /api/v1/check-ins/stats?eventdate_id=ID.
func (h *Handler) checkInStats(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	id := q.int("eventdate_id")
	switch {
	case id == nil && q.details["eventdate_id"] == nil:
		q.problem("eventdate_id", "is required")
	case id != nil && *id < 1:
		q.problem("eventdate_id", "must be a positive integer")
	}
	if err := q.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	st, err := h.Resolver.CheckInStats(r.Context(), int64(*id))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data *checkin.Stats `json:"data"`
	}{st})
}

// checkInManifest is GET /api/v1/check-ins/manifest?eventdate_id=ID
// [&since=TOKEN][&limit=N].
func (h *Handler) checkInManifest(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	id := q.int("eventdate_id")
	switch {
	case id == nil && q.details["eventdate_id"] == nil:
		q.problem("eventdate_id", "is required")
	case id != nil && *id < 1:
		q.problem("eventdate_id", "must be a positive integer")
	}
	req := checkin.ManifestRequest{Since: q.get("since"), Limit: q.int("limit")}
	if err := q.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	req.EventdateID = int64(*id)
	p, err := h.Resolver.CheckInManifest(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data []checkin.ManifestEntry `json:"data"`
		Meta any                     `json:"meta"`
	}{p.Entries, struct {
		NextSince string `json:"next_since"`
		HasMore   bool   `json:"has_more"`
	}{p.NextSince, p.HasMore}})
}

// maxBatchBody bounds a batch's body: 500 of the largest valid scans
// (a 128-character code and key, a 64-character gate, a date-time) fit
// in well under a megabyte.
const maxBatchBody = 1 << 20

// batchResult is one scan's place in a batch's answer: its Check-in, or
// the error object of a scan that is not one.
type batchResult checkin.BatchResult

func (b batchResult) MarshalJSON() ([]byte, error) {
	if b.Err != nil {
		return json.Marshal(errorBody{Error: errorJSON{Code: b.Err.Code, Message: b.Err.Message, Details: b.Err.Details}})
	}
	return json.Marshal(b.CheckIn)
}

// checkInBatch is POST /api/v1/check-ins/batch: {scans: [Scan]}, each a
// POST /api/v1/check-ins body with its idempotency_key. The answer is a
// 200 with one result per scan, in the order sent.
func (h *Handler) checkInBatch(w http.ResponseWriter, r *http.Request) {
	var (
		scans    []checkin.BatchScan
		problems apperr.Details
	)
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		problems = apperr.Details{"body": {"Content-Type must be application/json"}}
	} else {
		scans, problems = decodeBatch(http.MaxBytesReader(w, r.Body, maxBatchBody))
	}
	results, err := h.Resolver.CheckInBatch(r.Context(), scans, problems)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]batchResult, len(results))
	for i, res := range results {
		out[i] = batchResult(res)
	}
	writeJSON(w, http.StatusOK, struct {
		Data []batchResult `json:"data"`
	}{out})
}

// decodeBatch reads {scans: [...]}: each scan as decodeCheckIn reads a
// check-in's body, with its idempotency_key; problems of the body itself
// are returned apart, keyed body and scans.
func decodeBatch(body io.Reader) ([]checkin.BatchScan, apperr.Details) {
	obj, d := decodeObject(body)
	if obj == nil {
		return nil, d
	}
	raw, present := obj["scans"]
	list, isList := raw.([]any)
	switch {
	case !present:
		d.Add("scans", "is required")
		return nil, d
	case !isList:
		d.Add("scans", "must be an array of scans")
		return nil, d
	case len(list) > checkin.MaxBatch:
		d.Add("scans", fmt.Sprintf("must hold 1 to %d scans", checkin.MaxBatch))
		return nil, d
	}
	scans := make([]checkin.BatchScan, len(list))
	for i, item := range list {
		sd := apperr.Details{}
		scan, ok := item.(map[string]any)
		if !ok {
			sd.Add("scan", "must be a JSON object")
			scans[i] = checkin.BatchScan{Problems: sd}
			continue
		}
		scans[i] = checkin.BatchScan{Input: checkInInput(sd, scan), Key: jsonString(sd, scan, "idempotency_key", "idempotency_key"),
			Problems: sd}
	}
	return scans, d
}

// decodeCheckIn reads the JSON body of POST /api/v1/check-ins as the
// mutation's input, with the problems found keyed by field, as
// decodeCheckout does; the input is nil when the body is not a JSON
// object at all. Unknown fields are ignored.
func decodeCheckIn(body io.Reader) (*checkin.Input, apperr.Details) {
	obj, d := decodeObject(body)
	if obj == nil {
		return nil, d
	}
	return checkInInput(d, obj), d
}

// checkInInput is a check-in's fields of obj, their problems added to d.
func checkInInput(d apperr.Details, obj map[string]any) *checkin.Input {
	return &checkin.Input{
		Code:        jsonString(d, obj, "code", "code"),
		EventdateID: jsonInt(d, obj, "eventdate_id", "eventdate_id"),
		Direction:   jsonString(d, obj, "direction", "direction"),
		Gate:        jsonString(d, obj, "gate", "gate"),
		ScannedAt:   jsonString(d, obj, "scanned_at", "scanned_at"),
	}
}
