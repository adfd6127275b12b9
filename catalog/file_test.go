package catalog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// problemsOf returns the problems of a refused file, failing otherwise.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var fe *catalog.FileError
	require.ErrorAs(t, err, &fe)
	return fe.Problems
}

// typesFile has a value of the wrong JSON type on most lines, some before
// the reference of their object.
const typesFile = `{
  "venues": [{"reference": "hall", "name": "Hall", "slug": "hall",
    "lat": "5.6"}],
  "events": [{"published": "yes", "reference": "EVT-T", "name": "Types Night", "slug": "types",
    "dates": [{"reference": "D-T", "start": "2026-12-24T18:00:00Z", "end": "2026-12-25T02:00:00Z", "venue": "hall",
      "online": 0,
      "tickets": [{"reference": "T-1", "name": "One", "price": 150, "currency": "GHS",
         "quantity": "500"},
        {"quantity": 1.5, "reference": "T-2", "name": 7, "free": true, "currency": "GHS"},
        "T-3"]}]},
    {"reference": "EVT-U", "name": "Unknown Keys", "slug": "unknown", "referense": "x", "Published": true,
     "dates": {}}]
}`

func TestParseFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		want []string // every problem Validate reports, in this order
	}{
		{"ErrWrongTypesAllAtOnce", typesFile, []string{
			`venue "hall": lat: must be a number or null, not a string ("5.6") (line 3)`,
			`event "EVT-T": published: must be true or false, not a string ("yes") (line 4)`,
			`date "D-T": online: must be true or false, not a number (0) (line 6)`,
			`ticket "T-1": price: must be a string or null, not a number (150) (line 7)`,
			`ticket "T-1": quantity: must be a whole number or null, not a string ("500") (line 8)`,
			`ticket "T-2": quantity: must be a whole number or null, not a number (1.5) (line 9)`,
			`ticket "T-2": name: must be a string, not a number (7) (line 9)`,
			`ticket[2]: must be an object ({…}), not a string ("T-3") (line 10)`,
			`event "EVT-U": "referense": is not a field of an event; did you mean "reference"? (line 11)`,
			`event "EVT-U": dates: must be a list ([…]), not an object (line 12)`,
		}},
		{"ErrRulesBesideTypes", `{"events": [{"reference": "EVT-R", "name": "", "slug": "r",
  "dates": [{"reference": "D-R", "start": "24/12/2026", "end": "2026-12-25T02:00:00Z", "online": true,
    "tickets": [{"reference": "T-R", "name": "R", "price": "cheap", "quantity": true, "currency": "GHS"}]}]}]}`, []string{
			`event "EVT-R": name: is required (line 1)`,
			`date "D-R": start: "24/12/2026" is not an RFC 3339 time such as 2026-12-24T18:00:00Z (line 2)`,
			`ticket "T-R": quantity: must be a whole number or null, not true (line 3)`,
			`ticket "T-R": price: "cheap" must be a non-negative decimal amount with at most two fraction digits, such as "150.00" (line 3)`,
		}},
		{"ErrMissingFieldNamesTheObjectLine", `{"events": [
  {"reference": "EVT-M", "slug": "m", "dates": []}]}`, []string{
			`event "EVT-M": name: is required (line 2)`,
		}},
		{"ErrTextNotShowable", `{"venues": [{"reference": "v\u001b[2J", "name": "Hall", "slug": "hall", "city": "Ac\u202ecra"}],
  "events": [{"reference": "EVT-X", "name": "\u001b]0;pwned\u0007Night", "slug": "x", "description": "` + strings.Repeat("d", 5001) + `",
    "ussd_code": "\u2066*1#",
    "dates": [{"reference": "D-X", "start": "2026-12-24T18:00:00Z", "end": "2026-12-25T02:00:00Z", "online": true,
      "tickets": [{"reference": "T-X", "name": "` + strings.Repeat("n", 10000) + `", "description": "a\rb", "free": true, "currency": "GHS"},
        {"reference": "T-Y", "name": "Line\u2028break", "description": "Two lines\n\tand a tab", "free": true, "currency": "GHS"}]}]}]}`, []string{
			`venue "v\x1b[2J": reference: must not contain control characters or bidirectional text controls (line 1)`,
			`venue "v\x1b[2J": city: must not contain control characters or bidirectional text controls (line 1)`,
			`event "EVT-X": name: must not contain control characters or bidirectional text controls (line 2)`,
			`event "EVT-X": description: must be at most 5000 characters (line 2)`,
			`event "EVT-X": ussd_code: must not contain control characters or bidirectional text controls (line 3)`,
			`ticket "T-X": name: must be at most 200 characters (line 5)`,
			`ticket "T-X": description: must not contain control characters or bidirectional text controls (line 5)`,
			`ticket "T-Y": name: must not contain control characters or bidirectional text controls (line 6)`,
		}},
		{"OKKeysInAnyCase", `{"Events": [{"Reference": "EVT-C", "NAME": "Case", "slug": "case", "published": null}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := catalog.ParseFile(strings.NewReader(tt.file))
			require.NoError(t, err, "only a file that is not JSON is refused by ParseFile")
			if tt.want == nil {
				require.NoError(t, f.Validate())
				return
			}
			require.Equal(t, tt.want, problemsOf(t, f.Validate()))
		})
	}
}

func TestParseFileNotJSON(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, file, want string }{
		{"ErrSyntax", "{\"events\": [\n  {\"reference\": \"x\",}\n]}", `not valid JSON at line 2: invalid character '}' looking for beginning of object key string`},
		{"ErrTruncated", `{"events": [{"reference": "x"`, `not valid JSON: the file ends in the middle of a value`},
		{"ErrEmpty", " \n", `not a valid catalog file: it is empty`},
		{"ErrNotAnObject", `[{"reference": "x"}]`, `it must be one JSON object ({"venues": […], "events": […]}), not a list`},
		{"ErrTrailingData", "{}\n{}", `not a valid catalog file: data after the top-level object (line 2)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := catalog.ParseFile(strings.NewReader(tt.file))
			require.Len(t, problemsOf(t, err), 1)
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "json:", "no Go unmarshal messages")
		})
	}
}

// refFile is the fixture of the import tests below: a venue, and an event
// whose date uses it, with two tickets.
const refFile = `{
  "venues": [{"reference": "ref-hall", "name": "Ref Hall", "slug": "ref-hall"}],
  "events": [{"reference": "EVT-REF", "name": "Ref Night", "slug": "ref-night", "published": true,
    "dates": [{"reference": "D-REF", "start": "2026-12-24T18:00:00Z", "end": "2026-12-25T02:00:00Z", "venue": "ref-hall",
      "tickets": [
        {"reference": "T-REF-A", "name": "A", "price": "50.00", "quantity": 100, "sold": 40, "currency": "GHS"},
        {"reference": "T-REF-B", "name": "B", "price": "20.00", "quantity": 100, "currency": "GHS"}]}]}]
}`

func TestImportProblemsAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		_, err := catalog.Import(ctx, db, mustParse(t, refFile), t0)
		require.NoError(t, err)

		// One of each kind of problem: a wrong type, a broken rule, a venue
		// nobody defines and a quantity below the tickets sold.
		bad := strings.NewReplacer(
			`"name": "Ref Hall"`, `"name": "Renamed Hall"`,
			`"slug": "ref-night"`, `"slug": 12`,
			`"venue": "ref-hall"`, `"venue": "nowhere"`,
			`"quantity": 100, "sold": 40`, `"quantity": 30, "sold": 40`,
			`"price": "20.00"`, `"price": "twenty"`,
		).Replace(refFile)
		_, err = catalog.Import(ctx, db, mustParse(t, bad), t0.Add(time.Hour))
		require.Equal(t, []string{
			`event "EVT-REF": slug: must be a string, not a number (12) (line 3)`,
			`date "D-REF": venue: "nowhere" is neither in the file nor an existing venue (line 4)`,
			`ticket "T-REF-A": sold: 40 is more than the quantity 30 (line 6)`,
			`ticket "T-REF-A": quantity: 30 is less than the 40 tickets already sold or held (line 6)`,
			`ticket "T-REF-B": price: "twenty" must be a non-negative decimal amount with at most two fraction digits, such as "150.00" (line 7)`,
		}, problemsOf(t, err))
		var v store.Venue
		require.NoError(t, db.NewSelect().Model(&v).Where("reference = ?", "ref-hall").Scan(ctx))
		require.Equal(t, "Ref Hall", v.Name, "nothing of a refused file is written")

		t.Run("ErrUnknownVenueOnly", func(t *testing.T) {
			// An unknown venue alone is found before anything is written,
			// and the date's tickets are still checked.
			bad := strings.NewReplacer(`"venue": "ref-hall"`, `"venue": "nowhere"`, `"quantity": 100, "sold": 40`, `"quantity": 39, "sold": 0`).Replace(refFile)
			_, err := catalog.Import(ctx, db, mustParse(t, bad), t0.Add(time.Hour))
			require.Equal(t, []string{
				`date "D-REF": venue: "nowhere" is neither in the file nor an existing venue (line 4)`,
				`ticket "T-REF-A": quantity: 39 is less than the 40 tickets already sold or held (line 6)`,
			}, problemsOf(t, err))
		})
	})
}

// TestImportRefusesTextWhole: a file with one name that is not text is
// refused whole; nothing of it, the good objects included, is written.
func TestImportRefusesTextWhole(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		bad := strings.Replace(refFile, `"name": "B"`, `"name": "B\u001b[2J"`, 1)
		_, err := catalog.Import(ctx, db, mustParse(t, bad), time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
		require.Equal(t, []string{
			`ticket "T-REF-B": name: must not contain control characters or bidirectional text controls (line 7)`,
		}, problemsOf(t, err))
		n, err := db.NewSelect().TableExpr("venues").Where("reference = ?", "ref-hall").Count(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "nothing of a refused file is written")
	})
}

func TestImportSaysWhatChanged(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		first, err := catalog.Import(ctx, db, mustParse(t, refFile), t0)
		require.NoError(t, err)
		all := catalog.Counts{Venues: 1, Events: 1, EventDates: 1, Tickets: 2}
		require.Equal(t, all, first.Created)
		require.Equal(t, catalog.Counts{}, first.Updated)
		require.False(t, first.NothingChanged)

		again, err := catalog.Import(ctx, db, mustParse(t, refFile), t0.Add(time.Hour))
		require.NoError(t, err)
		require.True(t, again.NothingChanged)
		require.Equal(t, catalog.Counts{}, again.Created)
		require.Equal(t, catalog.Counts{}, again.Updated)
		require.Equal(t, all, again.Unchanged)
		require.Equal(t, "none", again.Updated.String())

		edited, err := catalog.Import(ctx, db, mustParse(t, strings.Replace(refFile, `"name": "B"`, `"name": "B2"`, 1)), t0.Add(2*time.Hour))
		require.NoError(t, err)
		require.False(t, edited.NothingChanged)
		require.Equal(t, catalog.Counts{Tickets: 1}, edited.Updated)
		require.Equal(t, catalog.Counts{Venues: 1, Events: 1, EventDates: 1, Tickets: 1}, edited.Unchanged)
		require.Equal(t, "1 venue, 1 event, 1 event date, 2 tickets", all.String())
	})
}
