package catalog_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/stretchr/testify/require"
)

func cursor(s string) *string {
	c := base64.RawURLEncoding.EncodeToString([]byte(s))
	return &c
}

// TestParams: the listing rule both APIs share, one case per parameter.
func TestParams(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	str := func(s string) *string { return &s }
	yes := true
	at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		req     catalog.ListRequest
		want    func(p *catalog.ListParams) // edits the defaults; nil on error
		details apperr.Details
	}{
		{"OKDefaults", catalog.ListRequest{}, func(*catalog.ListParams) {}, nil},
		{"OKPerPageCapped", catalog.ListRequest{PerPage: n(500)}, func(p *catalog.ListParams) { p.PerPage = 100 }, nil},
		{"OKFirst", catalog.ListRequest{First: n(7)}, func(p *catalog.ListParams) { p.PerPage = 7 }, nil},
		{"OKFilters", catalog.ListRequest{
			Slug: "jazz", City: "Kumasi", VenueID: n(3), Online: &yes, Free: &yes, OrderBy: "soonest",
			StartsAfter: "2026-12-24T20:00:00+02:00", StartsBefore: "2026-12-25T00:00:00Z",
		}, func(p *catalog.ListParams) {
			p.Slug, p.City, p.VenueID, p.OrderBy = "jazz", "Kumasi", 3, catalog.Soonest
			p.Online, p.Free = catalog.OptionalBool{Set: true, Value: true}, catalog.OptionalBool{Set: true, Value: true}
			p.StartsAfter, p.StartsBefore = at, at.Add(6*time.Hour)
		}, nil},
		{"OKAfter", catalog.ListRequest{After: cursor("newest:1797530400000000:42")}, func(p *catalog.ListParams) {
			p.After, p.HasAfter = store.EventKey{ID: 42, CreatedAt: time.UnixMicro(1797530400000000).UTC()}, true
		}, nil},
		{"OKAfterNoStart", catalog.ListRequest{After: cursor("soonest:-:9"), OrderBy: "soonest"}, func(p *catalog.ListParams) {
			p.After, p.HasAfter, p.OrderBy = store.EventKey{ID: 9}, true, catalog.Soonest
		}, nil},
		{"ErrFirstZero", catalog.ListRequest{First: n(0)}, nil, apperr.Details{"first": {"must be a positive integer"}}},
		{"ErrStartsAfter", catalog.ListRequest{StartsAfter: "tomorrow"}, nil,
			apperr.Details{"starts_after": {"must be an RFC 3339 date-time such as 2026-12-24T18:00:00Z"}}},
		{"ErrStartsBeforeDateOnly", catalog.ListRequest{StartsBefore: "2026-12-24"}, nil,
			apperr.Details{"starts_before": {"must be an RFC 3339 date-time such as 2026-12-24T18:00:00Z"}}},
		{"ErrRange", catalog.ListRequest{StartsAfter: "2026-12-24T18:00:00Z", StartsBefore: "2026-12-24T18:00:00Z"}, nil,
			apperr.Details{"starts_before": {"must be later than starts_after"}}},
		{"ErrVenueID", catalog.ListRequest{VenueID: n(0)}, nil, apperr.Details{"venue_id": {"must be a positive integer"}}},
		{"ErrCity", catalog.ListRequest{City: "Ac\ncra"}, nil, apperr.Details{"city": {"must not contain control characters"}}},
		{"ErrSlug", catalog.ListRequest{Slug: strings.Repeat("s", 201)}, nil, apperr.Details{"slug": {"must be at most 200 characters"}}},
		{"ErrOrderBy", catalog.ListRequest{OrderBy: "oldest"}, nil, apperr.Details{"order_by": {"must be newest or soonest"}}},
		{"ErrAfterGarbage", catalog.ListRequest{After: str("not a cursor!")}, nil, apperr.Details{"after": {"is not a cursor of this listing"}}},
		{"ErrAfterShape", catalog.ListRequest{After: cursor("newest:12")}, nil, apperr.Details{"after": {"is not a cursor of this listing"}}},
		{"ErrAfterNoCreated", catalog.ListRequest{After: cursor("newest:-:12")}, nil, apperr.Details{"after": {"is not a cursor of this listing"}}},
		{"ErrAfterOtherOrder", catalog.ListRequest{After: cursor("soonest:-:12")}, nil, apperr.Details{"after": {"is a cursor of another order_by"}}},
		{"ErrSeveral", catalog.ListRequest{PerPage: n(-1), City: "\x00", OrderBy: "x"}, nil, apperr.Details{
			"per_page": {"must be a positive integer"}, "city": {"must not contain control characters"}, "order_by": {"must be newest or soonest"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := tt.req.Params()
			if tt.details != nil {
				ae := apperr.From(err)
				require.Equal(t, apperr.ValidationFailed, ae.Code)
				require.Equal(t, "The request payload failed validation.", ae.Message)
				require.Equal(t, tt.details, ae.Details)
				return
			}
			require.NoError(t, err)
			want := catalog.ListParams{Page: 1, PerPage: 20, OrderBy: catalog.Newest}
			tt.want(&want)
			require.Equal(t, want, p)
		})
	}
}
