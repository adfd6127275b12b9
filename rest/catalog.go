package rest

import (
	"net/http"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/go-chi/chi/v5"
)

type eventsMeta struct {
	Page        int    `json:"page"`
	PerPage     int    `json:"per_page"`
	Total       int    `json:"total"`
	TotalPages  int    `json:"total_pages"`
	HasNext     bool   `json:"has_next"`
	HasPrev     bool   `json:"has_prev"`
	Timezone    string `json:"timezone"`
	IncludePast bool   `json:"include_past"` // always false: the contract's quirk
}

// listEvents is GET /api/v1/events (spec 4.1).
func (h *Handler) listEvents(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	v := q.v
	req := catalog.ListRequest{
		Page: q.int("page"), PerPage: q.int("per_page"),
		Q: v.Get("q"), IncludePast: q.bool("include_past"),
		Slug: v.Get("slug"), StartsAfter: v.Get("starts_after"), StartsBefore: v.Get("starts_before"),
		City: v.Get("city"), VenueID: q.int("venue_id"), Online: q.optBool("online"), Free: q.optBool("free"),
		OrderBy: v.Get("order_by"),
	}
	if err := q.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	body, err := h.Resolver.EventsPageEncoded(r.Context(), req, func(page *model.EventPage) ([]byte, error) {
		pi := page.PageInfo
		return encodeJSON(struct {
			Data []*model.Event `json:"data"`
			Meta eventsMeta     `json:"meta"`
		}{page.Nodes, eventsMeta{
			Page: pi.Page, PerPage: pi.PerPage, Total: pi.Total, TotalPages: pi.TotalPages,
			HasNext: pi.HasNext, HasPrev: pi.HasPrev, Timezone: page.Timezone,
		}})
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeBody(w, http.StatusOK, body)
}

// event loads the event of the {id} path parameter.
func (h *Handler) event(r *http.Request) (*model.Event, error) {
	id, err := pathID(r, apperr.New(apperr.EventNotFound, "Event %q was not found.", chi.URLParam(r, "id")))
	if err != nil {
		return nil, err
	}
	return h.Resolver.EventByID(r.Context(), int64(id))
}

// getEvent is GET /api/v1/events/{id} (spec 4.2).
func (h *Handler) getEvent(w http.ResponseWriter, r *http.Request) {
	ev, err := h.event(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data *model.Event `json:"data"`
	}{ev})
}

// listEventDates is GET /api/v1/events/{id}/dates (spec 4.3).
func (h *Handler) listEventDates(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	includePast := q.bool("include_past")
	if err := q.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	ev, err := h.event(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	dates, err := h.Resolver.DatesUnbatched(r.Context(), ev, includePast)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data []*model.EventDate `json:"data"`
		Meta any                `json:"meta"`
	}{dates, struct {
		EventID          int    `json:"event_id"`
		Count            int    `json:"count"`
		HasMultipleDates bool   `json:"has_multiple_dates"`
		IncludePast      bool   `json:"include_past"`
		Timezone         string `json:"timezone"`
	}{ev.ID, len(dates), ev.HasMultipleDates, includePast, ev.Timezone}})
}

// listTickets is GET /api/v1/event-dates/{id}/tickets (spec 4.4).
func (h *Handler) listTickets(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, apperr.New(apperr.EventDateNotFound, "Event date %q was not found.", chi.URLParam(r, "id")))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	date, err := h.Resolver.EventDateByID(r.Context(), int64(id))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	tickets, err := h.Resolver.TicketsUnbatched(r.Context(), date)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data []*model.Ticket `json:"data"`
		Meta any             `json:"meta"`
	}{tickets, struct {
		EventID     int    `json:"event_id"`
		EventDateID int    `json:"event_date_id"`
		Timezone    string `json:"timezone"`
	}{date.EventID, date.ID, date.Timezone}})
}
