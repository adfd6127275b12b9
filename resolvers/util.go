package resolvers

import (
	"strings"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph/model"
)

// deref returns *p, or the zero value for nil (an omitted GraphQL argument).
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// listRequest completes a listing request (its paging already set) with
// the filter arguments events and eventsConnection share.
func listRequest(req catalog.ListRequest, q *string, includePast *bool, slug, startsAfter, startsBefore, city *string,
	venueID *int, online, free *bool, orderBy *model.EventOrder) catalog.ListRequest {
	req.Q, req.IncludePast, req.Slug = deref(q), deref(includePast), deref(slug)
	req.StartsAfter, req.StartsBefore, req.City = deref(startsAfter), deref(startsBefore), deref(city)
	req.VenueID, req.Online, req.Free = venueID, online, free
	req.OrderBy = strings.ToLower(string(deref(orderBy)))
	return req
}
