package tickets

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// MaxVoidReason bounds the reason given for a void, in characters.
const MaxVoidReason = 500

// VoidRequest names what to void: the ticket with Code, or every ticket of
// the order with OrderReference (exactly one of the two), and why.
type VoidRequest struct {
	Code           string
	OrderReference string
	Reason         string
}

// Voided is what a void did: the tickets it named, as they stand now, and
// how many of them it voided (the others were void already).
type Voided struct {
	OrderReference string
	Tickets        []*View
	Voided         int
}

// Void voids the tickets r names, in one transaction: each ticket that is
// not void yet becomes void, with the reason, and emits ticket.voided to
// the app that sold the order with the order's next sequence; the order
// is touched (updated_at) so its subscribers and changes feed see it. A
// ticket that was void already is left as it is, without an event. A
// ticket inside when voided stays recorded inside; the door refuses it
// from then on (void), in and out.
// Errors: validation_failed (neither or both of code and order, or a
// reason that is too long or not text), not_found (no ticket has the
// code; no order has the reference, or it has no tickets).
func (s *Service) Void(ctx context.Context, r VoidRequest) (*Voided, error) {
	code, ref, reason := strings.TrimSpace(r.Code), strings.TrimSpace(r.OrderReference), strings.TrimSpace(r.Reason)
	switch {
	case (code == "") == (ref == ""):
		return nil, apperr.Invalid("code", "or --order: give exactly one")
	case !utf8.ValidString(reason) || strings.ContainsFunc(reason, hidden):
		return nil, apperr.Invalid("reason", "must be text without control characters")
	case clientinput.Length(reason) > MaxVoidReason:
		return nil, apperr.Invalid("reason", "must be at most %d characters", MaxVoidReason)
	}
	var why *string
	if reason != "" {
		why = &reason
	}
	var out *Voided
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		o, ts, err := s.named(ctx, tx, code, ref)
		if err != nil {
			return err
		}
		ids := make([]int64, len(ts))
		for i, t := range ts {
			ids[i] = t.ID
		}
		now := s.Now().UTC()
		voided, err := store.VoidTickets(ctx, tx, ids, why, now)
		if err != nil {
			return err
		}
		byID := map[int64]store.IssuedTicket{}
		for _, t := range voided {
			byID[t.ID] = t
			_, seq, err := store.TouchOrder(ctx, tx, o.ID, now)
			if err != nil {
				return err
			}
			orderID := o.ID
			if _, err := s.Webhooks.Emit(ctx, tx, webhook.Event{
				AppID: t.AppID, Environment: t.Environment, Type: webhook.TicketVoided, OrderID: &orderID, Sequence: seq,
				Data: map[string]any{"ticket": NewView(&t, o.Reference), "order_reference": o.Reference},
			}); err != nil {
				return err
			}
		}
		out = &Voided{OrderReference: o.Reference, Voided: len(voided)}
		for _, t := range ts {
			if v, ok := byID[t.ID]; ok {
				t = v
			}
			out.Tickets = append(out.Tickets, NewView(&t, o.Reference))
		}
		return nil
	})
	return out, err
}

// named returns the order and the tickets a void names, in tx, the
// code read as the door reads it. Text that cannot be a code or a
// reference names nothing and never reaches the database.
// Errors: not_found.
func (s *Service) named(ctx context.Context, tx bun.Tx, code, ref string) (*store.Order, []store.IssuedTicket, error) {
	if code != "" {
		notFound := apperr.New(apperr.NotFound, "No ticket has this code.")
		if !utf8.ValidString(code) || strings.ContainsFunc(code, hidden) || clientinput.Length(code) > 128 {
			return nil, nil, notFound
		}
		t, err := store.IssuedTicketByCode(ctx, tx, store.TypedCode(code))
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, notFound
		}
		if err != nil {
			return nil, nil, err
		}
		o, err := store.OrderByID(ctx, tx, t.OrderID)
		return o, []store.IssuedTicket{*t}, err
	}
	notFound := apperr.New(apperr.NotFound, "No order has the reference %q.", ref)
	if !store.PlausibleReference(ref) {
		return nil, nil, notFound
	}
	o, err := store.OrderByReference(ctx, tx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, notFound
	}
	if err != nil {
		return nil, nil, err
	}
	ts, err := store.IssuedTicketsOfOrder(ctx, tx, o.ID)
	if err == nil && len(ts) == 0 {
		err = apperr.New(apperr.NotFound, "Order %s has no tickets (only paid and completed orders do).", o.Reference)
	}
	return o, ts, err
}

// hidden reports a character that is not shown as itself: a control
// character or a bidirectional text control.
func hidden(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }
