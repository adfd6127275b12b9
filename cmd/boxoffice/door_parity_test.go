package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/stretchr/testify/require"
)

// checkInFields is what the tests read of a GraphQL CheckIn.
const checkInFields = `id result reason direction gate scannedAt offline
	ticket { id code status checkedInAt ticketName position ticketsInOrder eventdateId environment }
	previous { scannedAt gate }`

const (
	checkInMutation = `mutation($in: CheckInInput!) { checkIn(input: $in) { checkIn { ` + checkInFields + ` }
	replayed userErrors { code field message } } }`
	checkInStatsQuery = `query($d: Int!) { checkInStats(eventDateId: $d) { eventdateId issued checkedIn inside rejectedScans offlineConflicts } }`
)

// scanAnswer is what a door said to a request, reduced to what both
// doors must agree on: a refusal's code, message and field messages (REST
// names), or the check-in with its ticket's status; Status is the HTTP
// status.
type scanAnswer struct {
	Status        int
	Code, Message string
	Fields        map[string][]string
	Replayed      bool
	Result        string
	Reason        string
	Direction     string
	Gate          string
	Offline       bool
	Ticket        string // the ticket's status; "" without a ticket
	PreviousGate  string
	// ScannedAt, CheckedInAt (the ticket's) and PreviousAt are compared
	// only where a case says so: each door scans tickets of its own.
	ScannedAt, CheckedInAt, PreviousAt string
	// Stats are the date's numbers, by REST's names.
	Stats map[string]float64
}

// checkInDoor is one of the two APIs a door device can use.
type checkInDoor interface {
	scan(t *testing.T, key, idem string, body map[string]any) scanAnswer
	stats(t *testing.T, key string, dateID int64) scanAnswer
	// events and order are what a scanner key may not do.
	events(t *testing.T, key string) scanAnswer
	order(t *testing.T, key, ref string) scanAnswer
}

// restDoor is POST /api/v1/check-ins and its stats.
type restDoor struct{ tb *testBundle }

func (d restDoor) scan(t *testing.T, key, idem string, body map[string]any) scanAnswer {
	t.Helper()
	var h []string
	if idem != "" {
		h = []string{"Idempotency-Key", idem}
	}
	res := d.tb.checkIn(t, key, body, h...)
	if res.Status != http.StatusOK {
		return restRefusal(res)
	}
	require.Equal(t, map[string]any{"status_code": 200.0}, res.Body["meta"], "%s", res.Raw)
	a := scanOf(t, res.data(), body["code"])
	a.Status, a.Replayed = res.Status, res.Header.Get("Idempotent-Replayed") == "true"
	return a
}

func (d restDoor) stats(t *testing.T, key string, dateID int64) scanAnswer {
	t.Helper()
	res := d.tb.get(t, fmt.Sprintf("/api/v1/check-ins/stats?eventdate_id=%d", dateID), key)
	if res.Status != http.StatusOK {
		return restRefusal(res)
	}
	a := scanAnswer{Status: res.Status, Stats: map[string]float64{}}
	for k, v := range res.data() {
		a.Stats[k] = v.(float64)
	}
	return a
}

func (d restDoor) events(t *testing.T, key string) scanAnswer {
	t.Helper()
	return restRefusal(d.tb.get(t, "/api/v1/events", key))
}

func (d restDoor) order(t *testing.T, key, ref string) scanAnswer {
	t.Helper()
	return restRefusal(d.tb.get(t, "/api/v1/orders/"+ref, key))
}

func restRefusal(res *response) scanAnswer {
	a := restAnswer(res)
	return scanAnswer{Status: a.Status, Code: a.Code, Message: a.Message, Fields: a.Fields}
}

// gqlDoor is the checkIn mutation, Query.checkInStats and the rest of the
// schema.
type gqlDoor struct{ tb *testBundle }

func (d gqlDoor) scan(t *testing.T, key, idem string, body map[string]any) scanAnswer {
	t.Helper()
	in := gqlInput(body, false).(map[string]any)
	if dir, ok := in["direction"].(string); ok {
		in["direction"] = strings.ToUpper(dir)
	}
	if idem != "" {
		in["idempotencyKey"] = idem
	}
	res := d.tb.graphql(t, key, checkInMutation, map[string]any{"in": in})
	payload, _ := res.data()["checkIn"].(map[string]any)
	if payload == nil || len(payload["userErrors"].([]any)) > 0 {
		return gqlRefusal(t, res)
	}
	require.Nil(t, res.Body["errors"], "%s", res.Raw)
	a := scanOf(t, gqlToREST(payload["checkIn"]).(map[string]any), body["code"])
	a.Status, a.Replayed = res.Status, payload["replayed"].(bool)
	return a
}

func (d gqlDoor) stats(t *testing.T, key string, dateID int64) scanAnswer {
	t.Helper()
	res := d.tb.graphql(t, key, checkInStatsQuery, map[string]any{"d": dateID})
	st, _ := res.data()["checkInStats"].(map[string]any)
	if st == nil {
		return gqlRefusal(t, res)
	}
	a := scanAnswer{Status: res.Status, Stats: map[string]float64{}}
	for k, v := range gqlToREST(st).(map[string]any) {
		a.Stats[k] = v.(float64)
	}
	return a
}

func (d gqlDoor) events(t *testing.T, key string) scanAnswer {
	t.Helper()
	return gqlRefusal(t, d.tb.graphql(t, key, `{ events { nodes { id } } }`, nil))
}

func (d gqlDoor) order(t *testing.T, key, ref string) scanAnswer {
	t.Helper()
	return gqlRefusal(t, d.tb.graphql(t, key, orderQuery, map[string]any{"r": ref}))
}

// gqlRefusal reads a GraphQL refusal: the one top-level error, or the
// payload's userErrors, with field paths in REST's names.
func gqlRefusal(t *testing.T, res *response) scanAnswer {
	t.Helper()
	g := gqlAnswer(t, res)
	a := scanAnswer{Status: g.Status, Code: g.Code, Message: g.Message}
	require.NotEmpty(t, a.Code, "a refusal: %s", res.Raw)
	for path, msgs := range g.Fields {
		if a.Fields == nil {
			a.Fields = map[string][]string{}
		}
		a.Fields[camelToSnake(strings.TrimPrefix(path, "input."))] = msgs
	}
	return a
}

// gqlToREST turns a GraphQL answer into REST's names and values: keys in
// snake_case, enum values in lower case.
func gqlToREST(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "result" || k == "reason" || k == "direction" || k == "status" || k == "environment") {
				x = strings.ToLower(s)
			}
			out[camelToSnake(k)] = gqlToREST(x)
		}
		return out
	}
	return v
}

func camelToSnake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// scanOf reads a check-in (in REST's names) as a scanAnswer, checking
// what both doors show alike: the ticket is the one scanned, and an
// admitted entry's ticket is checked in.
func scanOf(t *testing.T, v map[string]any, code any) scanAnswer {
	t.Helper()
	require.Regexp(t, `^chk_[a-z2-7]{26}$`, v["id"])
	a := scanAnswer{Result: v["result"].(string), Direction: v["direction"].(string), ScannedAt: v["scanned_at"].(string)}
	a.Reason, _ = v["reason"].(string)
	a.Gate, _ = v["gate"].(string)
	a.Offline = v["offline"].(bool)
	if tk, ok := v["ticket"].(map[string]any); ok {
		a.Ticket = tk["status"].(string)
		a.CheckedInAt, _ = tk["checked_in_at"].(string)
		require.Equal(t, strings.ToUpper(strings.TrimSpace(code.(string))), tk["code"], "the ticket scanned")
		require.Regexp(t, `^itk_`, tk["id"])
	}
	if p, ok := v["previous"].(map[string]any); ok {
		a.PreviousAt = p["scanned_at"].(string)
		a.PreviousGate, _ = p["gate"].(string)
	}
	return a
}

// TestCheckInParity plays every rule of the door through both doors, REST
// and GraphQL, each with tickets of its own, and expects the same answer:
// every reason of the spec in its order, entry, exit and re-entry, an
// offline scan, an offline conflict, an exit dated before its admission,
// idempotent retries, validation, and which kind of key
// opens what.
func TestCheckInParity(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		tb := setup(t, db)
		testDoor, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
		liveDoor, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvLive)
		otherDoor, _ := tb.scannerKey(t, "DEMO-HIGHLIFE", store.EnvTest)
		const day1, day2 = "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-2"
		ticket := func(t *testing.T) string { return tb.freeTickets(t, tb.testKey, 1)[0]["code"].(string) }

		admitted := scanAnswer{Status: 200, Result: "admitted", Direction: "entry", Ticket: "checked_in"}
		rejected := func(reason, ticketStatus string) scanAnswer {
			return scanAnswer{Status: 200, Result: "rejected", Reason: reason, Direction: "entry", Ticket: ticketStatus}
		}
		invalid := func(fields map[string][]string) scanAnswer {
			return scanAnswer{Status: 422, Code: "validation_failed", Message: "The request payload failed validation.", Fields: fields}
		}
		exit := func(a scanAnswer) scanAnswer { a.Direction = "exit"; return a }
		dateOf := func(ref string) int64 { return tb.demo.Catalog.EventDates[ref] }
		scannedAt := time.Now().UTC().Add(-time.Hour).Truncate(time.Second).Format(time.RFC3339)

		cases := []struct {
			name string
			play func(t *testing.T, d checkInDoor) scanAnswer
			want scanAnswer
			// gqlMessage is GraphQL's message where it names its own field.
			gqlMessage string
			// times: compare the scan's and the ticket's times too.
			times bool
		}{
			{name: "OK", play: func(t *testing.T, d checkInDoor) scanAnswer {
				a := d.scan(t, testDoor, "", tb.scan(ticket(t), day1, "gate", "North"))
				require.NotEmpty(t, a.ScannedAt)
				return a
			}, want: admitted.atGate("North")},
			{name: "OKExit", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c := ticket(t)
				require.Equal(t, "admitted", d.scan(t, testDoor, "", tb.scan(c, day1)).Result)
				return d.scan(t, testDoor, "", tb.scan(c, day1, "direction", "exit"))
			}, want: exit(admitted)},
			{name: "OKReentry", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c := ticket(t)
				first := d.scan(t, testDoor, "", tb.scan(c, day1))
				require.Equal(t, "admitted", d.scan(t, testDoor, "", tb.scan(c, day1, "direction", "exit")).Result)
				again := d.scan(t, testDoor, "", tb.scan(c, day1))
				require.Equal(t, first.ScannedAt, again.CheckedInAt, "checked_in_at keeps the first admission")
				return again
			}, want: admitted},
			{name: "OKOffline", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", tb.scan(ticket(t), day1, "scanned_at", scannedAt))
			}, want: admitted.scannedAt(scannedAt).offline(), times: true},
			{name: "ErrOfflineConflict", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c := ticket(t)
				require.Equal(t, "admitted", d.scan(t, testDoor, "", tb.scan(c, day1, "gate", "North")).Result)
				return d.scan(t, testDoor, "", tb.scan(c, day1, "gate", "South", "scanned_at", scannedAt))
			}, want: rejected("already_checked_in", "checked_in").atGate("South").after("North").offline()},
			{name: "ErrNotInsideExitBeforeAdmission", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c := ticket(t)
				require.Equal(t, "admitted", d.scan(t, testDoor, "", tb.scan(c, day1, "scanned_at", scannedAt)).Result)
				before := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Second).Format(time.RFC3339)
				return d.scan(t, testDoor, "", tb.scan(c, day1, "direction", "exit", "scanned_at", before))
			}, want: exit(rejected("not_inside", "checked_in")).offline()},
			{name: "OKCodeAsTyped", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", tb.scan("  "+strings.ToLower(ticket(t))+"\n", day1))
			}, want: admitted},

			// The reasons, in the spec's order.
			{name: "ErrUnknownCode", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", tb.scan("TESTNOSUCHCODE0000000000000000000", day1))
			}, want: rejected("unknown_code", "")},
			{name: "ErrUnknownCodeLiveTicketAtTestDoor", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", tb.scan(tb.freeTickets(t, tb.liveKey, 1)[0]["code"].(string), day1))
			}, want: rejected("unknown_code", "")},
			{name: "ErrTestTicket", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, liveDoor, "", tb.scan(ticket(t), day1))
			}, want: rejected("test_ticket", "valid")},
			{name: "ErrWrongEvent", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, otherDoor, "", tb.scan(ticket(t), "DEMO-HIGHLIFE-1"))
			}, want: rejected("wrong_event", "valid")},
			{name: "ErrWrongDate", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", tb.scan(ticket(t), day2))
			}, want: rejected("wrong_date", "valid")},
			{name: "ErrVoid", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c := ticket(t)
				_, err := tb.m.Tickets.Void(context.Background(), tickets.VoidRequest{Code: c, Reason: "Refunded"})
				require.NoError(t, err)
				return d.scan(t, testDoor, "", tb.scan(c, day1))
			}, want: rejected("void", "void")},
			{name: "ErrAlreadyCheckedIn", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c := ticket(t)
				first := d.scan(t, testDoor, "", tb.scan(c, day1, "gate", "North"))
				again := d.scan(t, testDoor, "", tb.scan(c, day1, "gate", "South"))
				require.Equal(t, first.ScannedAt, again.PreviousAt, "previous is the admission that stands")
				return again
			}, want: rejected("already_checked_in", "checked_in").atGate("South").after("North")},
			{name: "ErrNotInside", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", tb.scan(ticket(t), day1, "direction", "exit"))
			}, want: exit(rejected("not_inside", "valid"))},
			// Reasons are checked in order: a void ticket of another date is wrong_date.
			{name: "ErrWrongDateBeforeVoid", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c := ticket(t)
				_, err := tb.m.Tickets.Void(context.Background(), tickets.VoidRequest{Code: c})
				require.NoError(t, err)
				return d.scan(t, testDoor, "", tb.scan(c, day2))
			}, want: rejected("wrong_date", "void")},

			// Retries under an idempotency key.
			{name: "OKReplayed", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c, key := ticket(t), newIdemKey()
				first := d.scan(t, testDoor, key, tb.scan(c, day1))
				require.False(t, first.Replayed)
				again := d.scan(t, testDoor, key, tb.scan(c, day1))
				require.Equal(t, first.ScannedAt, again.ScannedAt, "the same scan")
				return again
			}, want: admitted.replayed()},
			{name: "ErrIdempotencyConflict", play: func(t *testing.T, d checkInDoor) scanAnswer {
				c, key := ticket(t), newIdemKey()
				d.scan(t, testDoor, key, tb.scan(c, day1))
				return d.scan(t, testDoor, key, tb.scan(c, day1, "direction", "exit"))
			}, want: scanAnswer{Status: 409, Code: "idempotency_conflict", Message: "This Idempotency-Key was already used with a different scan."}},
			{name: "ErrIdempotencyKeyControl", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "key\twith-tab", tb.scan(ticket(t), day1))
			}, want: scanAnswer{Status: 400, Code: "invalid_idempotency_key", Message: "The Idempotency-Key header must be UTF-8 text without control characters."},
				gqlMessage: "idempotencyKey must be UTF-8 text without control characters."},

			// Requests that are not scans.
			{name: "ErrEventDateNotFound", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", tb.scan(ticket(t), "DEMO-HIGHLIFE-1"))
			}, want: scanAnswer{Status: 404, Code: "event_date_not_found",
				Message: fmt.Sprintf("Event date %d is not a date of this scanner's event.", dateOf("DEMO-HIGHLIFE-1"))}},
			{name: "ErrRequired", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", map[string]any{"gate": "North"})
			}, want: invalid(map[string][]string{"code": {"is required"}, "eventdate_id": {"is required"}})},
			{name: "ErrBounds", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", map[string]any{"code": strings.Repeat("A", 129), "eventdate_id": 0,
					"gate": strings.Repeat("g", 65), "scanned_at": "2020-01-01T00:00:00Z"})
			}, want: invalid(map[string][]string{"code": {"must be at most 128 characters"}, "eventdate_id": {"must be a positive integer"},
				"gate": {"must be at most 64 characters"}, "scanned_at": {"must not be more than 7 days old"}})},
			{name: "ErrControlCharacters", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, testDoor, "", tb.scan("TEST\x00X", day1, "gate", "North\u202egate",
					"scanned_at", time.Now().UTC().Add(time.Hour).Format(time.RFC3339)))
			}, want: invalid(map[string][]string{"code": {"must be UTF-8 text without control characters"},
				"gate": {"must not contain control characters or bidirectional text controls"}, "scanned_at": {"must not be more than 5 minutes ahead of the server's clock"}})},
			{name: "ErrStatsEventDateNotFound", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.stats(t, testDoor, dateOf("DEMO-HIGHLIFE-1"))
			}, want: scanAnswer{Status: 404, Code: "event_date_not_found",
				Message: fmt.Sprintf("Event date %d is not a date of this scanner's event.", dateOf("DEMO-HIGHLIFE-1"))}},

			// Which key opens what.
			{name: "ErrAppKeyCheckIn", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, tb.testKey, "", tb.scan(ticket(t), day1))
			}, want: scanAnswer{Status: 403, Code: "scanner_key_required", Message: "Check-in takes a scanner key (svc_scan_…), not an app's API key."}},
			{name: "ErrAppKeyStats", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.stats(t, tb.liveKey, dateOf(day1))
			}, want: scanAnswer{Status: 403, Code: "scanner_key_required", Message: "Check-in takes a scanner key (svc_scan_…), not an app's API key."}},
			{name: "ErrScannerKeyCatalog", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.events(t, testDoor)
			}, want: scanAnswer{Status: 403, Code: "scanner_key_not_allowed", Message: "A scanner key opens only check-in; use the app's API key here."}},
			{name: "ErrScannerKeyOrder", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.order(t, testDoor, tb.freeTickets(t, tb.testKey, 1)[0]["order_reference"].(string))
			}, want: scanAnswer{Status: 403, Code: "scanner_key_not_allowed", Message: "A scanner key opens only check-in; use the app's API key here."}},
			{name: "ErrUnknownScannerKey", play: func(t *testing.T, d checkInDoor) scanAnswer {
				return d.scan(t, "svc_scan_test_"+strings.Repeat("a", 32), "", tb.scan(ticket(t), day1))
			}, want: scanAnswer{Status: 401, Code: "invalid_api_key", Message: "The API key is invalid or has been revoked."}},
		}

		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				for _, d := range []struct {
					name string
					door checkInDoor
				}{{"REST", restDoor{tb}}, {"GraphQL", gqlDoor{tb}}} {
					got := c.play(t, d.door)
					want := c.want
					if d.name == "GraphQL" {
						// An operation that ran is a 200 whatever it says;
						// only a key refused before it runs keeps its status.
						if want.Status != http.StatusUnauthorized {
							want.Status = http.StatusOK
						}
						if c.gqlMessage != "" {
							want.Message = c.gqlMessage
						}
						if got.Code == "validation_failed" && got.Message == "" {
							// userErrors carry a message per field only.
							got.Message = want.Message
						}
					}
					if !c.times {
						got.ScannedAt, got.CheckedInAt, got.PreviousAt = "", "", ""
					}
					require.Equal(t, want, got, "%s", d.name)
				}
			})
		}

		t.Run("Stats", func(t *testing.T) {
			rest := restDoor{tb}.stats(t, testDoor, dateOf(day1))
			gql := gqlDoor{tb}.stats(t, testDoor, dateOf(day1))
			require.Equal(t, http.StatusOK, rest.Status)
			require.Equal(t, rest, gql, "the same numbers through both doors")
			require.Equal(t, float64(dateOf(day1)), rest.Stats["eventdate_id"])
			require.Positive(t, rest.Stats["checked_in"])
			require.Positive(t, rest.Stats["rejected_scans"])
			require.Equal(t, 2.0, rest.Stats["offline_conflicts"], "ErrOfflineConflict, through each door")
		})
	})
}

func (a scanAnswer) atGate(g string) scanAnswer { a.Gate = g; return a }

// scannedAt is a with the scan's time, and its ticket's first admission,
// at.
func (a scanAnswer) scannedAt(at string) scanAnswer { a.ScannedAt, a.CheckedInAt = at, at; return a }

// after is a rejected as already_checked_in after an admission at gate.
func (a scanAnswer) after(gate string) scanAnswer { a.PreviousGate = gate; return a }

func (a scanAnswer) replayed() scanAnswer { a.Replayed = true; return a }

// offline is a received more than 30 seconds after it was scanned.
func (a scanAnswer) offline() scanAnswer { a.Offline = true; return a }

// TestGraphQLKeyFields: in one document, each field answers for the key
// that asks: a scanner key's check-in fields run beside its refused
// catalog field, an app key's catalog field beside its refused check-in
// field, each refusal an error of its own field; a catalog answer the
// response cache keeps for apps is never a scanner's; introspection is
// every key's.
func TestGraphQLKeyFields(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	door, _ := tb.scannerKey(t, "DEMO-CHALEWOTE", store.EnvTest)
	date := tb.demo.Catalog.EventDates["DEMO-CHALEWOTE-1"]
	const mixed = `query($d: Int!, $e: Int!) { checkInStats(eventDateId: $d) { issued } event(id: $e) { id } __typename }`
	vars := map[string]any{"d": date, "e": tb.demo.Catalog.Events["DEMO-HIGHLIFE"]}
	fieldErrors := func(res *response) map[string]string {
		out := map[string]string{}
		errs, _ := res.Body["errors"].([]any)
		for _, e := range errs {
			e := e.(map[string]any)
			path := fmt.Sprint(e["path"])
			out[path] = e["extensions"].(map[string]any)["code"].(string)
			require.NotContains(t, e["extensions"], "status", "the operation ran: %s", res.Raw)
		}
		return out
	}

	res := tb.graphql(t, door, mixed, vars)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	require.Equal(t, map[string]string{"[event]": "scanner_key_not_allowed"}, fieldErrors(res))
	require.Equal(t, map[string]any{"checkInStats": map[string]any{"issued": 0.0}, "event": nil, "__typename": "Query"}, res.data())

	res = tb.graphql(t, tb.testKey, mixed, vars)
	require.Equal(t, map[string]string{"[checkInStats]": "scanner_key_required"}, fieldErrors(res))
	require.Equal(t, "Query", res.data()["__typename"])
	require.NotNil(t, res.data()["event"])

	// A non-null field refused nulls the data, as any error of it does.
	res = tb.graphql(t, door, `{ events { nodes { id } } }`, nil)
	require.Equal(t, map[string]string{"[events]": "scanner_key_not_allowed"}, fieldErrors(res))
	require.Nil(t, res.Body["data"], "%s", res.Raw)

	const catalogQuery = `{ eventsConnection(first: 2) { edges { node { id name } } } }`
	for range 3 { // asked twice, kept, then answered from the response cache
		res = tb.graphql(t, tb.testKey, catalogQuery, nil)
		require.Nil(t, res.Body["errors"], "%s", res.Raw)
	}
	res = tb.graphql(t, door, catalogQuery, nil)
	require.Equal(t, map[string]string{"[eventsConnection]": "scanner_key_not_allowed"}, fieldErrors(res), "never from the cache")

	res = tb.graphql(t, door, `{ __schema { queryType { name } } __type(name: "CheckIn") { name } }`, nil)
	require.Nil(t, res.Body["errors"], "%s", res.Raw)
	require.Equal(t, "CheckIn", res.data()["__type"].(map[string]any)["name"])
}
