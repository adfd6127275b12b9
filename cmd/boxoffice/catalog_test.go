package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// JSON types of the spec's fields (sections 2.1–2.3); "|null" allows null.
var (
	eventFields = map[string]string{
		"id": "number", "reference": "string", "name": "string", "slug": "string",
		"description": "string|null", "image_url": "string|null", "active_dates_count": "number",
		"has_multiple_dates": "bool", "ussd_code": "string|null", "ussd_full_code": "string|null",
		"has_ussd": "bool", "next_startdate": "string|null", "last_enddate": "string|null",
		"next_startdate_iso": "string|null", "last_enddate_iso": "string|null",
		"next_startdate_display": "string|null", "last_enddate_display": "string|null",
		"timezone": "string", "created_at": "string", "updated_at": "string", "pricing": "object",
	}
	pricingFields = map[string]string{"has_free_tickets": "bool", "has_paid_tickets": "bool", "is_entirely_free": "bool"}
	dateFields    = map[string]string{
		"id": "number", "reference": "string", "event_id": "number", "startdate": "string", "enddate": "string",
		"startdate_iso": "string|null", "enddate_iso": "string|null", "startdate_display": "string|null",
		"enddate_display": "string|null", "online": "bool", "cancelled": "bool", "venue_id": "number|null", "venue_name": "string|null",
		"venue_slug": "string|null", "venue_street": "string|null", "venue_city": "string|null",
		"venue_state": "string|null", "venue_lat": "number|null", "venue_lng": "number|null", "timezone": "string",
	}
	ticketFields = map[string]string{
		"id": "number", "reference": "string", "eventdate_id": "number", "name": "string",
		"description": "string|null", "free": "bool", "price": "string|null", "promotionalprice": "string|null",
		"quantity": "number|null", "quantity_available": "number", "ticketsperattendee": "number|null",
		"salesstartdate": "string|null", "salesenddate": "string|null", "salesstartdate_iso": "string|null",
		"salesenddate_iso": "string|null", "currency": "string", "currency_symbol": "string", "is_free": "bool",
		"effective_price": "string", "requires_payment": "bool", "timezone": "string",
	}
)

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// requireShape checks that obj has exactly the spec's fields, each of its type.
func requireShape(t *testing.T, spec map[string]string, obj map[string]any) {
	t.Helper()
	var got, want []string
	for k := range obj {
		got = append(got, k)
	}
	for k := range spec {
		want = append(want, k)
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got, "field names")
	for k, types := range spec {
		typ := jsonType(obj[k])
		require.Contains(t, strings.Split(types, "|"), typ, "field %s is %s, want %s", k, typ, types)
	}
}

func names(t *testing.T, res *response) []string {
	t.Helper()
	var out []string
	for _, e := range res.Body["data"].([]any) {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

func TestCatalogREST(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		ids := tb.demo.Catalog
		key := tb.testKey
		event := func(ref string) string { return fmt.Sprint(ids.Events[ref]) }
		date := func(ref string) string { return fmt.Sprint(ids.EventDates[ref]) }
		visible := []string{
			"Highlife Night at the Conference Centre", "Chale Wote Street Art Festival", "Accra Tech Summit",
			"Saturday Cinema Club", "Laugh Out Loud Comedy Special", "Kumasi Jazz Evening", "Founders' Charity Gala",
		}

		t.Run("ListOK", func(t *testing.T) {
			res := tb.get(t, "/api/v1/events", key)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Equal(t, visible, names(t, res))
			require.Equal(t, map[string]any{
				"page": 1.0, "per_page": 20.0, "total": 7.0, "total_pages": 1.0,
				"has_next": false, "has_prev": false, "timezone": "Africa/Accra", "include_past": false,
			}, res.Body["meta"])
			for _, e := range res.Body["data"].([]any) {
				requireShape(t, eventFields, e.(map[string]any))
				requireShape(t, pricingFields, e.(map[string]any)["pricing"].(map[string]any))
			}
		})
		t.Run("ListPaging", func(t *testing.T) {
			res := tb.get(t, "/api/v1/events?per_page=2&page=2", key)
			require.Equal(t, visible[2:4], names(t, res))
			meta := res.Body["meta"].(map[string]any)
			require.Equal(t, []any{2.0, 2.0, 7.0, 4.0, true, true},
				[]any{meta["page"], meta["per_page"], meta["total"], meta["total_pages"], meta["has_next"], meta["has_prev"]})
			res = tb.get(t, "/api/v1/events?page=9", key)
			require.Empty(t, res.Body["data"])
			require.NotNil(t, res.Body["data"], "an empty page is [], not null")
			res = tb.get(t, "/api/v1/events?per_page=500", key)
			require.Equal(t, 100.0, res.Body["meta"].(map[string]any)["per_page"])
		})
		t.Run("ListSearch", func(t *testing.T) {
			require.Equal(t, visible[:1], names(t, tb.get(t, "/api/v1/events?q=HIGHLIFE", key)))
			require.Equal(t, visible[2:3], names(t, tb.get(t, "/api/v1/events?q=tech%20sum", key)))
			require.Empty(t, names(t, tb.get(t, "/api/v1/events?q=%25", key)), "%% is a literal, not a wildcard")
			require.Empty(t, names(t, tb.get(t, "/api/v1/events?q=Staff", key)), "hidden events are never found")
		})
		t.Run("ListIncludePast", func(t *testing.T) {
			res := tb.get(t, "/api/v1/events?include_past=true", key)
			require.Contains(t, names(t, res), "Homowo Harvest Concert")
			require.Len(t, names(t, res), 8)
			require.Equal(t, false, res.Body["meta"].(map[string]any)["include_past"])
		})
		t.Run("ErrListValidation", func(t *testing.T) {
			for q, field := range map[string]string{
				"per_page=abc": "per_page", "per_page=0": "per_page", "page=-1": "page", "include_past=maybe": "include_past",
			} {
				res := tb.get(t, "/api/v1/events?"+q, key)
				require.Equal(t, http.StatusUnprocessableEntity, res.Status, q)
				require.Equal(t, "validation_failed", res.errorCode(), q)
				details := res.Body["error"].(map[string]any)["details"].(map[string]any)
				require.Contains(t, details, field, q)
			}
		})

		t.Run("EventOK", func(t *testing.T) {
			res := tb.get(t, "/api/v1/events/"+event("DEMO-HIGHLIFE"), key)
			require.Equal(t, http.StatusOK, res.Status)
			e := res.Body["data"].(map[string]any)
			requireShape(t, eventFields, e)
			require.Equal(t, "DEMO-HIGHLIFE", e["reference"])
			require.Equal(t, 1.0, e["active_dates_count"])
			require.Equal(t, false, e["has_multiple_dates"])
			require.Equal(t, true, e["has_ussd"])
			require.Equal(t, "*713*33#", e["ussd_full_code"])
			require.Equal(t, map[string]any{"has_free_tickets": false, "has_paid_tickets": true, "is_entirely_free": false}, e["pricing"])
			require.Regexp(t, `^\d{4}-\d\d-\d\d 19:00:00$`, e["next_startdate"])
			require.Regexp(t, `^\d{4}-\d\d-\d\dT19:00:00Z$`, e["next_startdate_iso"])
			require.Regexp(t, `^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} 7:00 PM$`, e["next_startdate_display"])
			require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, e["created_at"])

			free := tb.get(t, "/api/v1/events/"+event("DEMO-CHALEWOTE"), key).Body["data"].(map[string]any)
			require.Equal(t, 3.0, free["active_dates_count"])
			require.Equal(t, true, free["has_multiple_dates"])
			require.Equal(t, false, free["has_ussd"])
			require.Equal(t, map[string]any{"has_free_tickets": true, "has_paid_tickets": false, "is_entirely_free": true}, free["pricing"])

			mixed := tb.get(t, "/api/v1/events/"+event("DEMO-TECHSUMMIT"), key).Body["data"].(map[string]any)
			require.Equal(t, map[string]any{"has_free_tickets": true, "has_paid_tickets": true, "is_entirely_free": false}, mixed["pricing"])

			past := tb.get(t, "/api/v1/events/"+event("DEMO-PAST"), key).Body["data"].(map[string]any)
			require.Equal(t, 0.0, past["active_dates_count"])
			require.Nil(t, past["next_startdate"])
			require.NotNil(t, past["last_enddate"])
		})
		t.Run("ErrEventNotFound", func(t *testing.T) {
			for _, id := range []string{event("DEMO-HIDDEN"), event("DEMO-DRAFT"), "999999", "abc", "0"} {
				for _, suffix := range []string{"", "/dates"} {
					res := tb.get(t, "/api/v1/events/"+id+suffix, key)
					require.Equal(t, http.StatusNotFound, res.Status, id+suffix)
					require.Equal(t, "event_not_found", res.errorCode(), id+suffix)
					require.Contains(t, res.errorMessage(), "was not found", id+suffix)
				}
			}
		})

		t.Run("DatesOK", func(t *testing.T) {
			res := tb.get(t, "/api/v1/events/"+event("DEMO-MOVIES")+"/dates", key)
			require.Equal(t, http.StatusOK, res.Status)
			data := res.Body["data"].([]any)
			require.Len(t, data, 3)
			for _, d := range data {
				requireShape(t, dateFields, d.(map[string]any))
			}
			first := data[0].(map[string]any)
			require.Equal(t, "DEMO-MOVIES-1", first["reference"])
			require.Equal(t, "National Theatre of Ghana", first["venue_name"])
			require.Equal(t, "Accra", first["venue_city"])
			require.Equal(t, 5.5557, first["venue_lat"])
			require.Equal(t, map[string]any{
				"event_id": float64(ids.Events["DEMO-MOVIES"]), "count": 3.0, "has_multiple_dates": true,
				"include_past": false, "timezone": "Africa/Accra",
			}, res.Body["meta"])

			res = tb.get(t, "/api/v1/events/"+event("DEMO-MOVIES")+"/dates?include_past=true", key)
			require.Len(t, res.Body["data"], 4)
			require.Equal(t, "DEMO-MOVIES-0", res.Body["data"].([]any)[0].(map[string]any)["reference"])
			require.Equal(t, true, res.Body["meta"].(map[string]any)["include_past"])

			online := tb.get(t, "/api/v1/events/"+event("DEMO-TECHSUMMIT")+"/dates", key).Body["data"].([]any)[1].(map[string]any)
			require.Equal(t, true, online["online"])
			require.Nil(t, online["venue_id"])
			require.Nil(t, online["venue_name"])
		})

		t.Run("TicketsOK", func(t *testing.T) {
			res := tb.get(t, "/api/v1/event-dates/"+date("DEMO-HIGHLIFE-1")+"/tickets", key)
			require.Equal(t, http.StatusOK, res.Status)
			require.Equal(t, map[string]any{
				"event_id": float64(ids.Events["DEMO-HIGHLIFE"]), "event_date_id": float64(ids.EventDates["DEMO-HIGHLIFE-1"]),
				"timezone": "Africa/Accra",
			}, res.Body["meta"])
			data := res.Body["data"].([]any)
			require.Len(t, data, 2)
			reg := data[0].(map[string]any)
			requireShape(t, ticketFields, reg)
			require.Equal(t, map[string]any{
				"reference": "DEMO-HIGHLIFE-REG", "price": "150.00", "promotionalprice": "120.00",
				"effective_price": "120.00", "free": false, "is_free": false, "requires_payment": true,
				"quantity": 800.0, "quantity_available": 586.0, "ticketsperattendee": 10.0,
				"currency": "GHS", "currency_symbol": "GH₵",
			}, pick(reg, "reference", "price", "promotionalprice", "effective_price", "free", "is_free",
				"requires_payment", "quantity", "quantity_available", "ticketsperattendee", "currency", "currency_symbol"))

			soldOut := tb.get(t, "/api/v1/event-dates/"+date("DEMO-COMEDY-1")+"/tickets", key).Body["data"].([]any)[0].(map[string]any)
			require.Equal(t, 0.0, soldOut["quantity_available"])

			stream := tb.get(t, "/api/v1/event-dates/"+date("DEMO-TECHSUMMIT-2")+"/tickets", key).Body["data"].([]any)[0].(map[string]any)
			require.Nil(t, stream["quantity"])
			require.Equal(t, 2147483647.0, stream["quantity_available"])
			require.Equal(t, "0.00", stream["effective_price"])
			require.Equal(t, true, stream["is_free"])

			jazz := tb.get(t, "/api/v1/event-dates/"+date("DEMO-JAZZ-1")+"/tickets", key).Body["data"].([]any)[0].(map[string]any)
			require.Regexp(t, `^\d{4}-\d\d-\d\d 09:00:00$`, jazz["salesstartdate"])
			require.Regexp(t, `^\d{4}-\d\d-\d\dT09:00:00Z$`, jazz["salesstartdate_iso"])
		})
		t.Run("ErrEventDateNotFound", func(t *testing.T) {
			tb.changeCatalog(t, func() {
				_, err := db.NewUpdate().Model((*store.EventDate)(nil)).Set("active = ?", false).
					Where("id = ?", ids.EventDates["DEMO-MOVIES-3"]).Exec(context.Background())
				require.NoError(t, err)
			})
			for _, id := range []string{date("DEMO-HIDDEN-1"), date("DEMO-DRAFT-1"), date("DEMO-MOVIES-3"), "999999", "abc"} {
				res := tb.get(t, "/api/v1/event-dates/"+id+"/tickets", key)
				require.Equal(t, http.StatusNotFound, res.Status, id)
				require.Equal(t, "event_date_not_found", res.errorCode(), id)
			}
			require.Len(t, tb.get(t, "/api/v1/events/"+event("DEMO-MOVIES")+"/dates", key).Body["data"], 2,
				"an inactive date is not listed either")
		})

		t.Run("ErrNotFoundRoute", func(t *testing.T) {
			for _, path := range []string{"/api/v1/nope", "/api/v1/events/1/nope", "/nope"} {
				res := tb.get(t, path, key)
				require.Equal(t, http.StatusNotFound, res.Status, path)
				require.Equal(t, "not_found", res.errorCode(), path)
			}
		})
		t.Run("ErrMethodNotAllowed", func(t *testing.T) {
			for _, method := range []string{http.MethodPost, http.MethodDelete, http.MethodPut} {
				res := tb.do(t, method, "/api/v1/events/"+event("DEMO-HIGHLIFE"), key, nil)
				require.Equal(t, http.StatusMethodNotAllowed, res.Status, method)
				require.Equal(t, "method_not_allowed", res.errorCode(), method)
				require.Contains(t, res.Header.Get("Allow"), "GET")
			}
		})
	})
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}
