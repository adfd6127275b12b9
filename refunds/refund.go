// Package refunds undoes sales: a refund cancels tickets of a paid order,
// puts their stock back on sale and returns money, in one transaction
// with the order's change and its webhooks, under the balance rule that
// pending and succeeded refunds never take more than the order's total.
// The database decides every race (a row lock on the order, conditional
// writes on its tickets), so a ticket is cancelled once and never both
// admitted at the door and cancelled, on any number of instances. Money
// at a payment provider moves through a job written in the refund's
// transaction (send.go), which asks the provider once per refund.
package refunds

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// Service makes, reads and settles refunds.
type Service struct {
	DB *store.DB
	// Orders finds the caller's orders and shows them as the API does.
	Orders      *checkout.Service
	Idempotency *idempotency.Service
	Webhooks    *webhook.Service
	Now         func() time.Time
	// Payments is the payment provider of live payments; a refund whose
	// payment another provider took, or none, fails with a reason that
	// says so.
	Payments payments.Provider
	// EnqueueSend inserts, in the refund's transaction, the job that asks
	// the payment provider to return a pending refund's money (the
	// outbox); nil leaves pending refunds for a job runner started later.
	EnqueueSend func(ctx context.Context, tx bun.Tx, refundID int64) error
	// EnqueueEmail inserts, in the refund's transaction, the refund email
	// of a live buyer whose app sends ticket emails; nil sends none.
	EnqueueEmail func(ctx context.Context, tx bun.Tx, refundID int64) error
	// Observe, when set, is told of each refund made (its status then:
	// pending or succeeded) and each settled, after the commit.
	Observe func(status string)
}

// observe tells Observe of a refund's status.
func (s *Service) observe(status string) {
	if s.Observe != nil {
		s.Observe(status)
	}
}

// Request is one refund request: the order's reference, the idempotency
// key, the body (nil when REST could not read it as a JSON object), and
// what REST's decoding found wrong in it.
type Request struct {
	Reference string
	Key       string
	Input     *Input
	Problems  apperr.Details
}

// Create refunds an order of the calling app under its idempotency key:
// the refund's row, its tickets voided, their stock back on sale, the
// order's change and the events refund.created, ticket.voided (one per
// ticket) and, when no money has to move at a provider, refund.succeeded,
// in one transaction. replayed reports the answer saved for the key.
// Errors, earliest first: environment_mismatch, missing_idempotency_key,
// invalid_idempotency_key, validation_failed (the body), the key's saved
// refusal, idempotency_conflict, idempotency_in_progress, order_not_found,
// metadata_too_large, order_not_refundable, ticket_not_found,
// ticket_already_void, ticket_checked_in, refund_exceeds_balance,
// validation_failed (nothing to refund).
func (s *Service) Create(ctx context.Context, c checkout.Caller, r Request) (*checkout.Refund, bool, error) {
	v, replayed, err := s.create(ctx, c, r)
	return v, replayed, asRefundError(err)
}

func (s *Service) create(ctx context.Context, c checkout.Caller, r Request) (*checkout.Refund, bool, error) {
	if env := checkout.ReferenceEnvironment(r.Reference); env != "" && env != c.Environment {
		_, err := s.Orders.Order(ctx, c, r.Reference)
		return nil, false, err
	}
	if err := idempotency.CheckKey(r.Key); err != nil {
		return nil, false, err
	}
	req, err := validate(r.Input, r.Problems)
	if err != nil {
		return nil, false, err
	}
	a := attempt{scope: idempotency.Scope{AppID: c.AppID, Environment: c.Environment}, key: r.Key,
		fingerprint: idempotency.Fingerprint(canonical(r.Reference, r.Input))}
	for try := 0; ; try++ {
		v, err := s.run(ctx, c, r.Reference, req, a)
		if !errors.Is(err, idempotency.ErrTaken) {
			if err == nil {
				s.observe(string(v.Status))
			}
			return v, false, err
		}
		body, err := s.Idempotency.Taken(ctx, a.scope, a.key, a.fingerprint)
		if errors.Is(err, idempotency.ErrGone) && try < 2 {
			continue
		}
		if errors.Is(err, idempotency.ErrGone) {
			err = apperr.New(apperr.IdempotencyInProgress, "A request with this Idempotency-Key is still being processed; retry shortly.")
		}
		if err != nil {
			return nil, false, err
		}
		v, err = replay(body)
		return v, err == nil || apperr.CodeOf(err) != apperr.Internal, err
	}
}

// attempt is one run of a request under its Idempotency-Key.
type attempt struct {
	scope            idempotency.Scope
	key, fingerprint string
}

// outcome is the answer saved under a key: the refund, or the refusal.
type outcome struct {
	Refund  *checkout.Refund `json:"refund,omitempty"`
	Code    apperr.Code      `json:"code,omitempty"`
	Message string           `json:"message,omitempty"`
	Details apperr.Details   `json:"details,omitempty"`
}

// replay returns the answer saved under a key.
func replay(body []byte) (*checkout.Refund, error) {
	var o outcome
	if err := json.Unmarshal(body, &o); err != nil || (o.Refund == nil && o.Code == "") {
		return nil, fmt.Errorf("refunds: unreadable saved answer: %v", err)
	}
	if o.Refund != nil {
		return o.Refund, nil
	}
	return nil, &apperr.Error{Code: o.Code, Message: o.Message, Details: o.Details}
}

// run makes the refund and saves its answer with it, or saves the refusal
// that stopped it. Errors: those of make, and idempotency.ErrTaken when
// the key already has a record (nothing was written then).
func (s *Service) run(ctx context.Context, c checkout.Caller, ref string, req *request, a attempt) (*checkout.Refund, error) {
	var v *checkout.Refund
	o, err := s.order(ctx, c, ref, req)
	if err == nil {
		err = s.DB.RunInTxNotifyAfter(ctx, func(ctx context.Context, tx bun.Tx) error {
			var err error
			if v, err = s.make(ctx, tx, o.ID, req); err != nil {
				return err
			}
			body, err := json.Marshal(outcome{Refund: v})
			if err != nil {
				return err
			}
			return s.Idempotency.Save(ctx, tx, a.scope, a.key, a.fingerprint, body)
		})
	}
	var ae *apperr.Error
	if err == nil || !errors.As(err, &ae) || !saveable(ae) {
		return v, err
	}
	body, _ := json.Marshal(outcome{Code: ae.Code, Message: ae.Message, Details: ae.Details})
	if serr := s.Idempotency.Save(ctx, s.DB, a.scope, a.key, a.fingerprint, body); serr != nil {
		return nil, serr
	}
	return nil, err
}

// saveable reports whether a refusal is kept under the key: every answer
// of the rules, none of those that say "not now" (the key stays usable).
func saveable(e *apperr.Error) bool {
	return !e.Code.Transient() && e.Code != apperr.IdempotencyConflict && e.Code != apperr.IdempotencyInProgress
}

// order returns the caller's order that a refund names, and checks the
// refund's metadata against its buyer; read before the refund's
// transaction, since who owns an order never changes.
// Errors: order_not_found, metadata_too_large, validation_failed.
func (s *Service) order(ctx context.Context, c checkout.Caller, ref string, req *request) (*store.Order, error) {
	o, err := s.Orders.Order(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	return o, checkout.CheckMetadata(req.metadata, o.CustomerName, o.CustomerPhone)
}

// make is the refund rule, in tx: the order and its tickets locked, each
// refusal of the spec in its order, then the writes.
func (s *Service) make(ctx context.Context, tx bun.Tx, orderID int64, req *request) (*checkout.Refund, error) {
	// Tickets before the order, as a door scan takes them.
	if err := store.LockTicketsOfOrder(ctx, tx, orderID); err != nil {
		return nil, err
	}
	o, err := store.LockOrder(ctx, tx, orderID)
	if err != nil {
		return nil, err
	}
	p, err := s.plan(ctx, tx, o, req)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, tx, o, p)
}

// plan is what a refund will do, decided under the order's lock.
type plan struct {
	tickets  []store.IssuedTicket
	amount   int64
	reason   string
	metadata map[string]any
	// review marks the return of a payment under refund review (operator.go),
	// in currency: the balance it is checked against is that payment's.
	review   bool
	currency string
}

// plan decides a refund's tickets and amount, refusing in the spec's
// order. Errors: order_not_refundable, ticket_not_found,
// ticket_already_void, ticket_checked_in, refund_exceeds_balance,
// validation_failed (nothing to refund).
func (s *Service) plan(ctx context.Context, tx bun.Tx, o *store.Order, req *request) (*plan, error) {
	if o.Status != store.OrderPaid && o.Status != store.OrderCompleted {
		return nil, apperr.New(apperr.OrderNotRefundable,
			"Order %s is %s; only paid and completed orders can be refunded.", o.Reference, o.Status)
	}
	all, err := store.IssuedTicketsOfOrder(ctx, tx, o.ID)
	if err != nil {
		return nil, err
	}
	p := &plan{reason: req.reason, metadata: req.metadata}
	if req.tickets == nil {
		for _, t := range all {
			if t.Status != store.TicketVoid {
				p.tickets = append(p.tickets, t)
			}
		}
	} else {
		byID := make(map[string]store.IssuedTicket, len(all))
		for _, t := range all {
			byID[t.PublicID] = t
		}
		for _, id := range req.tickets {
			t, ok := byID[id]
			if !ok {
				return nil, apperr.New(apperr.TicketNotFound, "Ticket %s is not a ticket of order %s.", id, o.Reference)
			}
			p.tickets = append(p.tickets, t)
		}
		for _, t := range p.tickets {
			if t.Status == store.TicketVoid {
				return nil, apperr.New(apperr.TicketAlreadyVoid, "Ticket %s is void already.", t.PublicID)
			}
		}
	}
	for _, t := range p.tickets {
		if t.Inside {
			return nil, apperr.New(apperr.TicketCheckedIn,
				"Ticket %s is inside the venue (checked in and not scanned out); it cannot be cancelled.", t.PublicID)
		}
	}
	if req.hasAmount {
		p.amount = req.amount
	} else {
		items, err := store.OrderItems(ctx, tx, o.ID)
		if err != nil {
			return nil, err
		}
		p.amount = priceOf(p.tickets, items)
	}
	if balance := o.TotalAmount - o.RefundCommitted; p.amount > balance {
		return nil, apperr.New(apperr.RefundExceedsBalance,
			"The refund of %s is more than order %s's refundable balance of %s.",
			formatMoney(p.amount, o.Currency), o.Reference, formatMoney(balance, o.Currency))
	}
	if len(p.tickets) == 0 && p.amount == 0 {
		return nil, errNothing()
	}
	return p, nil
}

// priceOf is what the tickets cost: the unit price of each one's line.
func priceOf(ts []store.IssuedTicket, items []store.OrderItem) int64 {
	price := make(map[int64]int64, len(items))
	for _, it := range items {
		price[it.TicketID] = it.UnitPrice
	}
	var sum int64
	for _, t := range ts {
		sum += price[t.TicketID]
	}
	return sum
}

// write records a planned refund in tx and returns it as the API shows it.
func (s *Service) write(ctx context.Context, tx bun.Tx, o *store.Order, p *plan) (*checkout.Refund, error) {
	now := s.Now().UTC()
	r := &store.Refund{
		PublicID: newID(), OrderID: o.ID, AppID: o.AppID, Environment: o.Environment, Amount: p.amount,
		Currency: cmp.Or(p.currency, o.Currency), Reason: p.reason, Status: store.RefundPending, Metadata: p.metadata,
		CreatedAt: now, UpdatedAt: now,
	}
	// Money moves at a provider only for a live payment; a test order's
	// refund, and one of nothing, succeed at once.
	atProvider := o.Environment == store.EnvLive && p.amount > 0
	if atProvider {
		r.Provider = o.PaymentProvider
	}
	// A live buyer who was emailed their tickets is emailed their refund.
	email := o.Environment == store.EnvLive && o.TicketsToken != nil &&
		o.TicketsEmailStatus != store.TicketsEmailNotSent && s.EnqueueEmail != nil
	if email {
		queued := store.TicketsEmailQueued
		r.EmailStatus = &queued
	}
	if err := store.InsertRefund(ctx, tx, r); err != nil {
		return nil, err
	}
	commit := store.CommitRefundAmount
	if p.review {
		commit = store.CommitReviewRefund
	}
	if ok, err := commit(ctx, tx, o.ID, p.amount); err != nil || !ok {
		if err == nil {
			err = apperr.New(apperr.RefundExceedsBalance, "The refund is more than order %s's refundable balance.", o.Reference)
		}
		return nil, err
	}
	voided, err := s.cancel(ctx, tx, o, r, p, now)
	if err != nil {
		return nil, err
	}
	if !atProvider {
		if _, err := store.SettleRefund(ctx, tx, r, store.RefundSucceeded, nil, nil, now); err != nil {
			return nil, err
		}
		r.Status = store.RefundSucceeded
	}
	view, order, err := s.views(ctx, tx, o.ID, r)
	if err != nil {
		return nil, err
	}
	if err := s.emit(ctx, tx, o, webhook.RefundCreated, refundData(view, order)); err != nil {
		return nil, err
	}
	for i := range voided {
		data := map[string]any{"ticket": tickets.NewView(&voided[i], o.Reference), "order_reference": o.Reference}
		if err := s.emit(ctx, tx, o, webhook.TicketVoided, data); err != nil {
			return nil, err
		}
	}
	if r.Status == store.RefundSucceeded {
		if err := s.emit(ctx, tx, o, webhook.RefundSucceeded, refundData(view, order)); err != nil {
			return nil, err
		}
	}
	if atProvider && s.EnqueueSend != nil {
		if err := s.EnqueueSend(ctx, tx, r.ID); err != nil {
			return nil, err
		}
	}
	if email {
		if err := s.EnqueueEmail(ctx, tx, r.ID); err != nil {
			return nil, err
		}
	}
	return view, nil
}

// cancel voids the planned tickets for refund r and puts a live order's
// stock back on sale while its date has not ended. A ticket that a door
// admitted, or another refund cancelled, since the plan read it refuses
// the whole refund (the transaction rolls back).
// Errors: ticket_already_void, ticket_checked_in.
func (s *Service) cancel(ctx context.Context, tx bun.Tx, o *store.Order, r *store.Refund, p *plan, now time.Time) ([]store.IssuedTicket, error) {
	ids := make([]int64, len(p.tickets))
	for i, t := range p.tickets {
		ids[i] = t.ID
	}
	voided, err := store.CancelTickets(ctx, tx, r.ID, ids, r.Reason, now)
	if err != nil || len(voided) == len(ids) {
		if err == nil {
			err = s.release(ctx, tx, o, voided, now)
		}
		return voided, err
	}
	// Another transaction changed a ticket after the plan read it: read
	// them again to say which and how.
	again, err := store.IssuedTicketsOfOrder(ctx, tx, o.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range again {
		if !slices.Contains(ids, t.ID) {
			continue
		}
		switch {
		case t.Status == store.TicketVoid && (t.RefundID == nil || *t.RefundID != r.ID):
			return nil, apperr.New(apperr.TicketAlreadyVoid, "Ticket %s is void already.", t.PublicID)
		case t.Inside:
			return nil, apperr.New(apperr.TicketCheckedIn,
				"Ticket %s is inside the venue (checked in and not scanned out); it cannot be cancelled.", t.PublicID)
		}
	}
	return nil, fmt.Errorf("refunds: %d of %d tickets of order %s could not be cancelled", len(ids)-len(voided), len(ids), o.Reference)
}

// release puts the cancelled tickets of a live order back on sale, unless
// their date has ended or was cancelled (a seat of a show that will not
// happen is not for sale). Sandbox
// orders never took stock.
func (s *Service) release(ctx context.Context, tx bun.Tx, o *store.Order, voided []store.IssuedTicket, now time.Time) error {
	if o.Environment != store.EnvLive || len(voided) == 0 {
		return nil
	}
	date, err := store.EventDateOfEvent(ctx, tx, o.EventDateID, o.EventID)
	if err != nil {
		return err
	}
	if (!date.EndAt.IsZero() && !now.Before(date.EndAt)) || !date.CancelledAt.IsZero() {
		return nil
	}
	counts := map[int64]int64{}
	var order []int64
	for _, t := range voided {
		if counts[t.TicketID] == 0 {
			order = append(order, t.TicketID)
		}
		counts[t.TicketID]++
	}
	slices.Sort(order) // rows in id order, as checkout takes them: no deadlock
	for _, id := range order {
		if err := store.ReleaseSold(ctx, tx, id, counts[id], now); err != nil {
			return err
		}
	}
	return nil
}

// views returns refund r and its order as the API shows them, read in tx
// after the refund's writes.
func (s *Service) views(ctx context.Context, tx bun.Tx, orderID int64, r *store.Refund) (*checkout.Refund, *checkout.OrderView, error) {
	o, err := store.OrderByID(ctx, tx, orderID)
	if err != nil {
		return nil, nil, err
	}
	vs, err := s.Orders.Views(ctx, tx, []*store.Order{o})
	if err != nil {
		return nil, nil, err
	}
	ts, err := store.TicketsOfRefunds(ctx, tx, []int64{r.ID})
	if err != nil {
		return nil, nil, err
	}
	fresh, err := store.RefundByID(ctx, tx, r.ID)
	if err != nil {
		return nil, nil, err
	}
	return checkout.NewRefund(fresh, o.Reference, ts[r.ID]), vs[0], nil
}

// refundData is a refund event's data: the refund and its order.
func refundData(v *checkout.Refund, o *checkout.OrderView) map[string]any {
	return map[string]any{"refund": v, "order": o}
}

// emit records an event of order o with the order's next sequence; the
// order's updated_at moves with it, so its subscribers and the changes
// feed see the change.
func (s *Service) emit(ctx context.Context, tx bun.Tx, o *store.Order, typ string, data map[string]any) error {
	_, seq, err := store.TouchOrder(ctx, tx, o.ID, s.Now().UTC())
	if err != nil {
		return err
	}
	id := o.ID
	_, err = s.Webhooks.Emit(ctx, tx, webhook.Event{
		AppID: o.AppID, Environment: o.Environment, Type: typ, OrderID: &id, Sequence: seq, Data: data,
	})
	return err
}

// newID returns a refund id: rfd_ and 26 random base-32 characters.
func newID() string {
	return "rfd_" + strings.ToLower(rand.Text())
}

// formatMoney writes an amount with its currency for a message.
func formatMoney(minor int64, currency string) string {
	return currency + " " + catalog.FormatAmount(minor)
}
