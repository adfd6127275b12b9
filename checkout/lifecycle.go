package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// eventTypes maps the status an order reaches to the webhook it emits.
var eventTypes = map[string]string{
	store.OrderPaid:      webhook.OrderPaid,
	store.OrderCompleted: webhook.OrderCompleted,
	store.OrderFailed:    webhook.OrderFailed,
	store.OrderExpired:   webhook.OrderExpired,
}

// emit records the webhook of an order's new status in tx, with the order's
// next sequence number.
func (s *Service) emit(ctx context.Context, tx bun.Tx, o *store.Order) error {
	seq, err := store.NextOrderSequence(ctx, tx, o.ID)
	if err != nil {
		return err
	}
	o.EventSequence = seq
	id := o.ID
	_, err = s.Webhooks.Emit(ctx, tx, webhook.Event{
		AppID: o.AppID, Environment: o.Environment, Type: eventTypes[o.Status],
		OrderID: &id, Sequence: seq, Data: map[string]any{"order": View(o)},
	})
	return err
}

// Settle moves a pending order to paid, failed or expired, exactly once:
// the change is a conditional update, so a second call, a concurrent one or
// one on another instance changes nothing and reports false. Holds of a live
// order become sold (paid) or are released (failed, expired), and the
// order's webhook is emitted, all in one transaction.
// Errors: order_not_found.
func (s *Service) Settle(ctx context.Context, ref, status string) (*store.Order, bool, error) {
	if eventTypes[status] == "" || status == store.OrderCompleted {
		return nil, false, fmt.Errorf("checkout: cannot settle an order as %q", status)
	}
	now := s.Now().UTC()
	o := new(store.Order)
	changed := false
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		changed, err = store.TransitionOrder(ctx, tx, ref, status, now, o)
		if err != nil || !changed {
			return err
		}
		if o.HoldsStock {
			items, err := store.OrderItems(ctx, tx, o.ID)
			if err != nil {
				return err
			}
			for _, it := range items {
				if err := store.SettleStock(ctx, tx, it.TicketID, it.Quantity, status == store.OrderPaid, now); err != nil {
					return err
				}
			}
		}
		return s.emit(ctx, tx, o)
	})
	if err != nil {
		return nil, false, err
	}
	if !changed {
		o, err = store.OrderByReference(ctx, s.DB, ref)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, apperr.New(apperr.OrderNotFound, "Order %s was not found.", ref)
		}
		if err != nil {
			return nil, false, err
		}
	}
	return o, changed, nil
}

// ExpireDue expires every pending order whose expires_at has passed and
// returns how many it expired. Each order is settled on its own, so a
// failure leaves the others done and the next sweep retries it.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	n := 0
	for {
		refs, err := store.DueOrders(ctx, s.DB, s.Now().UTC(), 200)
		if err != nil || len(refs) == 0 {
			return n, err
		}
		for _, ref := range refs {
			_, changed, err := s.Settle(ctx, ref, store.OrderExpired)
			if err != nil {
				return n, err
			}
			if changed {
				n++
			}
		}
		if len(refs) < 200 {
			return n, nil
		}
	}
}

// Line is one line of an order summary.
type Line struct {
	Name      string
	Quantity  int64
	UnitPrice string
	Subtotal  string
}

// Summary is what a checkout page shows of an order.
type Summary struct {
	Order     *store.Order
	Event     *store.Event
	Date      *store.EventDate
	Venue     *store.Venue
	Lines     []Line
	Total     string
	ExpiresAt time.Time
}

// Summarize loads an order with its event, date, venue and lines.
// Errors: order_not_found.
func (s *Service) Summarize(ctx context.Context, ref string) (*Summary, error) {
	o, err := store.OrderByReference(ctx, s.DB, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.OrderNotFound, "Order %s was not found.", ref)
	}
	if err != nil {
		return nil, err
	}
	sum := &Summary{Order: o, Total: catalog.FormatAmount(o.TotalAmount), ExpiresAt: o.ExpiresAt}
	if sum.Event, err = store.EventByID(ctx, s.DB, o.EventID); err != nil {
		return nil, err
	}
	if sum.Date, err = store.EventDateOfEvent(ctx, s.DB, o.EventDateID, o.EventID); err != nil {
		return nil, err
	}
	if sum.Date.VenueID != nil {
		vs, err := store.VenuesByIDs(ctx, s.DB, []int64{*sum.Date.VenueID})
		if err != nil {
			return nil, err
		}
		if len(vs) == 1 {
			sum.Venue = &vs[0]
		}
	}
	items, err := store.OrderItems(ctx, s.DB, o.ID)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.TicketID
	}
	ts, err := store.TicketsByIDs(ctx, s.DB, ids)
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, t := range ts {
		names[t.ID] = t.Name
	}
	for _, it := range items {
		sum.Lines = append(sum.Lines, Line{Name: names[it.TicketID], Quantity: it.Quantity,
			UnitPrice: catalog.FormatAmount(it.UnitPrice), Subtotal: catalog.FormatAmount(it.UnitPrice * it.Quantity)})
	}
	return sum, nil
}
