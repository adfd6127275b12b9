package doorpage

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/go-chi/chi/v5"
)

// doorFixture is what the browser test needs of a server: its handler
// (the door page and the check-in API on one origin), a scanner key, and
// what is known of its event and tickets.
type doorFixture struct {
	Handler   http.Handler
	Key       string
	EventName string
	// DateID is the date the test picks, out of the event's two or more;
	// DateDay is the day the page lists it under.
	DateID  int64
	DateDay string
	// Camera, Typed and ExitCode are valid tickets of DateID, none checked
	// in yet; Camera is shown to the fake camera. Unknown is a code no
	// ticket has.
	Camera, Typed, ExitCode, Unknown string
	// CameraLine is how the result names the Camera ticket: its type and
	// "Ticket n of N" (or "Ticket n" while the API's answer does not say N).
	CameraLine string
}

// newDoorFixture builds the server the browser test runs against. Until
// the check-in API is on main it is newStandInFixture; then it becomes a
// function that starts the real service with a scanner key and issued
// tickets, and the test stays as it is.
var newDoorFixture = newStandInFixture

// Test codes in the shape of test tickets' (TEST and 32 characters of
// A-Z2-7).
const (
	standInKey     = "svc_scan_test_Zq8w3Rj5Tn2Vb7Xc4Kp9Lm6Hd1Fs0Ga"
	cameraCode     = "TESTK7Q2M9XRV4H8PZ3WJ6N5BDFGC2LTYAQE"
	typedCode      = "TESTQE7K2M9XRV4H8PZ3WJ6N5BDFGC2LTYAB"
	exitCode       = "TESTWJ6N5BDFGC2LTYAQE7K2M9XRV4H8PZ3C"
	otherDateCode  = "TESTH8PZ3WJ6N5BDFGC2LTYAQE7K2M9XRV4D"
	unknownCode    = "TESTAAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH"
	standInEventID = 41
	standInDate1   = 501
	standInDate2   = 502
)

// newStandInFixture is a STAND-IN for the real service: the door page
// mounted as the service mounts it, beside a small in-test version of
// POST /api/v1/check-ins and GET /api/v1/check-ins/stats that answers in
// the spec's shapes (and adds meta.tickets_in_order, which the page shows
// as "n of N"). It checks only what the browser test exercises.
func newStandInFixture(t *testing.T) *doorFixture {
	t.Helper()
	zone, err := time.LoadLocation("Africa/Accra")
	if err != nil {
		zone = time.FixedZone("GMT", 0)
	}
	api := &standInAPI{tickets: map[string]*standInTicket{
		cameraCode:    {id: "itk_1", name: "General admission", position: 2, of: 3, date: standInDate2},
		typedCode:     {id: "itk_2", name: "VIP", position: 1, of: 1, date: standInDate2},
		exitCode:      {id: "itk_3", name: "General admission", position: 3, of: 3, date: standInDate2},
		otherDateCode: {id: "itk_4", name: "General admission", position: 1, of: 1, date: standInDate1},
	}, replies: map[string][]byte{}}
	now := time.Now().In(zone)
	h := &Handler{
		Event: func(_ context.Context, key string) (*Event, error) {
			if err := api.auth(key); err != nil {
				return nil, err
			}
			return &Event{ID: standInEventID, Name: "Highlife Night", Environment: "test", Dates: []Date{
				{ID: standInDate1, Start: now.Add(-48 * time.Hour), End: now.Add(-44 * time.Hour), Venue: "National Theatre"},
				{ID: standInDate2, Start: now.Add(time.Hour), End: now.Add(5 * time.Hour), Venue: "National Theatre"},
			}}, nil
		},
	}
	r := chi.NewRouter()
	h.Routes(r)
	r.Post(CheckInsPath, api.checkIn)
	r.Get(StatsPath, api.stats)
	return &doorFixture{
		Handler:    r,
		Key:        standInKey,
		EventName:  "Highlife Night",
		DateID:     standInDate2,
		DateDay:    now.Add(time.Hour).Format("Mon, 2 Jan 2006"),
		Camera:     cameraCode,
		Typed:      typedCode,
		ExitCode:   exitCode,
		Unknown:    unknownCode,
		CameraLine: "General admission · Ticket 2 of 3",
	}
}

type standInTicket struct {
	id, name     string
	position, of int
	date         int64
	inside       bool
	checkedInAt  time.Time
	admittedAt   time.Time
	admittedGate string
}

// standInAPI holds the stand-in's tickets and the answers it gave, by
// Idempotency-Key.
type standInAPI struct {
	mu       sync.Mutex
	tickets  map[string]*standInTicket
	replies  map[string][]byte
	scans    int
	rejected int
}

func (a *standInAPI) auth(key string) error {
	switch {
	case key == "":
		return apperr.New(apperr.MissingAPIKey, "The X-API-Key header is missing.")
	case key != standInKey:
		return apperr.New(apperr.InvalidAPIKey, "The API key is not valid.")
	}
	return nil
}

func standInError(w http.ResponseWriter, err error) {
	ae := apperr.From(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ae.Status())
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": ae.Code, "message": ae.Message}})
}

func (a *standInAPI) checkIn(w http.ResponseWriter, r *http.Request) {
	if err := a.auth(r.Header.Get("X-API-Key")); err != nil {
		standInError(w, err)
		return
	}
	var in struct {
		Code        string `json:"code"`
		EventdateID int64  `json:"eventdate_id"`
		Direction   string `json:"direction"`
		Gate        string `json:"gate"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.Code == "" || len(in.Code) > 128 || len(in.Gate) > 64 ||
		(in.Direction != "" && in.Direction != "entry" && in.Direction != "exit") {
		standInError(w, apperr.New(apperr.ValidationFailed, "The request payload failed validation."))
		return
	}
	if in.EventdateID != standInDate1 && in.EventdateID != standInDate2 {
		standInError(w, apperr.New(apperr.EventDateNotFound, "Event date not found."))
		return
	}
	if in.Direction == "" {
		in.Direction = "entry"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	idem := r.Header.Get("Idempotency-Key")
	if reply, ok := a.replies[idem]; ok && idem != "" {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Idempotent-Replayed", "true")
		_, _ = w.Write(reply)
		return
	}
	now := time.Now().UTC()
	a.scans++
	out := map[string]any{
		"id": "chk_" + strconv.Itoa(a.scans), "direction": in.Direction, "scanned_at": now.Format(time.RFC3339),
		"gate": nil, "reason": nil, "ticket": nil, "previous": nil, "result": "rejected",
	}
	if in.Gate != "" {
		out["gate"] = in.Gate
	}
	meta := map[string]any{"status_code": 200}
	tk := a.tickets[in.Code]
	reason := ""
	switch {
	case tk == nil:
		reason = "unknown_code"
	case tk.date != in.EventdateID:
		reason = "wrong_date"
	case in.Direction == "entry" && tk.inside:
		reason = "already_checked_in"
		out["previous"] = map[string]any{"scanned_at": tk.admittedAt.Format(time.RFC3339), "gate": tk.admittedGate}
	case in.Direction == "exit" && !tk.inside:
		reason = "not_inside"
	}
	if tk != nil {
		if reason == "" {
			tk.inside = in.Direction == "entry"
			if tk.inside {
				tk.admittedAt, tk.admittedGate = now, in.Gate
				if tk.checkedInAt.IsZero() {
					tk.checkedInAt = now
				}
			}
		}
		status := "valid"
		var checked any
		if !tk.checkedInAt.IsZero() {
			status, checked = "checked_in", tk.checkedInAt.Format(time.RFC3339)
		}
		out["ticket"] = map[string]any{
			"id": tk.id, "code": in.Code, "order_reference": "sbx_standin", "ticket_id": 7, "ticket_name": tk.name,
			"event_id": standInEventID, "eventdate_id": tk.date, "position": tk.position, "status": status,
			"checked_in_at": checked, "environment": "test",
		}
		meta["tickets_in_order"] = tk.of
	}
	if reason == "" {
		out["result"] = "admitted"
	} else {
		out["reason"] = reason
		a.rejected++
	}
	reply, _ := json.Marshal(map[string]any{"data": out, "meta": meta})
	if idem != "" {
		a.replies[idem] = reply
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(reply)
}

func (a *standInAPI) stats(w http.ResponseWriter, r *http.Request) {
	if err := a.auth(r.Header.Get("X-API-Key")); err != nil {
		standInError(w, err)
		return
	}
	id, err := strconv.ParseInt(r.URL.Query().Get("eventdate_id"), 10, 64)
	if err != nil || (id != standInDate1 && id != standInDate2) {
		standInError(w, apperr.New(apperr.EventDateNotFound, "Event date not found."))
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var issued, checked, inside int
	for _, tk := range a.tickets {
		if tk.date != id {
			continue
		}
		issued++
		if !tk.checkedInAt.IsZero() {
			checked++
		}
		if tk.inside {
			inside++
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{
		"eventdate_id": id, "issued": issued, "checked_in": checked, "inside": inside, "rejected_scans": a.rejected,
	}})
}
