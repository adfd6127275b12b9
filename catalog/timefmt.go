package catalog

import (
	"sync"
	"time"
)

// Layouts of the API's plain and display time strings (docs/api.md shows
// them beside their _iso forms).
const (
	plainLayout   = "2006-01-02 15:04:05"
	displayLayout = "Mon, 02 Jan 2006 3:04 PM"
)

// zones caches loaded timezones: time.LoadLocation parses zoneinfo on every
// call, and a catalog page formats hundreds of times in a handful of zones.
var zones sync.Map // name → *time.Location

// Zone loads an IANA timezone, falling back to UTC for a name the imported
// catalog should never contain.
func Zone(name string) *time.Location {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		loc = time.UTC
	}
	zones.Store(name, loc)
	return loc
}

// Times prints one instant in the three forms the API uses, in one zone.
type Times struct {
	Plain   string // 2006-01-02 15:04:05 in the event's zone
	ISO     string // RFC 3339 with the event's offset
	Display string // Thu, 24 Dec 2026 6:00 PM
}

// FormatTime renders t in loc; the zero time gives nil.
func FormatTime(t time.Time, loc *time.Location) *Times {
	if t.IsZero() {
		return nil
	}
	t = t.In(loc)
	return &Times{Plain: t.Format(plainLayout), ISO: t.Format(time.RFC3339), Display: t.Format(displayLayout)}
}

// FormatStamp renders created_at/updated_at: RFC 3339 in UTC.
func FormatStamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// DisplayInZone renders t for a person reading a page: the *_display text
// in the named timezone, followed by the zone's abbreviation and name, as
// "Thu, 24 Dec 2026 6:00 PM GMT (Africa/Accra)", so a buyer in another zone
// knows which clock it is. The zero time gives "".
func DisplayInZone(t time.Time, timezone string) string {
	if t.IsZero() {
		return ""
	}
	loc := Zone(timezone)
	t = t.In(loc)
	return t.Format(displayLayout) + " " + t.Format("MST") + " (" + loc.String() + ")"
}
