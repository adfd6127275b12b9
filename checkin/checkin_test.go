package checkin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// bundle is a check-in service over a fresh database holding the demo
// catalog and app, with the checkout and tickets services that make and
// void the tickets it scans. The clock stands still at f.Now.
type bundle struct {
	db      *store.DB
	f       *checkouttest.Fixture
	svc     *checkin.Service
	tickets *tickets.Service
	prov    *provision.Service
	orders  int
}

func setup(t *testing.T, db *store.DB) *bundle {
	t.Helper()
	f := checkouttest.MustNew(t, db)
	clock := func() time.Time { return f.Now }
	f.Service.Tickets.Webhooks = f.Service.Webhooks
	return &bundle{
		db: db, f: f, tickets: f.Service.Tickets, prov: &provision.Service{DB: db, Now: clock},
		svc: &checkin.Service{DB: db, Webhooks: f.Service.Webhooks, Now: clock},
	}
}

// scanner makes a scanner key for a demo event in env.
func (b *bundle) scanner(t *testing.T, event, env string) checkin.Scanner {
	t.Helper()
	s, err := b.prov.CreateScanner(context.Background(), provision.ScannerInput{
		EventID: int64(b.f.ID(t, event)), Environment: env, Name: "Gate " + event})
	require.NoError(t, err)
	return checkin.Scanner{ID: s.Scanner.ID, EventID: s.Scanner.EventID, Environment: s.Scanner.Environment}
}

// order buys qty tickets of a demo ticket in env, paying for a paid cart
// (sandbox), and returns the order as the API shows it.
func (b *bundle) order(t *testing.T, env, event, date, ticket string, qty int) *checkout.OrderView {
	t.Helper()
	ctx := context.Background()
	b.orders++
	caller := checkout.Caller{AppID: b.f.Demo.App.App.ID, Environment: env}
	sess, _, err := b.f.Service.Create(ctx, caller, checkout.Request{Key: fmt.Sprintf("door-%d", b.orders), Input: &checkout.Input{
		EventID: ptr(b.f.ID(t, event)), EventdateID: ptr(b.f.ID(t, date)),
		Items:      []*checkout.Item{{TicketID: ptr(b.f.ID(t, ticket)), Quantity: ptr(qty)}},
		Customer:   &checkout.Customer{Name: ptr("Ama Mensah"), Email: ptr(fmt.Sprintf("ama%d@example.com", b.orders)), Phone: ptr("0241234567")},
		SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
	}})
	require.NoError(t, err)
	if sess.Status == store.OrderPending {
		_, _, err := b.f.Service.Settle(ctx, sess.OrderReference, store.OrderPaid)
		require.NoError(t, err)
	}
	v, err := b.f.Service.OrderView(ctx, caller, sess.OrderReference)
	require.NoError(t, err)
	require.Len(t, v.Tickets, qty)
	return v
}

// gaCode is the code of a new ticket of the first Chale Wote date in env.
func (b *bundle) gaCode(t *testing.T, env string) string {
	t.Helper()
	return b.order(t, env, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1).Tickets[0].Code
}

// input is a scan of code for a demo date, changed by edits.
func (b *bundle) input(t *testing.T, code, date string, edits ...func(*checkin.Input)) *checkin.Input {
	t.Helper()
	in := &checkin.Input{Code: ptr(code), EventdateID: ptr(b.f.ID(t, date))}
	for _, e := range edits {
		e(in)
	}
	return in
}

// scan checks code in at a demo date and requires a decided scan.
func (b *bundle) scan(t *testing.T, sc checkin.Scanner, code, date string, edits ...func(*checkin.Input)) *checkin.View {
	t.Helper()
	v, replayed, err := b.svc.CheckIn(context.Background(), sc, checkin.Request{Input: b.input(t, code, date, edits...)})
	require.NoError(t, err)
	require.False(t, replayed)
	require.Regexp(t, `^chk_[a-z2-7]{26}$`, v.ID)
	return v
}

func exit(in *checkin.Input)             { in.Direction = ptr(store.CheckInExit) }
func gate(g string) func(*checkin.Input) { return func(in *checkin.Input) { in.Gate = &g } }
func at(ts time.Time) func(*checkin.Input) {
	return func(in *checkin.Input) { in.ScannedAt = ptr(ts.Format(time.RFC3339)) }
}
func reason(v *checkin.View) string              { return *v.Reason }
func (b *bundle) void(t *testing.T, code string) { b.voidWith(t, tickets.VoidRequest{Code: code}, 1) }

func (b *bundle) voidWith(t *testing.T, r tickets.VoidRequest, want int) *tickets.Voided {
	t.Helper()
	out, err := b.tickets.Void(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, want, out.Voided)
	return out
}

// events returns the type and data of every webhook event of an order,
// in sequence order, from the given sequence on.
func (b *bundle) events(t *testing.T, ref string, from int64) (types []string, data []map[string]any) {
	t.Helper()
	var rows []store.WebhookEvent
	require.NoError(t, b.db.NewSelect().Model(&rows).
		Where("order_id = (SELECT id FROM orders WHERE reference = ?)", ref).Where("sequence >= ?", from).
		Order("sequence").Scan(context.Background()))
	for i, r := range rows {
		require.Equal(t, from+int64(i), r.Sequence, "sequences follow each other")
		var body struct {
			Data map[string]any `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.Payload), &body))
		types, data = append(types, r.Type), append(data, body.Data)
	}
	return types, data
}

// TestReasons: each reason of spec/fulfilment.md section 4, and where two
// apply, the one checked first.
func TestReasons(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		testDoor, liveDoor := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest), b.scanner(t, "DEMO-CHALEWOTE", store.EnvLive)
		otherDoor := b.scanner(t, "DEMO-HIGHLIFE", store.EnvTest)
		highlife := b.order(t, store.EnvTest, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 1).Tickets[0].Code
		day2 := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-2", "DEMO-CHALEWOTE-2-GA", 1).Tickets[0].Code

		for _, tc := range []struct {
			name  string
			door  checkin.Scanner
			code  func(t *testing.T) string
			date  string
			edits []func(*checkin.Input)
			want  string // "" for admitted
		}{
			{"OK", testDoor, func(t *testing.T) string { return b.gaCode(t, store.EnvTest) }, "DEMO-CHALEWOTE-1", nil, ""},
			{"OKLive", liveDoor, func(t *testing.T) string { return b.gaCode(t, store.EnvLive) }, "DEMO-CHALEWOTE-1", nil, ""},
			{"OKLowerCaseTyped", testDoor, func(t *testing.T) string { return " " + strings.ToLower(b.gaCode(t, store.EnvTest)) + "\n" },
				"DEMO-CHALEWOTE-1", nil, ""},
			{"UnknownCode", testDoor, func(*testing.T) string { return "NOSUCHCODE0000000000000000000000" }, "DEMO-CHALEWOTE-1", nil, checkin.UnknownCode},
			{"UnknownCodeLiveCodeAtTestDoor", testDoor, func(t *testing.T) string { return b.gaCode(t, store.EnvLive) },
				"DEMO-CHALEWOTE-1", nil, checkin.UnknownCode},
			{"TestTicket", liveDoor, func(t *testing.T) string { return b.gaCode(t, store.EnvTest) }, "DEMO-CHALEWOTE-1", nil, checkin.TestTicket},
			{"TestTicketBeforeWrongEvent", b.scanner(t, "DEMO-HIGHLIFE", store.EnvLive), func(*testing.T) string { return day2 },
				"DEMO-HIGHLIFE-1", nil, checkin.TestTicket},
			{"WrongEvent", otherDoor, func(*testing.T) string { return day2 }, "DEMO-HIGHLIFE-1", nil, checkin.WrongEvent},
			{"WrongEventBeforeWrongDate", testDoor, func(*testing.T) string { return highlife }, "DEMO-CHALEWOTE-2", nil, checkin.WrongEvent},
			{"WrongDate", testDoor, func(*testing.T) string { return day2 }, "DEMO-CHALEWOTE-1", nil, checkin.WrongDate},
			{"WrongDateBeforeVoid", testDoor, func(t *testing.T) string {
				c := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-3", "DEMO-CHALEWOTE-3-GA", 1).Tickets[0].Code
				b.void(t, c)
				return c
			}, "DEMO-CHALEWOTE-1", nil, checkin.WrongDate},
			{"Void", testDoor, func(t *testing.T) string {
				c := b.gaCode(t, store.EnvTest)
				b.void(t, c)
				return c
			}, "DEMO-CHALEWOTE-1", nil, checkin.Void},
			{"VoidBeforeAlreadyCheckedIn", testDoor, func(t *testing.T) string {
				c := b.gaCode(t, store.EnvTest)
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1").Admitted())
				b.void(t, c)
				return c
			}, "DEMO-CHALEWOTE-1", nil, checkin.Void},
			{"VoidOnExit", testDoor, func(t *testing.T) string {
				c := b.gaCode(t, store.EnvTest)
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1").Admitted())
				b.void(t, c)
				return c
			}, "DEMO-CHALEWOTE-1", []func(*checkin.Input){exit}, checkin.Void},
			{"AlreadyCheckedIn", testDoor, func(t *testing.T) string {
				c := b.gaCode(t, store.EnvTest)
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1").Admitted())
				return c
			}, "DEMO-CHALEWOTE-1", nil, checkin.AlreadyCheckedIn},
			{"NotInside", testDoor, func(t *testing.T) string { return b.gaCode(t, store.EnvTest) }, "DEMO-CHALEWOTE-1",
				[]func(*checkin.Input){exit}, checkin.NotInside},
			{"NotInsideAfterExit", testDoor, func(t *testing.T) string {
				c := b.gaCode(t, store.EnvTest)
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1").Admitted())
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1", exit).Admitted())
				return c
			}, "DEMO-CHALEWOTE-1", []func(*checkin.Input){exit}, checkin.NotInside},
			{"NotInsideExitBeforeAdmission", testDoor, func(t *testing.T) string {
				c := b.gaCode(t, store.EnvTest)
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1", at(b.f.Now.Add(-time.Hour))).Admitted())
				return c
			}, "DEMO-CHALEWOTE-1", []func(*checkin.Input){exit, at(b.f.Now.Add(-2 * time.Hour))}, checkin.NotInside},
			{"OKExitAtAdmission", testDoor, func(t *testing.T) string {
				c := b.gaCode(t, store.EnvTest)
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1", at(b.f.Now.Add(-time.Hour))).Admitted())
				return c
			}, "DEMO-CHALEWOTE-1", []func(*checkin.Input){exit, at(b.f.Now.Add(-time.Hour))}, ""},
			{"NotInsideExitBeforeReadmission", testDoor, func(t *testing.T) string {
				c := b.gaCode(t, store.EnvTest)
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1", at(b.f.Now.Add(-3*time.Hour))).Admitted())
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1", exit, at(b.f.Now.Add(-2*time.Hour))).Admitted())
				require.True(t, b.scan(t, testDoor, c, "DEMO-CHALEWOTE-1", at(b.f.Now.Add(-time.Hour))).Admitted())
				return c
			}, "DEMO-CHALEWOTE-1", []func(*checkin.Input){exit, at(b.f.Now.Add(-90 * time.Minute))}, checkin.NotInside},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code := tc.code(t)
				v := b.scan(t, tc.door, code, tc.date, tc.edits...)
				if tc.want == "" {
					require.Equal(t, store.CheckInAdmitted, v.Result)
					require.Nil(t, v.Reason)
					require.Equal(t, store.TicketCheckedIn, v.Ticket.Status)
					return
				}
				require.Equal(t, store.CheckInRejected, v.Result)
				require.Equal(t, tc.want, reason(v))
				if tc.want == checkin.UnknownCode {
					require.Nil(t, v.Ticket, "an unknown code shows no ticket")
					var answers []string
					require.NoError(t, db.NewSelect().Model((*store.CheckIn)(nil)).Column("answer").
						Where("public_id = ?", v.ID).Scan(context.Background(), &answers))
					require.Len(t, answers, 1)
					require.NotContains(t, strings.ToUpper(answers[0]), strings.ToUpper(strings.TrimSpace(code)),
						"an unknown code is never stored")
				} else {
					require.Equal(t, strings.ToUpper(strings.TrimSpace(code)), v.Ticket.Code)
				}
			})
		}
	})
}

// TestEntryExit: a ticket goes in, is refused a second entry (naming the
// admission that stands), goes out, is refused a second exit, and comes
// back in; checked_in_at keeps the first admission, and each admitted
// entry emits ticket.checked_in with the order's next sequence and
// touches the order.
func TestEntryExit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		door := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		o := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2)
		code := o.Tickets[0].Code
		first, later := b.f.Now.Add(-2*time.Hour), b.f.Now.Add(-time.Hour)
		const date = "DEMO-CHALEWOTE-1"

		in := b.scan(t, door, code, date, gate("North"), at(first))
		require.True(t, in.Admitted())
		require.Equal(t, store.CheckInEntry, in.Direction)
		require.Equal(t, "North", *in.Gate)
		require.Equal(t, first.UTC().Format(time.RFC3339), in.ScannedAt)
		require.Equal(t, first.UTC().Format(time.RFC3339), *in.Ticket.CheckedInAt)
		require.Nil(t, in.Previous)

		again := b.scan(t, door, code, date, gate("South"))
		require.Equal(t, checkin.AlreadyCheckedIn, reason(again))
		require.Equal(t, &checkin.Previous{ScannedAt: in.ScannedAt, Gate: ptr("North")}, again.Previous)
		require.Equal(t, "South", *again.Gate)

		out := b.scan(t, door, code, date, exit, at(later))
		require.True(t, out.Admitted())
		require.Equal(t, store.TicketCheckedIn, out.Ticket.Status, "a ticket that went out was checked in")
		require.Equal(t, checkin.NotInside, reason(b.scan(t, door, code, date, exit)))

		back := b.scan(t, door, code, date, gate("East"))
		require.True(t, back.Admitted())
		require.Equal(t, in.Ticket.CheckedInAt, back.Ticket.CheckedInAt, "checked_in_at keeps the first admission")
		require.Equal(t, &checkin.Previous{ScannedAt: back.ScannedAt, Gate: ptr("East")},
			b.scan(t, door, code, date).Previous, "the admission that stands is the latest")

		types, data := b.events(t, o.Reference, 2)
		require.Equal(t, []string{"ticket.checked_in", "ticket.checked_in"}, types, "entries emit, exits and refusals do not")
		for i, v := range []*checkin.View{in, back} {
			require.Equal(t, o.Reference, data[i]["order_reference"])
			checkIn, err := json.Marshal(v)
			require.NoError(t, err)
			got, err := json.Marshal(data[i]["check_in"])
			require.NoError(t, err)
			require.JSONEq(t, string(checkIn), string(got))
			ticket, err := json.Marshal(v.Ticket)
			require.NoError(t, err)
			got, err = json.Marshal(data[i]["ticket"])
			require.NoError(t, err)
			require.JSONEq(t, string(ticket), string(got))
		}

		view, err := b.f.Service.OrderView(context.Background(), checkout.Caller{AppID: b.f.Demo.App.App.ID, Environment: store.EnvTest}, o.Reference)
		require.NoError(t, err)
		require.Equal(t, store.TicketCheckedIn, view.Tickets[0].Status)
		require.Equal(t, store.TicketValid, view.Tickets[1].Status)

		st, err := b.svc.Stats(context.Background(), door, int64(b.f.ID(t, date)))
		require.NoError(t, err)
		require.Equal(t, &checkin.Stats{EventdateID: int64(b.f.ID(t, date)), Issued: 2, CheckedIn: 1, Inside: 1, RejectedScans: 3}, st)
	})
}
