package checkout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/payments"
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
// next sequence number; d holds the order's items and tickets.
func (s *Service) emit(ctx context.Context, tx bun.Tx, o *store.Order, d *store.OrderDetail) error {
	seq, err := store.NextOrderSequence(ctx, tx, o.ID)
	if err != nil {
		return err
	}
	o.EventSequence = seq
	id := o.ID
	_, err = s.Webhooks.Emit(ctx, tx, webhook.Event{
		AppID: o.AppID, Environment: o.Environment, Type: eventTypes[o.Status],
		OrderID: &id, Sequence: seq, Data: map[string]any{"order": s.View(o, d)},
	})
	return err
}

// StatusAt returns the status order o has at now: its stored status, except
// that a pending order whose expires_at has passed is expired, since it can
// only expire, whether or not the sweep has recorded that yet.
func StatusAt(o *store.Order, now time.Time) string {
	if o.Status == store.OrderPending && !o.ExpiresAt.IsZero() && !now.Before(o.ExpiresAt) {
		return store.OrderExpired
	}
	return o.Status
}

// settlement is an outcome asked of an order: paid, failed or expired, with
// the provider's confirmation when a real payment is behind it.
type settlement struct {
	status string
	// payment is nil for a simulated (sandbox) outcome and for the sweep.
	payment *payments.Status
}

// change is what a settlement does to an order.
type change struct {
	to     string // the status the order moves to; "" leaves it as it is
	review string // when set, the payment is flagged for refund review with this note
	// paid is the payment under review: what a refund of the review returns.
	paid     int64
	currency string
}

// decide is the rule of an order's lifecycle, and the only place it is
// written. Only a pending order moves, and one past its expires_at can only
// expire, whatever outcome is asked. Money is never dropped: a payment
// confirmed for an order it cannot make paid (expired, failed, completed,
// past expiry) or for the wrong amount is flagged for refund review; a
// payment of the wrong amount leaves a pending order waiting. A repeated
// confirmation of a paid order changes nothing.
func decide(o *store.Order, s settlement, now time.Time) change {
	var c change
	if o.Status == store.OrderPending {
		c.to = s.status
		if StatusAt(o, now) == store.OrderExpired {
			c.to = store.OrderExpired
		}
	}
	p := s.payment
	if p == nil || p.State != payments.Paid || o.Status == store.OrderPaid {
		return c
	}
	c.paid, c.currency = p.Amount, strings.ToUpper(p.Currency)
	if p.Amount != o.TotalAmount || !strings.EqualFold(p.Currency, o.Currency) {
		if c.to == store.OrderPaid {
			c.to = ""
		}
		c.review = fmt.Sprintf("payment %s confirmed for %s %s, the order is %s %s", p.Reference,
			strings.ToUpper(p.Currency), catalog.FormatAmount(p.Amount), o.Currency, catalog.FormatAmount(o.TotalAmount))
		return c
	}
	if c.to != store.OrderPaid {
		status := cmp.Or(c.to, o.Status)
		c.review = fmt.Sprintf("payment %s confirmed while the order was %s", p.Reference, status)
	}
	return c
}

// Settle asks a pending order to become paid, failed or expired: the
// sandbox page's outcomes and the expiry sweep. It reports whether the
// order's status changed; see settle for the rule and its guarantees.
// Errors: order_not_found.
func (s *Service) Settle(ctx context.Context, ref, status string) (*store.Order, bool, error) {
	return s.settle(ctx, ref, settlement{status: status})
}

// Expire ends a pending checkout of the calling app now (a buyer abandoned
// the cart), through the lifecycle's one rule: the order becomes expired,
// its held stock is released and order.expired is emitted, once, whatever
// races it (a payment confirmation, the sweep, another Expire). An order
// already expired is answered as it is, with no new event. A payment
// confirmed for an order this expired is flagged for refund review, as for
// any order that expired under a payment (decide).
// Errors: environment_mismatch and order_not_found (as Order);
// order_not_pending when the order is paid, completed or failed, also
// when a payment settled it just before.
func (s *Service) Expire(ctx context.Context, c Caller, ref string) (*OrderView, error) {
	if _, err := s.Order(ctx, c, ref); err != nil {
		return nil, err
	}
	o, _, err := s.settle(ctx, ref, settlement{status: store.OrderExpired})
	if err != nil {
		return nil, err
	}
	if o.Status != store.OrderExpired {
		return nil, apperr.New(apperr.OrderNotPending,
			"Order %s is %s; only a pending order can be expired.", ref, o.Status)
	}
	vs, err := s.Views(ctx, s.DB, []*store.Order{o})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// settle applies decide's answer for an order, exactly once: the move out
// of pending is a conditional update, so a second call, a concurrent one or
// one on another instance changes nothing. Holds of a live order become
// sold (paid) or are released (failed, expired), the order's webhook is
// emitted and any refund review flagged, all in one transaction. When the
// order left pending between the read it decided on and the update (the
// sweep expired it, say), it decides again on what the order became; an
// order leaves pending only once, so that happens at most once.
// Errors: order_not_found.
func (s *Service) settle(ctx context.Context, ref string, st settlement) (*store.Order, bool, error) {
	if eventTypes[st.status] == "" || st.status == store.OrderCompleted {
		return nil, false, fmt.Errorf("checkout: cannot settle an order as %q", st.status)
	}
	for {
		o, err := s.byReference(ctx, ref)
		if err != nil {
			return nil, false, err
		}
		now := s.Now().UTC()
		c := decide(o, st, now)
		if c.to == "" && c.review == "" {
			return o, false, nil
		}
		lost := false
		err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if c.to != "" {
				moved, err := s.move(ctx, tx, o, c.to, now)
				if err != nil || !moved {
					lost = !moved
					return err
				}
			}
			if c.review != "" {
				_, err := store.FlagRefundReview(ctx, tx, ref, c.review, c.paid, c.currency, now)
				return err
			}
			return nil
		})
		switch {
		case err != nil:
			return nil, false, err
		case lost:
			continue
		case c.review != "":
			o, err = s.byReference(ctx, ref)
			if err != nil {
				return nil, false, err
			}
		}
		return o, c.to != "", nil
	}
}

// move changes a pending order's status to to in tx and reports whether it
// did: false, changing nothing, when the order is no longer pending. o
// receives the updated row.
func (s *Service) move(ctx context.Context, tx bun.Tx, o *store.Order, to string, now time.Time) (bool, error) {
	moved, err := store.TransitionOrder(ctx, tx, o.Reference, to, now, o)
	if err != nil || !moved {
		return false, err
	}
	items, err := store.OrderItems(ctx, tx, o.ID)
	if err != nil {
		return false, err
	}
	if o.HoldsStock {
		for _, it := range items {
			if err := store.SettleStock(ctx, tx, it.TicketID, it.Quantity, to == store.OrderPaid, now); err != nil {
				return false, err
			}
		}
	}
	d := &store.OrderDetail{Items: items}
	if to == store.OrderPaid {
		// Issued here, once: only the move out of pending above gets here.
		if d.Tickets, err = s.Tickets.Issue(ctx, tx, o, items); err != nil {
			return false, err
		}
	}
	return true, s.emit(ctx, tx, o, d)
}

// byReference returns an order by its reference. Text that cannot be a
// reference (a NUL byte, a path of pages) names no order and never reaches
// the database.
// Errors: order_not_found.
func (s *Service) byReference(ctx context.Context, ref string) (*store.Order, error) {
	if ReferenceEnvironment(ref) == "" {
		return nil, apperr.New(apperr.OrderNotFound, "Order %q was not found.", ref)
	}
	o, err := store.OrderByReference(ctx, s.DB, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.OrderNotFound, "Order %s was not found.", ref)
	}
	return o, err
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
	Order *store.Order
	// Seller is the name of the partner app that sells the tickets; Shop
	// is where the buyer goes back to it without an outcome (the order's
	// cancel_url, the reference added), while the order waits.
	Seller    string
	Shop      string
	Event     *store.Event
	Date      *store.EventDate
	Venue     *store.Venue
	Lines     []Line
	Total     string
	ExpiresAt time.Time
}

// Summarize loads an order with its seller, event, date, venue and lines.
// Errors: order_not_found.
func (s *Service) Summarize(ctx context.Context, ref string) (*Summary, error) {
	o, err := s.byReference(ctx, ref)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Order: o, Total: catalog.FormatAmount(o.TotalAmount), ExpiresAt: o.ExpiresAt,
		Shop: withOrderParam(o.CancelURL, o.Reference)}
	app, err := store.AppByID(ctx, s.DB, o.AppID)
	if err != nil {
		return nil, err
	}
	sum.Seller = app.Name
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
