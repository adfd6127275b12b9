package doorpage

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
)

// datesAnswer is GET /door/dates's JSON: {data: {event, environment,
// dates}}, shaped like the API's answers.
type datesAnswer struct {
	Data datesData `json:"data"`
}

type datesData struct {
	Event       eventJSON  `json:"event"`
	Environment string     `json:"environment"`
	Dates       []dateJSON `json:"dates"`
}

type eventJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// dateJSON is a date as the page lists it: worded here, in the event's
// timezone, so every phone shows the organiser's clock.
type dateJSON struct {
	ID int64 `json:"id"`
	// Day and Time are the list's two lines, "Thu, 24 Dec 2026" and
	// "6:00 PM – 11:00 PM"; Label is both in one ("… · …"); Short is the
	// start alone for the scan screen's header, "Thu, 24 Dec · 6:00 PM".
	Day          string `json:"day"`
	Time         string `json:"time"`
	Label        string `json:"label"`
	Short        string `json:"short"`
	Venue        string `json:"venue"`
	StartdateISO string `json:"startdate_iso"`
	// Today: the date starts today in the event's timezone, or is under
	// way; the page marks it.
	Today bool `json:"today"`
	// Over: the date has ended (a date without an end, a day after its
	// start); the page greys it out.
	Over bool `json:"over"`
}

// errNoEvent is Event returning neither an event nor an error.
var errNoEvent = errors.New("doorpage: Event returned no event")

// dates answers GET /door/dates: the event and dates of the scanner key in
// X-API-Key, as Event finds them.
func (h *Handler) dates(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.fail(w, r, apperr.New(apperr.MethodNotAllowed, "%s is not allowed here; use GET.", r.Method))
		return
	}
	ev, err := h.Event(r.Context(), r.Header.Get("X-API-Key"))
	if err == nil && ev == nil {
		err = errNoEvent
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	out := datesData{Event: eventJSON{ID: ev.ID, Name: ev.Name}, Environment: ev.Environment, Dates: make([]dateJSON, 0, len(ev.Dates))}
	for _, d := range ev.Dates {
		day, clock := words(d.Start, d.End)
		out.Dates = append(out.Dates, dateJSON{
			ID:           d.ID,
			Day:          day,
			Time:         clock,
			Label:        day + " · " + clock,
			Short:        d.Start.Format("Mon, 2 Jan · 3:04 PM"),
			Venue:        venue(d.Venue),
			StartdateISO: d.Start.Format(time.RFC3339),
			Today:        today(d, now),
			Over:         over(d, now),
		})
	}
	writeJSON(w, r, http.StatusOK, datesAnswer{Data: out})
}

// words words a date's start and end in their own zone: the start's day,
// "Thu, 24 Dec 2026", and the clock times, "6:00 PM – 11:00 PM", with
// the end's day when it ends on another, "6:00 PM – Sat, 26 Dec 2:00 AM".
func words(start, end time.Time) (day, clock string) {
	const clockLayout = "3:04 PM"
	day, clock = start.Format("Mon, 2 Jan 2006"), start.Format(clockLayout)
	if end.IsZero() || !end.After(start) {
		return day, clock
	}
	end = end.In(start.Location())
	y1, m1, d1 := start.Date()
	y2, m2, d2 := end.Date()
	if y1 == y2 && m1 == m2 && d1 == d2 {
		return day, clock + " – " + end.Format(clockLayout)
	}
	return day, clock + " – " + end.Format("Mon, 2 Jan "+clockLayout)
}

func venue(name string) string {
	if name == "" {
		return "Online"
	}
	return name
}

func today(d Date, now time.Time) bool {
	n := now.In(d.Start.Location())
	y1, m1, d1 := d.Start.Date()
	y2, m2, d2 := n.Date()
	if y1 == y2 && m1 == m2 && d1 == d2 {
		return true
	}
	return !now.Before(d.Start) && !over(d, now)
}

func over(d Date, now time.Time) bool {
	end := d.End
	if end.IsZero() || !end.After(d.Start) {
		end = d.Start.Add(24 * time.Hour)
	}
	return !now.Before(end)
}

// fail answers err: with WriteError when set, else as the API's error
// JSON, logging a 5xx (never the key: the request's headers are not
// logged).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if h.WriteError != nil {
		h.WriteError(w, r, err)
		return
	}
	ae := apperr.From(err)
	if ae.Status() >= 500 {
		h.log().ErrorContext(r.Context(), "door dates", "error", err)
	}
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	type errorJSON struct {
		Code    apperr.Code    `json:"code"`
		Message string         `json:"message"`
		Details apperr.Details `json:"details,omitempty"`
	}
	writeJSON(w, r, ae.Status(), struct {
		Error errorJSON `json:"error"`
	}{errorJSON{ae.Code, ae.Message, ae.Details}})
}

// writeJSON writes v with status, uncached (the answer follows from a
// secret key).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":{"code":"internal_error","message":"Internal error."}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
