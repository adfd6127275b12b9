package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
	"time"
)

// DefaultTimezone is the timezone of an event whose file entry names none,
// and the timezone the events listing reports.
const DefaultTimezone = "Africa/Accra"

// File is an operator's catalog file (OPERATOR.md, "Catalog file").
// References are the upsert keys.
type File struct {
	Venues []VenueSpec `json:"venues"`
	Events []EventSpec `json:"events"`
}

// VenueSpec is one venue of a catalog file.
type VenueSpec struct {
	Reference string   `json:"reference"`
	Name      string   `json:"name"`
	Slug      string   `json:"slug"`
	Street    *string  `json:"street"`
	City      *string  `json:"city"`
	State     *string  `json:"state"`
	Lat       *float64 `json:"lat"`
	Lng       *float64 `json:"lng"`
}

// EventSpec is one event of a catalog file with its dates.
type EventSpec struct {
	Reference          string     `json:"reference"`
	Name               string     `json:"name"`
	Slug               string     `json:"slug"`
	Description        *string    `json:"description"`
	ImageURL           *string    `json:"image_url"`
	Timezone           string     `json:"timezone"`
	Published          bool       `json:"published"`
	HiddenFromListings bool       `json:"hidden_from_listings"`
	Private            bool       `json:"private"`
	PasswordProtected  bool       `json:"password_protected"`
	USSDCode           *string    `json:"ussd_code"`
	USSDFullCode       *string    `json:"ussd_full_code"`
	SalesStart         *string    `json:"sales_start"`
	SalesEnd           *string    `json:"sales_end"`
	Dates              []DateSpec `json:"dates"`
}

// DateSpec is one date of an event. Active defaults to true when omitted.
type DateSpec struct {
	Reference    string       `json:"reference"`
	Start        string       `json:"start"`
	End          string       `json:"end"`
	Online       bool         `json:"online"`
	Venue        *string      `json:"venue"`
	Active       *bool        `json:"active"`
	PayoutLocked bool         `json:"payout_locked"`
	Tickets      []TicketSpec `json:"tickets"`
}

// TicketSpec is one ticket type of a date. Quantity nil means unlimited;
// Sold seeds how many are already sold when the ticket is first created.
type TicketSpec struct {
	Reference          string  `json:"reference"`
	Name               string  `json:"name"`
	Description        *string `json:"description"`
	Free               bool    `json:"free"`
	Price              *string `json:"price"`
	PromotionalPrice   *string `json:"promotional_price"`
	Quantity           *int64  `json:"quantity"`
	Sold               int64   `json:"sold"`
	TicketsPerAttendee *int64  `json:"tickets_per_attendee"`
	SalesStart         *string `json:"sales_start"`
	SalesEnd           *string `json:"sales_end"`
	Currency           string  `json:"currency"`
}

// FileError lists every problem of a refused catalog file, each naming the
// reference and field at fault.
type FileError struct{ Problems []string }

func (e *FileError) Error() string {
	if len(e.Problems) == 1 {
		return "catalog file refused: " + e.Problems[0]
	}
	return fmt.Sprintf("catalog file refused (%d problems):\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// ParseFile decodes a catalog file strictly: unknown keys and trailing data
// are refused.
func ParseFile(r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, &FileError{Problems: []string{"not a valid catalog file: " + err.Error()}}
	}
	if dec.More() {
		return nil, &FileError{Problems: []string{"not a valid catalog file: data after the top-level object"}}
	}
	return &f, nil
}

// problems collects validation messages, each prefixed with where it is.
type problems []string

func (p *problems) add(where, field, format string, args ...any) {
	*p = append(*p, fmt.Sprintf("%s: %s: %s", where, field, fmt.Sprintf(format, args...)))
}

func where(kind string, i int, ref string) string {
	if ref == "" {
		return fmt.Sprintf("%s[%d]", kind, i)
	}
	return fmt.Sprintf("%s %q", kind, ref)
}

// parseInstant reads an optional RFC 3339 time.
func parseInstant(p *problems, at, field string, s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	if *s == "" {
		p.add(at, field, "is required")
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		p.add(at, field, "%q is not an RFC 3339 time such as 2026-12-24T18:00:00Z", *s)
		return time.Time{}
	}
	return t.UTC().Truncate(time.Second)
}

func required(p *problems, at, field, v string) {
	if strings.TrimSpace(v) == "" {
		p.add(at, field, "is required")
	}
}

func unique(p *problems, seen map[string]bool, kind string, i int, ref string) {
	if ref == "" {
		p.add(where(kind, i, ref), "reference", "is required")
		return
	}
	if seen[ref] {
		p.add(where(kind, i, ref), "reference", "appears more than once in the file")
	}
	seen[ref] = true
}

// Validate checks every rule a file can be checked against without the
// database and returns a *FileError listing all problems, or nil.
func (f *File) Validate() error {
	var p problems
	seen := map[string]map[string]bool{"venue": {}, "event": {}, "date": {}, "ticket": {}}
	for i, v := range f.Venues {
		at := where("venue", i, v.Reference)
		unique(&p, seen["venue"], "venue", i, v.Reference)
		required(&p, at, "name", v.Name)
		required(&p, at, "slug", v.Slug)
		if v.Lat != nil && (math.IsNaN(*v.Lat) || *v.Lat < -90 || *v.Lat > 90) {
			p.add(at, "lat", "must be between -90 and 90")
		}
		if v.Lng != nil && (math.IsNaN(*v.Lng) || *v.Lng < -180 || *v.Lng > 180) {
			p.add(at, "lng", "must be between -180 and 180")
		}
	}
	for i := range f.Events {
		f.Events[i].validate(&p, seen, i)
	}
	if len(p) > 0 {
		return &FileError{Problems: p}
	}
	return nil
}

func (e *EventSpec) validate(p *problems, seen map[string]map[string]bool, i int) {
	at := where("event", i, e.Reference)
	unique(p, seen["event"], "event", i, e.Reference)
	required(p, at, "name", e.Name)
	required(p, at, "slug", e.Slug)
	if e.Timezone != "" {
		if _, err := time.LoadLocation(e.Timezone); err != nil || e.Timezone == "Local" {
			p.add(at, "timezone", "%q is not an IANA timezone such as Africa/Accra", e.Timezone)
		}
	}
	if e.ImageURL != nil {
		if u, err := url.Parse(*e.ImageURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			p.add(at, "image_url", "%q is not an absolute http(s) URL", *e.ImageURL)
		}
	}
	start := parseInstant(p, at, "sales_start", e.SalesStart)
	end := parseInstant(p, at, "sales_end", e.SalesEnd)
	if !start.IsZero() && !end.IsZero() && !end.After(start) {
		p.add(at, "sales_end", "must be after sales_start")
	}
	for j := range e.Dates {
		d := &e.Dates[j]
		dat := where("date", j, d.Reference)
		unique(p, seen["date"], "date", j, d.Reference)
		ds := parseInstant(p, dat, "start", &d.Start)
		de := parseInstant(p, dat, "end", &d.End)
		if !ds.IsZero() && !de.IsZero() && !de.After(ds) {
			p.add(dat, "end", "must be after start")
		}
		if d.Venue == nil && !d.Online {
			p.add(dat, "venue", "is required unless the date is online")
		}
		for k := range d.Tickets {
			d.Tickets[k].validate(p, seen, k)
		}
	}
}

func (t *TicketSpec) validate(p *problems, seen map[string]map[string]bool, k int) {
	at := where("ticket", k, t.Reference)
	unique(p, seen["ticket"], "ticket", k, t.Reference)
	required(p, at, "name", t.Name)
	if !ValidCurrency(t.Currency) {
		p.add(at, "currency", "%q is not an ISO 4217 currency code such as GHS", t.Currency)
	}
	if t.Price == nil && !t.Free {
		p.add(at, "price", "is required for a ticket that is not free")
	}
	if t.Price != nil {
		if _, err := ParseAmount(*t.Price); err != nil {
			p.add(at, "price", "%q %v", *t.Price, err)
		}
	}
	if t.PromotionalPrice != nil {
		if _, err := ParseAmount(*t.PromotionalPrice); err != nil {
			p.add(at, "promotional_price", "%q %v", *t.PromotionalPrice, err)
		}
	}
	if t.Quantity != nil && *t.Quantity < 0 {
		p.add(at, "quantity", "must be zero or more, or null for unlimited")
	}
	if t.Sold < 0 {
		p.add(at, "sold", "must be zero or more")
	}
	if t.Quantity != nil && t.Sold > *t.Quantity {
		p.add(at, "sold", "%d is more than the quantity %d", t.Sold, *t.Quantity)
	}
	if t.TicketsPerAttendee != nil && *t.TicketsPerAttendee < 1 {
		p.add(at, "tickets_per_attendee", "must be at least 1, or null for no limit")
	}
	start := parseInstant(p, at, "sales_start", t.SalesStart)
	end := parseInstant(p, at, "sales_end", t.SalesEnd)
	if !start.IsZero() && !end.IsZero() && !end.After(start) {
		p.add(at, "sales_end", "must be after sales_start")
	}
}
