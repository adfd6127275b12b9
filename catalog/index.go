package catalog

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boxoffice/boxoffice/store"
)

// Index is the catalog's listing index: the facts every listing filter and
// order reads (each visible event's id, creation time and name; each of its
// active dates' start, end, venue, online flag and whether it has a free
// and a paid ticket; each venue's city), kept in memory so that a listing
// reads from the database only the rows of its page. The total of a
// listing and which events make its page are counted here; the page's
// events, dates and tickets are then read by id.
//
// It follows the catalog's changes as the catalog cache does (store.Watch):
// on PostgreSQL each change names its event or venue, and only those are
// read again; a change that names nothing (TRUNCATE, a bulk import), a
// reconnection of the listener, or on SQLite any move of the catalog's
// version, reads everything again. Changed events are read once, by the
// first request that needs them, while the others wait for it: never once
// per request. A full read runs on its own goroutine (Warm starts it when
// the server starts); meanwhile, and whenever the watch cannot tell
// whether the catalog changed, listings are read from the database as
// without an index.
//
// The filters here are the Go twin of store.EventFilter; TestIndexParity
// runs every filter and order through both, on both databases.
type Index struct {
	db    *store.DB
	watch *store.Watch
	// fullChunk is how many events a full read reads per statement.
	fullChunk int
	// max is the most visible events the index keeps (the operator's
	// CATALOG_INDEX_EVENTS); over it is set when the catalog has more, and
	// listings then read the database as without an index until a full
	// read finds it fits again.
	max  int
	over bool

	// apply serializes reading changes in: one request reads, the others
	// wait and find nothing left to read.
	apply sync.Mutex

	pmu     sync.Mutex
	dirty   map[int64]struct{} // events changed since the last read
	venues  map[int64]struct{} // venues changed since the last read
	rebuild bool               // everything must be read again
	// building is closed when the full read under way ends; nil when
	// none is.
	building chan struct{}

	mu      sync.RWMutex
	built   bool
	session uint64 // the watch's session the content was read in
	version uint64 // the version of the last full read (SQLite)
	events  []ixEvent
	cities  map[int64]string // venue id → lower-cased city ("" for none)
	// seq numbers the index's contents: it moves on with every read of
	// changes. changed holds the seq at which each event last changed
	// since the full read at rebuilt, so a page kept from before can be
	// checked (Service.Unchanged).
	seq, rebuilt uint64
	changed      map[int64]uint64

	rmu     sync.Mutex
	results map[ListParams]*ixResult
	size    int // hits held by results
	ends    ixEnds
}

// MaxPendingChanges is how many changed events an Index collects before it
// reads everything again instead: a re-read of that many events costs
// about what a full read costs, and collecting more would only hold memory.
const MaxPendingChanges = 20_000

// ixEvent is an event as the index keeps it.
type ixEvent struct {
	id      int64
	created int64  // Unix nanoseconds
	name    string // lower-cased, for q
	dates   []ixDate
}

// ixDate is an active date as the index keeps it. A column the listing
// filters on is one more field here, filled in from store.ListingDate.
type ixDate struct {
	start, end       int64 // Unix nanoseconds
	venue            int64 // 0: none
	online           bool
	hasFree, hasPaid bool
}

// ixHit is one event of a listing: its id and its ordering key (creation
// time newest first; earliest kept start soonest first, noStart for none).
type ixHit struct {
	id  int64
	key int64
	// until is the first end of one of the event's dates after the
	// listing was made: its summary may change then.
	until int64
}

const noStart = math.MaxInt64

// ixResult is the events a filter keeps, in its order, computed at at and
// valid until no date ended between at and the instant of use.
type ixResult struct {
	ready     chan struct{}
	hits      []ixHit
	at, until int64
	seq       uint64 // the index's contents it was made from
	err       error
}

// ixEnds caches the first end of any date after from.
type ixEnds struct {
	from, next int64
	ok         bool
}

// DefaultIndexEvents is CATALOG_INDEX_EVENTS' default: a million visible
// events, which the index keeps in about 200 MB (docs/benchmarks.md).
const DefaultIndexEvents = 1_000_000

// NewIndex returns an index of db's catalog following watch, keeping at
// most maxEvents visible events; it reads nothing until first asked.
func NewIndex(db *store.DB, watch *store.Watch, maxEvents int) *Index {
	ix := &Index{db: db, watch: watch, fullChunk: 20_000, dirty: map[int64]struct{}{}, venues: map[int64]struct{}{},
		rebuild: true, max: maxEvents}
	watch.Follow(ix.notified)
	return ix
}

// notified records what a catalog notification says changed.
func (ix *Index) notified(n store.Notification) {
	ix.pmu.Lock()
	defer ix.pmu.Unlock()
	if n.Missed {
		ix.everything()
		return
	}
	_, what := store.ChangePayload(n.Payload)
	kind, id, _ := strings.Cut(what, ":")
	v, err := strconv.ParseInt(id, 10, 64)
	switch {
	case err == nil && kind == "e":
		ix.dirty[v] = struct{}{}
		if len(ix.dirty) > MaxPendingChanges {
			ix.everything()
		}
	case err == nil && kind == "v":
		ix.venues[v] = struct{}{}
	default:
		ix.everything()
	}
}

// everything marks the whole catalog for reading again; ix.pmu is held.
func (ix *Index) everything() {
	ix.rebuild = true
	clear(ix.dirty)
	clear(ix.venues)
}

// current brings the index up to the catalog's version as the watch
// reports it, reading what changed; ok is false when the index cannot be
// used (the watch cannot tell, or reading failed) and the caller must read
// the database.
func (ix *Index) current(ctx context.Context) (ok bool, err error) {
	if ix == nil {
		return false, nil
	}
	version, ok := ix.watch.Version(ctx)
	if !ok {
		return false, nil
	}
	session := ix.watch.Session()
	ix.apply.Lock()
	defer ix.apply.Unlock()
	ix.pmu.Lock()
	if ix.building != nil {
		ix.pmu.Unlock()
		return false, nil
	}
	ix.mu.RLock()
	full := ix.rebuild || !ix.built || ix.session != session || (!ix.db.Postgres() && ix.version != version)
	over := ix.over
	ix.mu.RUnlock()
	if full {
		// A full read takes seconds on a large catalog: it runs on its
		// own while listings read the database, as without an index.
		// Changes heard from now on are applied after it.
		ix.rebuild = false
		clear(ix.dirty)
		clear(ix.venues)
		done := make(chan struct{})
		ix.building = done
		ix.pmu.Unlock()
		go ix.readAllAlone(session, version, done)
		return false, nil
	}
	dirty, venues := ix.dirty, ix.venues
	ix.dirty, ix.venues = map[int64]struct{}{}, map[int64]struct{}{}
	ix.pmu.Unlock()
	if !over && (len(dirty) > 0 || len(venues) > 0) {
		err = ix.readChanged(ctx, dirty, venues)
	}
	if err != nil {
		ix.pmu.Lock()
		ix.everything()
		ix.pmu.Unlock()
		return false, err
	}
	return !over, nil
}

// readAllAlone is a full read on its own goroutine, which closes done when
// it ends; a failed one is tried again by the next listing.
func (ix *Index) readAllAlone(session, version uint64, done chan struct{}) {
	err := ix.readAll(context.Background(), session, version)
	ix.pmu.Lock()
	if err != nil {
		ix.everything()
	}
	ix.building = nil
	ix.pmu.Unlock()
	close(done)
}

// Warm brings the index up to date, waiting for a full read if one is
// needed, so that the listings after it read only their pages: the server
// calls it when it starts. It returns when the index is usable, or ctx
// ends, or the catalog is over the index's budget.
func (ix *Index) Warm(ctx context.Context) error {
	for {
		ok, err := ix.current(ctx)
		if ok || err != nil {
			return err
		}
		ix.pmu.Lock()
		done := ix.building
		ix.pmu.Unlock()
		ix.mu.RLock()
		over := ix.over && ix.built
		ix.mu.RUnlock()
		if over && done == nil {
			return nil
		}
		if done == nil {
			// The watch cannot tell yet (the listener is connecting).
			t := time.NewTimer(10 * time.Millisecond)
			done = make(chan struct{})
			go func() { <-t.C; close(done) }()
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// readAll reads every visible event again, in chunks by id.
func (ix *Index) readAll(ctx context.Context, session, version uint64) error {
	vs, err := store.ListingVenues(ctx, ix.db, nil)
	if err != nil {
		return err
	}
	cities := make(map[int64]string, len(vs))
	for _, v := range vs {
		cities[v.ID] = lowerCity(v.City)
	}
	var events []ixEvent
	over := false
	for after := int64(0); ; {
		es, ds, err := store.ListingEventsInRange(ctx, ix.db, after, ix.fullChunk)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			break
		}
		events = append(events, toIxEvents(es, ds)...)
		after = es[len(es)-1].ID
		if len(events) > ix.max {
			events, over = nil, true
			break
		}
	}
	slices.SortFunc(events, newestFirst)
	ix.mu.Lock()
	ix.events, ix.cities, ix.built, ix.session, ix.version, ix.over = events, cities, true, session, version, over
	ix.seq++
	ix.rebuilt, ix.changed = ix.seq, map[int64]uint64{}
	ix.mu.Unlock()
	ix.forget()
	return nil
}

// readChanged reads these events and venues again and puts them in place.
func (ix *Index) readChanged(ctx context.Context, dirty, venues map[int64]struct{}) error {
	ids := make([]int64, 0, len(dirty))
	for id := range dirty {
		ids = append(ids, id)
	}
	var fresh []ixEvent
	for chunk := range slices.Chunk(ids, 1000) {
		es, ds, err := store.ListingEventsByIDs(ctx, ix.db, chunk)
		if err != nil {
			return err
		}
		fresh = append(fresh, toIxEvents(es, ds)...)
	}
	slices.SortFunc(fresh, newestFirst)
	// Venues named by a change, and venues of fresh dates the index has
	// never seen, are read.
	ix.mu.RLock()
	want := make([]int64, 0, len(venues))
	for id := range venues {
		want = append(want, id)
	}
	for i := range fresh {
		for _, d := range fresh[i].dates {
			if _, known := ix.cities[d.venue]; d.venue != 0 && !known {
				want = append(want, d.venue)
			}
		}
	}
	ix.mu.RUnlock()
	vs, err := store.ListingVenues(ctx, ix.db, want)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.forget()
	defer ix.mu.Unlock()
	for _, id := range want {
		delete(ix.cities, id)
	}
	for _, v := range vs {
		ix.cities[v.ID] = lowerCity(v.City)
	}
	ix.seq++
	for id := range dirty {
		ix.changed[id] = ix.seq
	}
	if len(venues) > 0 {
		// A venue's name and city show on every event with a date there.
		for i := range ix.events {
			for _, d := range ix.events[i].dates {
				if _, ok := venues[d.venue]; ok {
					ix.changed[ix.events[i].id] = ix.seq
				}
			}
		}
	}
	if len(ix.changed) > MaxPendingChanges {
		ix.rebuilt, ix.changed = ix.seq, map[int64]uint64{}
	}
	// Drop the changed events, then merge their fresh state in, in one
	// pass each: no sort of the whole catalog.
	kept := ix.events[:0]
	for _, e := range ix.events {
		if _, changed := dirty[e.id]; !changed {
			kept = append(kept, e)
		}
	}
	clear(ix.events[len(kept):])
	n := len(kept)
	merged := slices.Grow(kept, len(fresh))[:n+len(fresh)]
	for i, j, k := n-1, len(fresh)-1, len(merged)-1; j >= 0; k-- {
		if i >= 0 && newestFirst(merged[i], fresh[j]) > 0 {
			merged[k], i = merged[i], i-1
		} else {
			merged[k], j = fresh[j], j-1
		}
	}
	ix.events = merged
	return nil
}

// forget drops every kept result: the content changed.
func (ix *Index) forget() {
	ix.rmu.Lock()
	ix.results, ix.size, ix.ends = nil, 0, ixEnds{}
	ix.rmu.Unlock()
}

func lowerCity(c *string) string {
	if c == nil {
		return ""
	}
	return strings.ToLower(*c)
}

// toIxEvents pairs events with their dates (both read by event id).
func toIxEvents(es []store.ListingEvent, ds []store.ListingDate) []ixEvent {
	byEvent := make(map[int64][]ixDate, len(es))
	for i := range ds {
		d := &ds[i]
		byEvent[d.EventID] = append(byEvent[d.EventID], ixDate{
			start: d.StartAt.UnixNano(), end: d.EndAt.UnixNano(), venue: d.VenueID,
			online: d.Online, hasFree: d.HasFree, hasPaid: d.HasPaid,
		})
	}
	out := make([]ixEvent, len(es))
	for i := range es {
		dates := byEvent[es[i].ID]
		out[i] = ixEvent{id: es[i].ID, created: es[i].CreatedAt.UnixNano(), name: strings.ToLower(es[i].Name),
			dates: dates[:len(dates):len(dates)]}
	}
	return out
}

// newestFirst orders events by creation time, then id, both descending.
func newestFirst(a, b ixEvent) int {
	if a.created != b.created {
		if a.created > b.created {
			return -1
		}
		return 1
	}
	switch {
	case a.id > b.id:
		return -1
	case a.id < b.id:
		return 1
	}
	return 0
}

// hits returns the events p keeps at now, in p's order, computing them
// once per content of the index and per stretch of time in which no date
// ends; concurrent callers asking for the same wait for one computation.
func (ix *Index) hits(p ListParams, now time.Time) (*ixResult, error) {
	key := p
	key.Page, key.PerPage, key.After, key.HasAfter = 0, 0, store.EventKey{}, false
	at := now.UnixNano()
	ix.rmu.Lock()
	if r, ok := ix.results[key]; ok && r.at <= at && at < r.until {
		ix.rmu.Unlock()
		<-r.ready
		return r, r.err
	}
	r := &ixResult{ready: make(chan struct{}), at: at}
	if ix.results == nil {
		ix.results = map[ListParams]*ixResult{}
	}
	ix.results[key] = r
	ix.rmu.Unlock()

	ix.mu.RLock()
	r.hits = ix.match(p, at)
	r.until = ix.nextEnd(at)
	r.seq = ix.seq
	total := len(ix.events)
	ix.mu.RUnlock()
	close(r.ready)

	ix.rmu.Lock()
	ix.size += len(r.hits)
	// Kept results hold at most four catalogs' worth of hits.
	if ix.size > 4*total+1000 {
		ix.results, ix.size = map[ListParams]*ixResult{key: r}, len(r.hits)
	}
	ix.rmu.Unlock()
	return r, r.err
}

// nextEnd returns the first end of a date after at (noStart when none),
// the moment listings made at at may change; ix.mu is held for reading.
func (ix *Index) nextEnd(at int64) int64 {
	ix.rmu.Lock()
	e := ix.ends
	ix.rmu.Unlock()
	if e.ok && e.from <= at && at < e.next {
		return e.next
	}
	next := int64(noStart)
	for i := range ix.events {
		for _, d := range ix.events[i].dates {
			if d.end > at && d.end < next {
				next = d.end
			}
		}
	}
	ix.rmu.Lock()
	ix.ends = ixEnds{from: at, next: next, ok: true}
	ix.rmu.Unlock()
	return next
}

// match is store.EventFilter's selection and order over the index at at
// (Unix nanoseconds); ix.mu is held for reading.
func (ix *Index) match(p ListParams, at int64) []ixHit {
	q := strings.ToLower(p.Q)
	city := strings.ToLower(p.City)
	byDate := !p.IncludePast || !p.StartsAfter.IsZero() || !p.StartsBefore.IsZero() ||
		p.City != "" || p.VenueID != 0 || p.Online.Set
	soonest := p.OrderBy == Soonest
	var after, before int64 = math.MinInt64, math.MaxInt64
	if !p.StartsAfter.IsZero() {
		after = p.StartsAfter.UnixNano()
	}
	if !p.StartsBefore.IsZero() {
		before = p.StartsBefore.UnixNano()
	}
	kept := func(d *ixDate) bool {
		return (p.IncludePast || d.end > at) && d.start >= after && d.start < before &&
			(city == "" || (d.venue != 0 && ix.cities[d.venue] == city)) &&
			(p.VenueID == 0 || d.venue == p.VenueID) &&
			(!p.Online.Set || d.online == p.Online.Value)
	}
	hits := []ixHit{}
	for i := range ix.events {
		e := &ix.events[i]
		if q != "" && !strings.Contains(e.name, q) {
			continue
		}
		if p.Free.Set {
			var free, paid bool
			for _, d := range e.dates {
				if d.end > at {
					free, paid = free || d.hasFree, paid || d.hasPaid
				}
			}
			if (p.Free.Value && (!free || paid)) || (!p.Free.Value && !paid) {
				continue
			}
		}
		until := int64(noStart)
		for j := range e.dates {
			if d := &e.dates[j]; d.end > at {
				until = min(until, d.end)
			}
		}
		start, found := int64(noStart), false
		if byDate || soonest {
			for j := range e.dates {
				if d := &e.dates[j]; kept(d) {
					found, start = true, min(start, d.start)
				}
			}
			if byDate && !found {
				continue
			}
		}
		if soonest {
			hits = append(hits, ixHit{id: e.id, key: start, until: until})
		} else {
			hits = append(hits, ixHit{id: e.id, key: e.created, until: until})
		}
	}
	if soonest {
		slices.SortFunc(hits, func(a, b ixHit) int {
			if a.key != b.key {
				if a.key < b.key {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.id, b.id)
		})
	}
	return hits
}

// usable reports whether p can be answered from the index: a slug names
// at most a few events, which its own index finds faster than any scan.
func (p ListParams) usable() bool { return p.Slug == "" }

// page returns the events of p's page and the listing's total from the
// index; ok is false when the index cannot answer.
func (ix *Index) page(ctx context.Context, p ListParams, now time.Time) (events []store.Event, st Stamp, ok bool, err error) {
	if !p.usable() {
		return nil, st, false, nil
	}
	if ok, err := ix.current(ctx); !ok {
		return nil, st, false, err
	}
	r, err := ix.hits(p, now)
	if err != nil {
		return nil, st, false, err
	}
	page := pageOf(r.hits, p)
	st = Stamp{ok: true, seq: r.seq, total: len(r.hits), ids: make([]int64, len(page)), until: noStart}
	for i, h := range page {
		st.ids[i], st.until = h.id, min(st.until, h.until)
	}
	events, err = ix.read(ctx, page, p.OrderBy == Soonest)
	return events, st, true, err
}

// pageOf returns p's page of hits.
func pageOf(hits []ixHit, p ListParams) []ixHit {
	off := min(p.offset(), len(hits))
	return hits[off:min(off+p.PerPage, len(hits))]
}

// Stamp says what a page of a listing showed and when, so that a page
// kept from before a change can be checked against the catalog after it
// (Service.Unchanged). The zero Stamp matches nothing.
type Stamp struct {
	ok    bool
	seq   uint64
	total int
	ids   []int64
	until int64
}

// unchanged reports whether p's page at now would show what st says it
// showed: the same total and events, none of them changed since, and none
// of their dates ended since.
func (ix *Index) unchanged(ctx context.Context, p ListParams, st Stamp, now time.Time) bool {
	if ix == nil || !st.ok || now.UnixNano() >= st.until {
		return false
	}
	if ok, _ := ix.current(ctx); !ok {
		return false
	}
	r, err := ix.hits(p, now)
	if err != nil || len(r.hits) != st.total {
		return false
	}
	page := pageOf(r.hits, p)
	if len(page) != len(st.ids) {
		return false
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.rebuilt > st.seq {
		return false
	}
	for i, h := range page {
		if h.id != st.ids[i] || ix.changed[h.id] > st.seq {
			return false
		}
	}
	return true
}

// after returns up to limit events after p's cursor from the index; ok is
// false when the index cannot answer.
func (ix *Index) after(ctx context.Context, p ListParams, limit int, now time.Time) (events []store.Event, ok bool, err error) {
	if !p.usable() {
		return nil, false, nil
	}
	if ok, err := ix.current(ctx); !ok {
		return nil, false, err
	}
	r, err := ix.hits(p, now)
	if err != nil {
		return nil, false, err
	}
	hits := r.hits
	from := 0
	if p.HasAfter {
		k := p.After
		var past func(h ixHit) bool
		switch {
		case p.OrderBy == Newest:
			c := k.CreatedAt.UnixNano()
			past = func(h ixHit) bool { return h.key < c || (h.key == c && h.id < k.ID) }
		case k.Start.IsZero():
			past = func(h ixHit) bool { return h.key == noStart && h.id > k.ID }
		default:
			s := k.Start.UnixNano()
			past = func(h ixHit) bool { return h.key > s || (h.key == s && h.id > k.ID) }
		}
		from, _ = slices.BinarySearchFunc(hits, true, func(h ixHit, _ bool) int {
			if past(h) {
				return 0
			}
			return -1
		})
	}
	events, err = ix.read(ctx, hits[from:min(from+limit, len(hits))], p.OrderBy == Soonest)
	return events, true, err
}

// read reads the events of hits from the database, in their order, with
// their sort start when soonest.
func (ix *Index) read(ctx context.Context, hits []ixHit, soonest bool) ([]store.Event, error) {
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.id
	}
	events, err := store.EventsByIDs(ctx, ix.db, ids)
	if err != nil {
		return nil, err
	}
	if soonest {
		start := make(map[int64]int64, len(hits))
		for _, h := range hits {
			start[h.id] = h.key
		}
		for i := range events {
			if s := start[events[i].ID]; s != noStart {
				events[i].SortStart = time.Unix(0, s).UTC()
			}
		}
	}
	return events, nil
}
