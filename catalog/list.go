package catalog

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// Paging limits of GET /events (spec section 8), also those of a cursor
// connection's first.
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
)

// MaxQLength is the longest name search, in characters; slug and city
// are bounded alike.
const MaxQLength = 200

// Orders of an event listing.
const (
	// Newest lists events newest first: created_at, then id, descending.
	// It is the default.
	Newest = "newest"
	// Soonest lists events by the earliest start among the dates the
	// filters keep (upcoming active dates unless include_past), then id;
	// events without such a date come last.
	Soonest = "soonest"
)

// ListRequest is a listing of events as a client asked for it, on either
// API: page numbers (Page, PerPage) or a cursor connection (First, After),
// with the filters and the order. A nil pointer or empty string was not
// given.
type ListRequest struct {
	Page    *int
	PerPage *int
	First   *int
	After   *string

	Q            string
	IncludePast  bool
	Slug         string
	StartsAfter  string // RFC 3339
	StartsBefore string // RFC 3339
	City         string
	VenueID      *int
	Online       *bool
	Free         *bool
	OrderBy      string // Newest or Soonest
}

// ListParams selects events: a ListRequest with the defaults and limits
// applied (Params is the only way to make one from client input). It is
// comparable, so it can key a cache.
type ListParams struct {
	Page    int
	PerPage int // also a connection's first
	// After is the position a cursor pointed at, when HasAfter.
	After    store.EventKey
	HasAfter bool

	Q            string
	IncludePast  bool
	Slug         string
	StartsAfter  time.Time // UTC; zero when not given
	StartsBefore time.Time
	City         string
	VenueID      int64
	Online       OptionalBool
	Free         OptionalBool
	OrderBy      string
}

// OptionalBool is a yes/no filter that may be left out.
type OptionalBool struct{ Set, Value bool }

func optional(b *bool) OptionalBool {
	if b == nil {
		return OptionalBool{}
	}
	return OptionalBool{Set: true, Value: *b}
}

func (o OptionalBool) ptr() *bool {
	if !o.Set {
		return nil
	}
	v := o.Value
	return &v
}

// Page is one page of events with the paging facts the API reports.
type Page struct {
	Events     []store.Event
	Page       int
	PerPage    int
	Total      int
	TotalPages int
	// Stamp lets a kept copy of the page be checked later (Unchanged).
	Stamp Stamp
}

// HasNext reports whether a later page exists.
func (p *Page) HasNext() bool { return p.Page < p.TotalPages }

// HasPrev reports whether an earlier page exists.
func (p *Page) HasPrev() bool { return p.Page > 1 }

// Params is the listing rule of both APIs (docs/spec/ticketing-api.md section 8):
// page defaults to 1 and per_page (or a connection's first) to 20; a given
// page, per_page or first must be a positive integer; per_page and first
// above 100 are capped at 100; q, slug and city are at most 200 characters
// of text without control characters; starts_after and starts_before are
// RFC 3339 instants, starts_before later than starts_after; venue_id is a
// positive integer; order_by is newest (the default) or soonest; after is a
// cursor this listing handed out, for the same order_by.
// Errors: validation_failed, details keyed page, per_page, first, after,
// q, slug, city, starts_after, starts_before, venue_id and order_by.
func (r ListRequest) Params() (ListParams, error) {
	d := apperr.Details{}
	p := ListParams{
		Page: 1, PerPage: DefaultPerPage, Q: r.Q, IncludePast: r.IncludePast, Slug: r.Slug, City: r.City,
		Online: optional(r.Online), Free: optional(r.Free), OrderBy: Newest,
	}
	if r.Page != nil {
		if *r.Page < 1 {
			d.Add("page", "must be a positive integer")
		}
		p.Page = *r.Page
	}
	size, sizeName := r.PerPage, "per_page"
	if r.First != nil || r.After != nil {
		size, sizeName = r.First, "first"
	}
	if size != nil {
		switch {
		case *size < 1:
			d.Add(sizeName, "must be a positive integer")
		case *size > MaxPerPage:
			p.PerPage = MaxPerPage
		default:
			p.PerPage = *size
		}
	}
	text(d, "q", r.Q)
	text(d, "slug", r.Slug)
	text(d, "city", r.City)
	p.StartsAfter = paramInstant(d, "starts_after", r.StartsAfter)
	p.StartsBefore = paramInstant(d, "starts_before", r.StartsBefore)
	if !p.StartsAfter.IsZero() && !p.StartsBefore.IsZero() && !p.StartsBefore.After(p.StartsAfter) {
		d.Add("starts_before", "must be later than starts_after")
	}
	if r.VenueID != nil {
		if *r.VenueID < 1 {
			d.Add("venue_id", "must be a positive integer")
		}
		p.VenueID = int64(*r.VenueID)
	}
	switch r.OrderBy {
	case "", Newest:
	case Soonest:
		p.OrderBy = Soonest
	default:
		d.Add("order_by", "must be newest or soonest")
	}
	if r.After != nil {
		key, err := decodeCursor(*r.After, p.OrderBy)
		if err != nil {
			d.Add("after", err.Error())
		}
		p.After, p.HasAfter = key, true
	}
	return p, apperr.Validation(d)
}

// text checks a free-text parameter: UTF-8, at most MaxQLength characters,
// no control characters.
func text(d apperr.Details, name, s string) {
	switch {
	case !utf8.ValidString(s):
		d.Add(name, "must be UTF-8 text")
	case utf8.RuneCountInString(s) > MaxQLength:
		d.Add(name, fmt.Sprintf("must be at most %d characters", MaxQLength))
	case strings.ContainsFunc(s, unicode.IsControl):
		d.Add(name, "must not contain control characters")
	}
}

// paramInstant reads an RFC 3339 parameter, in UTC; "" is the zero time.
func paramInstant(d apperr.Details, name, s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		d.Add(name, "must be an RFC 3339 date-time such as 2026-12-24T18:00:00Z")
		return time.Time{}
	}
	return t.UTC()
}

// offset is where a page starts, saturated: a page far beyond the last is
// simply empty, never a wrapped-around earlier page.
func (p ListParams) offset() int {
	if p.Page <= 1 {
		return 0
	}
	if p.Page-1 > math.MaxInt/p.PerPage {
		return math.MaxInt
	}
	return (p.Page - 1) * p.PerPage
}

// filter is the store's filter for p at now.
func (p ListParams) filter(now time.Time) store.EventFilter {
	return store.EventFilter{
		Q: p.Q, Slug: p.Slug, IncludePast: p.IncludePast, Now: now,
		StartsAfter: p.StartsAfter, StartsBefore: p.StartsBefore, City: p.City, VenueID: p.VenueID,
		Online: p.Online.ptr(), Free: p.Free.ptr(), Soonest: p.OrderBy == Soonest,
	}
}

// ListEvents returns a page of visible events; p comes from
// ListRequest.Params. With an Index it reads only the page's events.
func (s *Service) ListEvents(ctx context.Context, p ListParams) (*Page, error) {
	now := s.Now()
	events, st, ok, err := s.Index.page(ctx, p, now)
	if err != nil {
		return nil, err
	}
	total := st.total
	if !ok {
		f := p.filter(now)
		f.Limit, f.Offset = p.PerPage, p.offset()
		if events, total, err = store.ListEvents(ctx, s.DB, f); err != nil {
			return nil, err
		}
	}
	return &Page{
		Events: events, Page: p.Page, PerPage: p.PerPage, Total: total,
		TotalPages: (total + p.PerPage - 1) / p.PerPage, Stamp: st,
	}, nil
}

// Unchanged reports whether a page made earlier, whose Stamp is st, is
// still what ListEvents(p) would return now: a kept page outlives a change
// of the catalog that did not touch it. Without an Index it is false.
func (s *Service) Unchanged(ctx context.Context, p ListParams, st Stamp) bool {
	return s.Index.unchanged(ctx, p, st, s.Now())
}

// Slice is a run of events of a cursor connection, each with its cursor.
type Slice struct {
	Events  []store.Event
	Cursors []string
	// HasNext reports whether more events follow the last; HasPrev whether
	// events precede the first (the request started after a cursor).
	HasNext, HasPrev bool
}

// EventsAfter returns the first p.PerPage visible events after p's cursor
// (from the start without one), in one statement; p comes from
// ListRequest.Params.
func (s *Service) EventsAfter(ctx context.Context, p ListParams) (*Slice, error) {
	now := s.Now()
	f := p.filter(now)
	f.Limit = p.PerPage + 1 // one more tells whether a next page exists
	if p.HasAfter {
		f.After = &p.After
	}
	events, ok, err := s.Index.after(ctx, p, f.Limit, now)
	if err != nil {
		return nil, err
	}
	if !ok {
		if events, err = store.EventsAfter(ctx, s.DB, f); err != nil {
			return nil, err
		}
	}
	out := &Slice{Events: events, HasPrev: p.HasAfter}
	if len(events) > p.PerPage {
		out.Events, out.HasNext = events[:p.PerPage], true
	}
	out.Cursors = make([]string, len(out.Events))
	for i := range out.Events {
		out.Cursors[i] = encodeCursor(p.OrderBy, f.Key(&out.Events[i]))
	}
	return out, nil
}

// EventBySlug returns the newest visible event with this slug.
// Errors: event_not_found when there is none.
func (s *Service) EventBySlug(ctx context.Context, slug string) (*store.Event, error) {
	e, err := store.VisibleEventBySlug(ctx, s.DB, slug)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.EventNotFound, "Event %q was not found.", slug)
	}
	return e, err
}

// Cursors are opaque to clients: base64url of the ordering key,
// "newest:CREATED:ID" or "soonest:START:ID", instants in Unix
// microseconds (what the database keeps) and "-" for no start.
var cursorEncoding = base64.RawURLEncoding

func encodeCursor(order string, k store.EventKey) string {
	var t string
	switch {
	case order == Newest:
		t = strconv.FormatInt(k.CreatedAt.UnixMicro(), 10)
	case k.Start.IsZero():
		t = "-"
	default:
		t = strconv.FormatInt(k.Start.UnixMicro(), 10)
	}
	return cursorEncoding.EncodeToString([]byte(order + ":" + t + ":" + strconv.FormatInt(k.ID, 10)))
}

var (
	errCursor      = errors.New("is not a cursor of this listing")
	errCursorOrder = errors.New("is a cursor of another order_by")
)

func decodeCursor(s, order string) (store.EventKey, error) {
	raw, err := cursorEncoding.DecodeString(s)
	if err != nil {
		return store.EventKey{}, errCursor
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 3 {
		return store.EventKey{}, errCursor
	}
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || id < 1 {
		return store.EventKey{}, errCursor
	}
	k := store.EventKey{ID: id}
	if parts[0] != Newest && parts[0] != Soonest {
		return store.EventKey{}, errCursor
	}
	if parts[1] != "-" || parts[0] == Newest {
		us, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			return store.EventKey{}, errCursor
		}
		t := time.UnixMicro(us).UTC()
		if parts[0] == Newest {
			k.CreatedAt = t
		} else {
			k.Start = t
		}
	}
	if parts[0] != order {
		return store.EventKey{}, errCursorOrder
	}
	return k, nil
}
