package rest

import (
	"encoding/json"
	"errors"
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

// decodeCheckIn reads the JSON body of POST /api/v1/check-ins as the
// mutation's input, with the problems found keyed by field, as
// decodeCheckout does; the input is nil when the body is not a JSON
// object at all. Unknown fields are ignored.
func decodeCheckIn(body io.Reader) (*checkin.Input, apperr.Details) {
	d := apperr.Details{}
	dec := json.NewDecoder(body)
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON object")
	}
	if err != nil {
		d.Add("body", bodyProblem(err))
		return nil, d
	}
	obj, ok := v.(map[string]any)
	if !ok {
		d.Add("body", "must be a JSON object")
		return nil, d
	}
	return &checkin.Input{
		Code:        jsonString(d, obj, "code", "code"),
		EventdateID: jsonInt(d, obj, "eventdate_id", "eventdate_id"),
		Direction:   jsonString(d, obj, "direction", "direction"),
		Gate:        jsonString(d, obj, "gate", "gate"),
		ScannedAt:   jsonString(d, obj, "scanned_at", "scanned_at"),
	}, d
}
