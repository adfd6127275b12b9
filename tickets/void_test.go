package tickets_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/stretchr/testify/require"
)

// voidEvent is a ticket.voided webhook event as stored.
type voidEvent struct {
	Sequence int64
	Ticket   tickets.View
	Ref      string
}

// voidEvents returns the ticket.voided events of an order, by sequence.
func (b *bundle) voidEvents(t *testing.T, orderID int64) []voidEvent {
	t.Helper()
	var rows []store.WebhookEvent
	require.NoError(t, b.DB.NewSelect().Model(&rows).Where("order_id = ?", orderID).Where("type = ?", webhook.TicketVoided).
		Order("sequence").Scan(context.Background()))
	out := []voidEvent{}
	for _, r := range rows {
		var body struct {
			Data struct {
				Ticket         tickets.View `json:"ticket"`
				OrderReference string       `json:"order_reference"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.Payload), &body))
		out = append(out, voidEvent{Sequence: r.Sequence, Ticket: body.Data.Ticket, Ref: body.Data.OrderReference})
	}
	return out
}

// TestVoid_Refused: each request the rule refuses, with its code and
// message, changing nothing.
func TestVoid_Refused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		paid := b.highlife(t, store.EnvLive, 1)
		code := paid.Tickets[0].Code
		pending, _ := b.insertOrder(t, b.Demo.App.App.ID, store.EnvLive, store.OrderPending, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1",
			line{"DEMO-HIGHLIFE-REG", 1})

		exactlyOne := &apperr.Error{Code: apperr.ValidationFailed, Message: "--code or --order: give exactly one",
			Details: apperr.Details{"code": {"or --order: give exactly one"}}}
		notText := &apperr.Error{Code: apperr.ValidationFailed, Message: "--reason must be text without control characters",
			Details: apperr.Details{"reason": {"must be text without control characters"}}}
		noCode := &apperr.Error{Code: apperr.NotFound, Message: "No ticket has this code."}
		noOrder := func(ref string) *apperr.Error {
			return &apperr.Error{Code: apperr.NotFound, Message: "No order has the reference \"" + ref + "\"."}
		}
		tests := []struct {
			name string
			req  tickets.VoidRequest
			want *apperr.Error
		}{
			{"ErrNeitherCodeNorOrder", tickets.VoidRequest{Reason: "lost"}, exactlyOne},
			{"ErrBlankCodeAndOrder", tickets.VoidRequest{Code: " \t", OrderReference: "  "}, exactlyOne},
			{"ErrBothCodeAndOrder", tickets.VoidRequest{Code: code, OrderReference: paid.Reference}, exactlyOne},
			{"ErrReasonControlCharacter", tickets.VoidRequest{Code: code, Reason: "lost\x00 at the gate"}, notText},
			{"ErrReasonNewline", tickets.VoidRequest{Code: code, Reason: "lost\nat the gate"}, notText},
			{"ErrReasonBidiControl", tickets.VoidRequest{Code: code, Reason: "refund \u202egnissim"}, notText},
			{"ErrReasonNotUTF8", tickets.VoidRequest{Code: code, Reason: "lost \xff"}, notText},
			{"ErrReasonTooLong", tickets.VoidRequest{Code: code, Reason: strings.Repeat("é", tickets.MaxVoidReason+1)},
				&apperr.Error{Code: apperr.ValidationFailed, Message: "--reason must be at most 500 characters",
					Details: apperr.Details{"reason": {"must be at most 500 characters"}}}},
			{"ErrCodeUnknown", tickets.VoidRequest{Code: "TEST" + strings.Repeat("A", 32)}, noCode},
			// Text that cannot be a code never reaches the database (where
			// PostgreSQL would refuse a NUL byte or invalid UTF-8 outright).
			{"ErrCodeControlCharacter", tickets.VoidRequest{Code: code[:10] + "\x00" + code[10:]}, noCode},
			{"ErrCodeNotUTF8", tickets.VoidRequest{Code: code + "\xff"}, noCode},
			{"ErrCodeBidiControl", tickets.VoidRequest{Code: "\u202e" + code}, noCode},
			{"ErrCodeTooLong", tickets.VoidRequest{Code: strings.Repeat("A", 129)}, noCode},
			{"ErrOrderUnknown", tickets.VoidRequest{OrderReference: "ord_nope"}, noOrder("ord_nope")},
			{"ErrOrderNotAReference", tickets.VoidRequest{OrderReference: "ord_\x00; DROP"}, noOrder(`ord_\x00; DROP`)},
			{"ErrOrderTooLong", tickets.VoidRequest{OrderReference: "ord_" + strings.Repeat("a", 61)}, noOrder("ord_" + strings.Repeat("a", 61))},
			{"ErrOrderWithoutTickets", tickets.VoidRequest{OrderReference: pending.Reference},
				&apperr.Error{Code: apperr.NotFound, Message: "Order " + pending.Reference + " has no tickets (only paid and completed orders do)."}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				out, err := b.svc.Void(context.Background(), tt.req)
				require.Nil(t, out)
				got := apperr.From(err)
				require.Equal(t, tt.want.Code, got.Code, "%v", err)
				require.Equal(t, tt.want.Message, got.Message)
				require.Equal(t, tt.want.Details, got.Details)
			})
		}
		for _, tk := range b.issued(t, b.order(t, paid.Reference).ID) {
			require.Equal(t, store.TicketValid, tk.Status, "a refused void changes nothing")
		}
		require.Empty(t, b.voidEvents(t, b.order(t, paid.Reference).ID))
	})
}

// TestVoid: a ticket named by its code, or every ticket of an order named
// by its reference, becomes void once, each with its ticket.voided event
// in the order's sequence.
func TestVoid(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		// The operator voids an hour after the sale, so what the void
		// writes is told apart from what the checkout wrote.
		later := b.Now.Add(time.Hour)
		svc := *b.svc
		svc.Now = func() time.Time { return later }

		// requireVoid checks a void's outcome against the database: the
		// named tickets (by position) are void with why, the others
		// valid, and one event each for the tickets voided now.
		type check struct {
			ref       string
			void      []int64 // positions void after the call
			why       *string
			newEvents []int64 // positions of the events this call emitted
		}
		requireVoid := func(t *testing.T, out *tickets.Voided, before []voidEvent, c check) {
			t.Helper()
			o := b.order(t, c.ref)
			require.Equal(t, c.ref, out.OrderReference)
			isVoid := map[int64]bool{}
			for _, p := range c.void {
				isVoid[p] = true
			}
			for _, tk := range b.issued(t, o.ID) {
				if !isVoid[tk.Position] {
					require.Equal(t, store.TicketValid, tk.Status, "ticket %d", tk.Position)
					require.Nil(t, tk.VoidReason)
					continue
				}
				require.Equal(t, store.TicketVoid, tk.Status, "ticket %d", tk.Position)
				require.Equal(t, c.why, tk.VoidReason)
				require.True(t, later.Equal(tk.VoidedAt), "voided_at %s", tk.VoidedAt)
			}
			events := b.voidEvents(t, o.ID)
			require.Len(t, events, len(before)+len(c.newEvents), "one ticket.voided per ticket voided now")
			require.Equal(t, before, events[:len(before)])
			for i, p := range c.newEvents {
				e := events[len(before)+i]
				require.Equal(t, p, e.Ticket.Position)
				require.Equal(t, store.TicketVoid, e.Ticket.Status)
				require.Equal(t, c.ref, e.Ref)
				require.Equal(t, c.ref, e.Ticket.OrderReference)
			}
			if len(c.newEvents) > 0 {
				require.Equal(t, o.EventSequence, events[len(events)-1].Sequence, "each event takes the order's next sequence")
				for i := 1; i < len(events); i++ {
					require.Equal(t, events[i-1].Sequence+1, events[i].Sequence)
				}
				require.True(t, later.Equal(o.UpdatedAt), "the order is touched, so its subscribers see it")
			}
		}

		t.Run("OKByCode", func(t *testing.T) {
			v := b.highlife(t, store.EnvLive, 2)
			before := b.voidEvents(t, b.order(t, v.Reference).ID)
			// Read as the door reads it: as printed (groups of four), with
			// surrounding space and in lower case, it names the same ticket.
			printed := strings.Join(ticketdoc.Groups(v.Tickets[1].Code), " ")
			out, err := svc.Void(ctx, tickets.VoidRequest{Code: "  " + strings.ToLower(printed) + " ", Reason: "  duplicate booking "})
			require.NoError(t, err)
			require.Equal(t, 1, out.Voided)
			require.Len(t, out.Tickets, 1)
			require.Equal(t, v.Tickets[1].Code, out.Tickets[0].Code)
			require.Equal(t, store.TicketVoid, out.Tickets[0].Status)
			requireVoid(t, out, before, check{ref: v.Reference, void: []int64{2}, why: ptr("duplicate booking"), newEvents: []int64{2}})
		})

		t.Run("OKByOrder", func(t *testing.T) {
			v := b.highlife(t, store.EnvLive, 3)
			before := b.voidEvents(t, b.order(t, v.Reference).ID)
			out, err := svc.Void(ctx, tickets.VoidRequest{OrderReference: " " + v.Reference + " "})
			require.NoError(t, err)
			require.Equal(t, 3, out.Voided)
			require.Len(t, out.Tickets, 3)
			for i, tk := range out.Tickets {
				require.Equal(t, int64(i+1), tk.Position)
				require.Equal(t, store.TicketVoid, tk.Status)
			}
			requireVoid(t, out, before, check{ref: v.Reference, void: []int64{1, 2, 3}, newEvents: []int64{1, 2, 3}})
		})

		t.Run("OKTestTicket", func(t *testing.T) {
			v := b.highlife(t, store.EnvTest, 1)
			o := b.order(t, v.Reference)
			out, err := svc.Void(ctx, tickets.VoidRequest{Code: v.Tickets[0].Code, Reason: strings.Repeat("é", tickets.MaxVoidReason)})
			require.NoError(t, err)
			require.Equal(t, 1, out.Voided)
			requireVoid(t, out, []voidEvent{}, check{ref: v.Reference, void: []int64{1}, why: ptr(strings.Repeat("é", tickets.MaxVoidReason)), newEvents: []int64{1}})
			var env string
			require.NoError(t, db.NewSelect().Model((*store.WebhookEvent)(nil)).Column("environment").
				Where("order_id = ?", o.ID).Where("type = ?", webhook.TicketVoided).Scan(ctx, &env))
			require.Equal(t, store.EnvTest, env, "to the app's test endpoint")
		})

		// Voiding again changes nothing: the first reason stands and no
		// event is sent twice.
		t.Run("OKAlreadyVoid", func(t *testing.T) {
			v := b.highlife(t, store.EnvLive, 2)
			_, err := svc.Void(ctx, tickets.VoidRequest{Code: v.Tickets[0].Code, Reason: "chargeback"})
			require.NoError(t, err)
			before := b.voidEvents(t, b.order(t, v.Reference).ID)
			require.Len(t, before, 1)
			out, err := svc.Void(ctx, tickets.VoidRequest{Code: v.Tickets[0].Code, Reason: "again"})
			require.NoError(t, err)
			require.Equal(t, 0, out.Voided)
			require.Len(t, out.Tickets, 1)
			require.Equal(t, store.TicketVoid, out.Tickets[0].Status)
			requireVoid(t, out, before, check{ref: v.Reference, void: []int64{1}, why: ptr("chargeback")})
		})

		// An order whose tickets are partly void: the others are voided,
		// and every ticket is answered as it stands now.
		t.Run("OKOrderPartlyVoid", func(t *testing.T) {
			v := b.highlife(t, store.EnvLive, 3)
			_, err := svc.Void(ctx, tickets.VoidRequest{Code: v.Tickets[1].Code, Reason: "resold"})
			require.NoError(t, err)
			before := b.voidEvents(t, b.order(t, v.Reference).ID)
			out, err := svc.Void(ctx, tickets.VoidRequest{OrderReference: v.Reference, Reason: "event cancelled"})
			require.NoError(t, err)
			require.Equal(t, 2, out.Voided)
			require.Len(t, out.Tickets, 3)
			for _, tk := range out.Tickets {
				require.Equal(t, store.TicketVoid, tk.Status)
			}
			o := b.order(t, v.Reference)
			ts := b.issued(t, o.ID)
			require.Equal(t, ptr("resold"), ts[1].VoidReason, "the first void's reason stands")
			require.Equal(t, ptr("event cancelled"), ts[0].VoidReason)
			require.Equal(t, ptr("event cancelled"), ts[2].VoidReason)
			events := b.voidEvents(t, o.ID)
			require.Len(t, events, len(before)+2)
			require.Equal(t, []int64{1, 3}, []int64{events[len(before)].Ticket.Position, events[len(before)+1].Ticket.Position})
		})
	})
}
