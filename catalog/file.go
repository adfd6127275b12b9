package catalog

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/clientinput"
)

// DefaultTimezone is the timezone of an event whose file entry names none,
// and the timezone the events listing reports.
const DefaultTimezone = "Africa/Accra"

// File is an operator's catalog file (docs/operator.md, "The catalog file").
// References are the upsert keys.
type File struct {
	Venues []VenueSpec `json:"venues"`
	Events []EventSpec `json:"events"`

	// pos and decoded are what ParseFile learnt of the text: where each
	// object is, and the values of the wrong JSON type it could not bind.
	pos     positions
	decoded problems
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
// reference and field at fault, and the line when the file was parsed.
type FileError struct{ Problems []string }

func (e *FileError) Error() string {
	if len(e.Problems) == 1 {
		return "catalog file refused: " + e.Problems[0]
	}
	return fmt.Sprintf("catalog file refused (%d problems):\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// ParseFile reads a catalog file. Only a file that is not JSON at all is
// refused here (with its line); values of the wrong JSON type and unknown
// keys are kept as problems of the File, which Validate and Import report
// together with every other problem, each by reference, field and line.
func ParseFile(r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	root, err := readTree(data)
	if err != nil {
		return nil, &FileError{Problems: []string{err.Error()}}
	}
	f := &File{pos: positions{}}
	b := &binder{pos: f.pos}
	if root.kind != objectNode {
		return nil, &FileError{Problems: []string{fmt.Sprintf(
			"not a valid catalog file: it must be one JSON object ({\"venues\": […], \"events\": […]}), not %s", root.describe())}}
	}
	b.bindStruct(root, reflect.ValueOf(f).Elem(), "catalog file")
	f.decoded = b.problems
	return f, nil
}

// positions records, for each object bound from a file (keyed by its
// address), how messages name it and the lines of it and its fields.
type positions map[any]*objectPos

// objectPos is where one object of a file is.
type objectPos struct {
	label  string         // `ticket "TKT-1"`, or `ticket[2]` before it has a reference
	line   int            // 0 when the File was not parsed from text
	fields map[string]int // the line of each key
	// bad are the fields whose value had the wrong JSON type; unbound is an
	// element of a list that was not an object at all. Both are reported
	// once, when bound, and not checked again.
	bad     map[string]bool
	unbound bool
}

// at returns the position of the object at ptr, which messages name label.
func (p positions) at(ptr any, label string) *objectPos {
	if o := p[ptr]; o != nil && o.label == label {
		return o
	}
	return &objectPos{label: label}
}

// unbound reports whether the list element at ptr was not an object.
func (p positions) unbound(ptr any) bool { return p[ptr] != nil && p[ptr].unbound }

// problem is one thing wrong with a file.
type problem struct {
	line int
	text string
}

// problems collects what is wrong with a file, each prefixed with where it is.
type problems []problem

// add records a problem of field of the object at. A field whose value had
// the wrong JSON type has been reported already, and is not checked twice.
func (p *problems) add(at *objectPos, field, format string, args ...any) {
	if at.bad[field] {
		return
	}
	line := at.line
	if l, ok := at.fields[field]; ok {
		line = l
	}
	text := at.label + ": "
	if field != "" {
		text += field + ": "
	}
	text += fmt.Sprintf(format, args...)
	if line > 0 {
		text += fmt.Sprintf(" (line %d)", line)
	}
	*p = append(*p, problem{line: line, text: text})
}

// err returns a *FileError listing the problems in file order, or nil.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	sorted := slices.Clone(p)
	slices.SortStableFunc(sorted, func(a, b problem) int { return cmp.Compare(a.line, b.line) })
	out := make([]string, len(sorted))
	for i, pr := range sorted {
		out[i] = pr.text
	}
	return &FileError{Problems: out}
}

func where(kind string, i int, ref string) string {
	if ref == "" {
		return fmt.Sprintf("%s[%d]", kind, i)
	}
	return fmt.Sprintf("%s %q", kind, ref)
}

// instant reads an optional RFC 3339 time; the zero time when absent.
func instant(s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC().Truncate(time.Second), nil
}

// mustInstant reads a time that Validate has accepted.
func mustInstant(s *string) time.Time {
	t, _ := instant(s)
	return t
}

// parseInstant reads an optional RFC 3339 time, reporting a bad one.
func parseInstant(p *problems, at *objectPos, field string, s *string) time.Time {
	if s != nil && *s == "" {
		p.add(at, field, "is required")
		return time.Time{}
	}
	t, err := instant(s)
	if err != nil {
		p.add(at, field, "%q is not an RFC 3339 time such as 2026-12-24T18:00:00Z", *s)
	}
	return t
}

func required(p *problems, at *objectPos, field, v string) {
	if strings.TrimSpace(v) == "" {
		p.add(at, field, "is required")
	}
}

// Bounds of a catalog's text, in characters.
const (
	// MaxName bounds the name of an event, a ticket or a venue.
	MaxName = clientinput.MaxName
	// MaxDescription bounds the description of an event or a ticket.
	MaxDescription = 5000
	// MaxText bounds every other text: references, slugs, address lines,
	// USSD codes.
	MaxText = 200
)

// fileText checks a text field of the file: at most max characters, and none
// that is not text (control characters such as ESC, bidirectional
// controls; a description may hold line feeds and tabs). Names reach the
// ticket page, the email's subject and an operator's terminal, where an
// escape sequence or a right-to-left override would show something else.
func fileText(p *problems, at *objectPos, field string, v *string, max int) {
	if v == nil {
		return
	}
	if msg := clientinput.TextProblem(*v, max, max == MaxDescription); msg != "" {
		p.add(at, field, "%s", msg)
	}
}

func unique(p *problems, seen map[string]bool, at *objectPos, ref string) {
	if ref == "" {
		p.add(at, "reference", "is required")
		return
	}
	if seen[ref] {
		p.add(at, "reference", "appears more than once in the file")
	}
	seen[ref] = true
}

// Validate checks every rule a file can be checked against without the
// database and returns a *FileError listing all problems, values of the
// wrong JSON type included, or nil.
func (f *File) Validate() error {
	return f.validate().err()
}

func (f *File) validate() problems {
	p := slices.Clone(f.decoded)
	seen := map[string]map[string]bool{"venue": {}, "event": {}, "date": {}, "ticket": {}}
	for i := range f.Venues {
		v := &f.Venues[i]
		if f.pos.unbound(v) {
			continue
		}
		at := f.pos.at(v, where("venue", i, v.Reference))
		unique(&p, seen["venue"], at, v.Reference)
		required(&p, at, "name", v.Name)
		required(&p, at, "slug", v.Slug)
		fileText(&p, at, "reference", &v.Reference, MaxText)
		fileText(&p, at, "name", &v.Name, MaxName)
		fileText(&p, at, "slug", &v.Slug, MaxText)
		fileText(&p, at, "street", v.Street, MaxText)
		fileText(&p, at, "city", v.City, MaxText)
		fileText(&p, at, "state", v.State, MaxText)
		if v.Lat != nil && (math.IsNaN(*v.Lat) || *v.Lat < -90 || *v.Lat > 90) {
			p.add(at, "lat", "must be between -90 and 90")
		}
		if v.Lng != nil && (math.IsNaN(*v.Lng) || *v.Lng < -180 || *v.Lng > 180) {
			p.add(at, "lng", "must be between -180 and 180")
		}
	}
	for i := range f.Events {
		if !f.pos.unbound(&f.Events[i]) {
			f.Events[i].validate(&p, f.pos, seen, i)
		}
	}
	return p
}

func (e *EventSpec) validate(p *problems, pos positions, seen map[string]map[string]bool, i int) {
	at := pos.at(e, where("event", i, e.Reference))
	unique(p, seen["event"], at, e.Reference)
	required(p, at, "name", e.Name)
	required(p, at, "slug", e.Slug)
	fileText(p, at, "reference", &e.Reference, MaxText)
	fileText(p, at, "name", &e.Name, MaxName)
	fileText(p, at, "slug", &e.Slug, MaxText)
	fileText(p, at, "description", e.Description, MaxDescription)
	fileText(p, at, "image_url", e.ImageURL, clientinput.MaxURL)
	fileText(p, at, "ussd_code", e.USSDCode, MaxText)
	fileText(p, at, "ussd_full_code", e.USSDFullCode, MaxText)
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
		if pos.unbound(d) {
			continue
		}
		dat := pos.at(d, where("date", j, d.Reference))
		unique(p, seen["date"], dat, d.Reference)
		fileText(p, dat, "reference", &d.Reference, MaxText)
		fileText(p, dat, "venue", d.Venue, MaxText)
		ds := parseInstant(p, dat, "start", &d.Start)
		de := parseInstant(p, dat, "end", &d.End)
		if !ds.IsZero() && !de.IsZero() && !de.After(ds) {
			p.add(dat, "end", "must be after start")
		}
		if d.Venue == nil && !d.Online {
			p.add(dat, "venue", "is required unless the date is online")
		}
		for k := range d.Tickets {
			if !pos.unbound(&d.Tickets[k]) {
				d.Tickets[k].validate(p, pos, seen, k)
			}
		}
	}
}

func (t *TicketSpec) validate(p *problems, pos positions, seen map[string]map[string]bool, k int) {
	at := pos.at(t, where("ticket", k, t.Reference))
	unique(p, seen["ticket"], at, t.Reference)
	required(p, at, "name", t.Name)
	fileText(p, at, "reference", &t.Reference, MaxText)
	fileText(p, at, "name", &t.Name, MaxName)
	fileText(p, at, "description", t.Description, MaxDescription)
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
