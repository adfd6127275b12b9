package resolvers

import (
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/graph/model"
)

// Assumed list sizes for complexity: a page multiplies by its perPage.
const (
	datesPerEvent  = 5
	ticketsPerDate = 5
)

// Complexity estimates list fields by their size, for graph.Config: a
// page multiplies its children by the page size the resolver will use.
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	c.Query.Events = func(child int, _ *int, perPage *int, _ *string, _ *bool, _, _, _, _ *string, _ *int, _, _ *bool, _ *model.EventOrder) int {
		// The page size the resolver will use (a refused perPage is
		// charged the default; the request fails anyway).
		p, _ := catalog.ListRequest{PerPage: perPage}.Params()
		return 1 + p.PerPage*child
	}
	c.Query.EventsConnection = func(child int, first *int, _ *string, _ *string, _ *bool, _, _, _, _ *string, _ *int, _, _ *bool, _ *model.EventOrder) int {
		p, _ := catalog.ListRequest{First: first}.Params()
		return 1 + p.PerPage*child
	}
	// A first out of range is charged the nearest size; the request fails anyway.
	pageOf := func(first *int, def int) int {
		if first == nil {
			return def
		}
		return min(max(*first, 1), checkout.MaxOrdersLimit)
	}
	c.Query.Orders = func(child int, _ *model.OrderFilter, first *int, _ *string) int {
		return 1 + pageOf(first, checkout.DefaultOrdersLimit)*child
	}
	c.Query.OrderChanges = func(child int, _ *string, first *int) int {
		return 1 + pageOf(first, checkout.DefaultChangesLimit)*child
	}
	c.Event.Dates = func(child int, _ *bool) int { return 1 + datesPerEvent*child }
	c.EventDate.Tickets = func(child int) int { return 1 + ticketsPerDate*child }
	return c
}
