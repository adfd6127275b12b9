// Package checkout creates checkout sessions and reads orders: it validates
// a request, prices the cart from the catalog, checks every business rule
// of spec 4.5 and section 7 in the order Create's doc lists, holds or sells stock with
// conditional updates, applies the daily caps of live free tickets, and
// writes the order and the idempotency outcome in one transaction.
package checkout

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/uptrace/bun"
)

// Config holds checkout's settings (docs/operator.md, "Configuration").
type Config struct {
	// PublicBaseURL is the base of every checkout_url.
	PublicBaseURL string
	// SandboxExpiry and LiveExpiry are how long a pending order lives.
	SandboxExpiry time.Duration
	LiveExpiry    time.Duration
	// FreeDailyAppCap, FreeDailyAccountCap and FreeDailyBuyerEventCap cap
	// live free tickets per UTC day: per app, per account (all its apps
	// together, so more apps do not buy more), and per buyer (email) per
	// event. A zero FreeDailyAccountCap is DefaultFreeDailyAccountCap.
	FreeDailyAppCap        int64
	FreeDailyAccountCap    int64
	FreeDailyBuyerEventCap int64
	// LiveFreeDisabled switches live free checkout off
	// (free_checkout_unavailable).
	LiveFreeDisabled bool
}

// DefaultConfig returns the defaults docs/operator.md lists.
func DefaultConfig() Config {
	return Config{
		PublicBaseURL: "http://localhost:8080", SandboxExpiry: 60 * time.Minute, LiveExpiry: 15 * time.Minute,
		FreeDailyAppCap: 1000, FreeDailyAccountCap: DefaultFreeDailyAccountCap, FreeDailyBuyerEventCap: 10,
	}
}

// DefaultFreeDailyAccountCap is the live free tickets one account's apps
// may give out per UTC day together: three apps' worth, as the account's
// request limits are three apps' (ACCOUNT_LIMIT_MULTIPLE).
const DefaultFreeDailyAccountCap = 3000

// Service creates checkout sessions and reads orders.
type Service struct {
	DB          *store.DB
	Idempotency *idempotency.Service
	Webhooks    *webhook.Service
	// Tickets issues the tickets of orders that become paid or completed.
	Tickets *tickets.Service
	// Payments creates the payments of live paid orders; nil means no
	// provider is configured (payment_gateway_unavailable).
	Payments payments.Provider
	Now      func() time.Time
	Config   Config
	// Throttle counts a checkout create against the caller's limits, its
	// app's and its account's (rate_limit_exceeded); nil means no limit.
	Throttle func(ctx context.Context, c Caller) error
	// Observe, when set, learns each request's outcome: "created" or the
	// error code.
	Observe func(env, outcome string)
	// Catalog reads the events, dates and tickets a cart is checked
	// against; nil reads the database. Stock is never taken from it.
	Catalog Catalog
	// Tenants, when set, keeps the apps read (their redirect allowlists)
	// until the tenant tables change.
	Tenants Cache

	// batches gathers live paid creates of the same tickets into one
	// transaction (heldBatches).
	batches atomic.Pointer[store.GroupCommit[*heldJob]]
}

// Catalog is where checkout reads the published catalog: the catalog
// cache in the server (readcache.CheckoutCatalog), so a create reads no
// catalog row from the database. Tickets it returns carry no stock (Sold
// and Held are zero): the conditional UPDATE of takeStock decides whether
// a cart fits, and the few checks made before it read stock afresh.
type Catalog interface {
	// VisibleEvent: store.VisibleEvent.
	VisibleEvent(ctx context.Context, id int64) (*store.Event, error)
	// EventDateOfEvent: store.EventDateOfEvent.
	EventDateOfEvent(ctx context.Context, id, eventID int64) (*store.EventDate, error)
	// TicketsByIDs: store.TicketsByIDs, without stock.
	TicketsByIDs(ctx context.Context, ids []int64) ([]store.Ticket, error)
}

// Cache keeps values read from the tenant tables until those change
// (readcache.Tenants).
type Cache interface {
	Get(ctx context.Context, key any, load func() (any, error)) (any, error)
}

// dbCatalog reads the catalog from the database.
type dbCatalog struct{ db *store.DB }

func (c dbCatalog) VisibleEvent(ctx context.Context, id int64) (*store.Event, error) {
	return store.VisibleEvent(ctx, c.db, id)
}

func (c dbCatalog) EventDateOfEvent(ctx context.Context, id, eventID int64) (*store.EventDate, error) {
	return store.EventDateOfEvent(ctx, c.db, id, eventID)
}

func (c dbCatalog) TicketsByIDs(ctx context.Context, ids []int64) ([]store.Ticket, error) {
	return store.TicketsByIDs(ctx, c.db, ids)
}

func (s *Service) catalog() Catalog {
	if s.Catalog != nil {
		return s.Catalog
	}
	return dbCatalog{s.DB}
}

// appKey is the key of an app in Tenants.
type appKey int64

// app returns the caller's app, from Tenants when set.
func (s *Service) app(ctx context.Context, id int64) (*store.App, error) {
	if s.Tenants == nil {
		return store.AppByID(ctx, s.DB, id)
	}
	v, err := s.Tenants.Get(ctx, appKey(id), func() (any, error) { return store.AppByID(ctx, s.DB, id) })
	if err != nil {
		return nil, err
	}
	return v.(*store.App), nil
}

// Caller is the authenticated app a request comes from.
type Caller struct {
	AppID       int64
	Environment string
	// AccountID owns the app; limits count per account too.
	AccountID int64
}

// Live reports whether the caller uses a live key.
func (c Caller) Live() bool { return c.Environment == store.EnvLive }

// Session is spec section 2.4: the answer to a checkout request. Its JSON
// is the form an idempotency key saves it in, so its tags must not change.
type Session struct {
	OrderReference   string  `json:"order_reference"`
	CheckoutURL      *string `json:"checkout_url"`
	ExpiresAt        *string `json:"expires_at"`
	Status           string  `json:"status"`
	Environment      string  `json:"environment"`
	RequiresPayment  bool    `json:"requires_payment"`
	TotalAmount      *string `json:"total_amount"`
	PaymentReference *string `json:"payment_reference"`
	// Currency is the ISO 4217 code of TotalAmount; the contract's session
	// does not show it, GraphQL's totalMoney does.
	Currency string `json:"-"`
}

// outcome is what an idempotency key saves: either the session or the
// business error. (Records saved before this form also hold the HTTP
// status, which replay never needed: the session or the code implies it.)
type outcome struct {
	Session *Session `json:"session,omitempty"`
	// Currency is the Session's, which its JSON leaves out.
	Currency string         `json:"currency,omitempty"`
	Error    *savedError    `json:"error,omitempty"`
	Details  apperr.Details `json:"details,omitempty"`
}

type savedError struct {
	Code    apperr.Code `json:"code"`
	Message string      `json:"message"`
}

// Create runs a checkout request under its idempotency key and reports
// whether the answer, a session or a refusal, is the one saved for an
// earlier run of the same request (replayed).
// Errors, earliest rule first (the order partners see when a request
// breaks several): rate_limit_exceeded, missing_idempotency_key,
// invalid_idempotency_key, validation_failed, idempotency_conflict,
// idempotency_in_progress, event_not_found, event_not_available,
// event_date_not_found, event_date_not_available, ticket_not_found,
// ticket_not_on_sale, ticket_quantity_exceeded, invalid_redirect_url,
// redirect_allowlist_required, redirect_domain_not_allowed,
// metadata_too_large, quantity_exceeds_limit, free_order_limit_reached,
// sold_out; free_checkout_unavailable and payment_gateway_unavailable
// (503s) where the cart is known to be free or paid, and
// checkout_unavailable when the database fails.
func (s *Service) Create(ctx context.Context, c Caller, r Request) (sess *Session, replayed bool, err error) {
	sess, replayed, err = s.create(ctx, c, r)
	var ae *apperr.Error
	if err != nil && !errors.As(err, &ae) {
		// The database (or something under it) failed: the client may retry.
		ae = apperr.Unavailable(apperr.CheckoutUnavailable, err,
			"Checkout is temporarily unavailable; retry shortly, then contact support.")
		err = ae
	}
	if s.Observe != nil {
		outcome := "created"
		if ae != nil {
			outcome = string(ae.Code)
		}
		s.Observe(c.Environment, outcome)
	}
	return sess, replayed, err
}

// create is the one place checkout's precedence is decided, whichever API
// the request came through: the checkout limit, then the idempotency key,
// then what decoding found in the body with the rest of validation, then
// the rules. The answer to a key that already has one (the
// idempotency lookup) is found when the request's own record cannot be
// written: the order's transaction rolls back, nothing is left behind,
// and the record that stands gives the answer, so it still comes before
// every business rule.
func (s *Service) create(ctx context.Context, c Caller, r Request) (*Session, bool, error) {
	if s.Throttle != nil {
		if err := s.Throttle(ctx, c); err != nil {
			return nil, false, err
		}
	}
	if err := idempotency.CheckKey(r.Key); err != nil {
		return nil, false, err
	}
	req, err := validate(r.Input, r.Problems)
	if err != nil {
		return nil, false, err
	}
	a := &attempt{scope: idempotency.Scope{AppID: c.AppID, Environment: c.Environment}, key: r.Key,
		fingerprint: idempotency.Fingerprint(canonical(r.Input))}
	for try := 0; ; try++ {
		a.claim = nil
		sess, err := s.run(ctx, c, req, a)
		var saved savedAnswer
		switch {
		case errors.As(err, &saved):
			return replayed(saved)
		case !errors.Is(err, idempotency.ErrTaken):
			return sess, false, err
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
		return replayed(savedAnswer(body))
	}
}

// attempt is one run of a request under its Idempotency-Key.
type attempt struct {
	scope       idempotency.Scope
	key         string
	fingerprint string
	// claim is held while a payment provider outside the database is
	// called (Service.claim); nil otherwise.
	claim *idempotency.Claim
}

// savedAnswer is the answer saved for the key, found before the request
// ran (Service.claim).
type savedAnswer []byte

func (savedAnswer) Error() string { return "checkout: the key has a saved answer" }

func replayed(saved savedAnswer) (*Session, bool, error) {
	sess, err := replay(saved)
	// A saved answer we cannot read is a failure of ours, not a replay.
	return sess, err == nil || apperr.CodeOf(err) != apperr.Internal, err
}

// run places the order, saving its answer with it, or saves the refusal
// that stopped it, if it is one to keep. Errors: those of place, and
// idempotency.ErrTaken when the key already has a record (nothing was
// written then).
func (s *Service) run(ctx context.Context, c Caller, req *request, a *attempt) (*Session, error) {
	sess, err := s.place(ctx, c, req, a)
	var ae *apperr.Error
	if err == nil || !errors.As(err, &ae) {
		if err != nil && a.claim != nil {
			if rerr := s.Idempotency.Release(ctx, a.claim); rerr != nil {
				return nil, errors.Join(err, rerr)
			}
		}
		return sess, err
	}
	if !saveable(ae) {
		if a.claim != nil {
			if rerr := s.Idempotency.Release(ctx, a.claim); rerr != nil {
				return nil, errors.Join(err, rerr)
			}
		}
		return nil, err
	}
	body, _ := json.Marshal(outcome{Error: &savedError{Code: ae.Code, Message: ae.Message}, Details: ae.Details})
	if a.claim != nil {
		if cerr := s.Idempotency.Complete(ctx, s.DB, a.claim, body); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	if serr := s.Idempotency.Save(ctx, s.DB, a.scope, a.key, a.fingerprint, body); serr != nil {
		return nil, serr
	}
	return nil, err
}

// save writes the answer of a placed order in its transaction: completing
// the claim when one is held, else as the key's record.
func (s *Service) save(ctx context.Context, tx bun.Tx, a *attempt, body []byte) error {
	if a.claim != nil {
		return s.Idempotency.Complete(ctx, tx, a.claim, body)
	}
	return s.Idempotency.Save(ctx, tx, a.scope, a.key, a.fingerprint, body)
}

// claim takes the key before a payment provider outside the database is
// called, so a second request with the key waits for the first instead of
// creating a second payment. Errors: those of idempotency.Service.Begin,
// and savedAnswer when the key already has an answer.
func (s *Service) claim(ctx context.Context, a *attempt) error {
	claim, saved, err := s.Idempotency.Begin(ctx, a.scope, a.key, a.fingerprint)
	if err != nil {
		return err
	}
	if saved != nil {
		return savedAnswer(saved)
	}
	a.claim = claim
	return nil
}

// saveable reports whether an answer is kept for the key: business-rule
// answers after validation are; validation, limits and server errors are
// not, so the client can fix or retry with the same key.
func saveable(e *apperr.Error) bool {
	return !e.Code.Transient() && e.Code != apperr.ValidationFailed
}

func replay(saved []byte) (*Session, error) {
	var o outcome
	if err := json.Unmarshal(saved, &o); err != nil {
		return nil, err
	}
	if o.Error != nil {
		return nil, &apperr.Error{Code: o.Error.Code, Message: o.Error.Message, Details: o.Details}
	}
	if o.Session != nil {
		o.Session.Currency = o.Currency
	}
	return o.Session, nil
}

// cart is a priced, checked request.
type cart struct {
	tickets  map[int64]*store.Ticket
	total    int64
	currency string
	quantity int64
}

func (k *cart) free() bool { return k.total == 0 }

// place checks the business rules and writes the order with its answer,
// in one transaction and, unless a payment provider outside the database
// is called, one commit.
func (s *Service) place(ctx context.Context, c Caller, req *request, a *attempt) (*Session, error) {
	now := s.Now().UTC()
	event, err := s.catalog().VisibleEvent(ctx, req.EventID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.EventNotFound, "Event %d was not found.", req.EventID)
	}
	if err != nil {
		return nil, err
	}
	if event.Private || event.PasswordProtected {
		return nil, apperr.New(apperr.EventNotAvailable, "Event %d is not available for checkout.", event.ID)
	}
	date, err := s.eventDate(ctx, event, req.EventDateID, now)
	if err != nil {
		return nil, err
	}
	k, err := s.price(ctx, event, date, req, now)
	if err != nil {
		return nil, err
	}
	if c.Live() && k.free() && s.Config.LiveFreeDisabled {
		return nil, apperr.New(apperr.FreeCheckoutUnavailable, "Live free checkout is switched off; try again later.")
	}
	if c.Live() && k.free() && !ghanaMobile(req.Phone) {
		return nil, apperr.Validation(apperr.Details{"customer.phone": {"must be a valid Ghana mobile number for a free order"}})
	}
	if err := s.checkRedirects(ctx, c, req); err != nil {
		return nil, err
	}
	if err := checkMetadata(req); err != nil {
		return nil, err
	}

	order := &store.Order{
		Reference: newReference(c.Environment, now), AppID: c.AppID, Environment: c.Environment,
		EventID: event.ID, EventDateID: date.ID, Currency: k.currency, TotalAmount: k.total,
		RequiresPayment: !k.free(), CustomerName: req.Name, CustomerEmail: req.Email, CustomerPhone: req.PhoneRaw,
		Metadata: req.Metadata, SuccessURL: req.SuccessURL, CancelURL: req.CancelURL, CreatedAt: now, UpdatedAt: now,
	}
	switch {
	case !k.free():
		order.Status = store.OrderPending
		order.ExpiresAt = now.Add(s.expiry(c))
		order.HoldsStock = c.Live()
	case c.Live():
		order.Status = store.OrderCompleted
	default:
		order.Status = store.OrderPaid
	}
	items := make([]store.OrderItem, len(req.Items))
	for i, it := range req.Items {
		t := k.tickets[it.TicketID]
		items[i] = store.OrderItem{TicketID: it.TicketID, Name: t.Name, Quantity: it.Quantity, UnitPrice: catalog.EffectivePrice(t)}
	}
	inTx, _ := s.Payments.(payments.InTx)
	if c.Live() && !k.free() && inTx == nil {
		if err := s.claim(ctx, a); err != nil {
			return nil, err
		}
		if err := s.createPayment(ctx, req, k, order); err != nil {
			return nil, err
		}
	}

	if c.Live() && !k.free() && inTx != nil {
		// The flash-sale path: held stock and an in-database payment,
		// written with the other creates of these tickets (groupCommit).
		j := &heldJob{req: req, k: k, order: order, items: items, a: a, now: now}
		err := s.heldBatches().Do(ctx, lineKey(req), j, func(ctx context.Context, jobs []*heldJob) []error {
			return s.writeHeldBatch(ctx, inTx, jobs)
		})
		if err != nil {
			return nil, err
		}
		return j.sess, nil
	}

	// The rows every checkout of a ticket contends for (its stock, and for
	// live free carts the daily counters) are taken last, just before the
	// commit: each holds its row lock until then, so concurrent checkouts of
	// one ticket wait for an UPDATE and a commit, not for the order's inserts
	// as well. A refusal rolls back everything before it.
	var sess *Session
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var body []byte
		sess, body = s.answer(order)
		// The answer first: a key that already has one ends the
		// transaction before anything else is written.
		if err := s.save(ctx, tx, a, body); err != nil {
			return err
		}
		if err := store.InsertOrder(ctx, tx, order, items); err != nil {
			return err
		}
		if order.Status != store.OrderPending {
			// Free carts settle at once: their tickets, and order.paid
			// (sandbox) or order.completed (live) carrying them.
			ts, err := s.Tickets.Issue(ctx, tx, order, items)
			if err != nil {
				return err
			}
			if err := s.emit(ctx, tx, order, &store.OrderDetail{Items: items, Tickets: ts}); err != nil {
				return err
			}
		}
		if c.Live() && k.free() {
			if err := s.takeFreeQuota(ctx, tx, c, event.ID, req.Email, k.quantity, now); err != nil {
				return err
			}
		}
		return s.takeStock(ctx, tx, c, req, k, now)
	})
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// writeHeld writes a live paid order with a payment kept in the database,
// in tx, a transaction it may share with other creates of the same tickets
// (groupCommit): it holds the stock first (the batch holds the rows until
// its commit anyway), then writes the answer, the payment and the order.
// On a refusal it undoes its own holds, so tx can go on with the others.
// Errors: sold_out, idempotency.ErrTaken, payment_gateway_unavailable, and
// the database's.
func (s *Service) writeHeld(ctx context.Context, tx bun.Tx, p payments.InTx, req *request, k *cart, order *store.Order,
	items []store.OrderItem, a *attempt, now time.Time) (*Session, error) {
	qty, ids := lockOrder(req)
	var held []int64
	undo := func(refusal error) error {
		for _, id := range held {
			if err := store.SettleStock(ctx, tx, id, qty[id], false, now); err != nil {
				return err
			}
		}
		return refusal
	}
	for _, id := range ids {
		ok, err := store.HoldStock(ctx, tx, id, qty[id], false, now)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, undo(s.stockRefusal(ctx, tx, id))
		}
		held = append(held, id)
	}
	sess, err := s.writeOrder(ctx, tx, p, req, k, order, items, a)
	if err != nil && refusal(err) {
		return nil, undo(err)
	}
	return sess, err
}

// writeOrder writes a live paid create's payment, its answer for its
// idempotency key and its order, in tx, and returns its answer; the stock
// is the caller's. Errors: payment_gateway_unavailable and
// idempotency.ErrTaken, which leave tx usable, and the database's.
func (s *Service) writeOrder(ctx context.Context, tx bun.Tx, p payments.InTx, req *request, k *cart, order *store.Order,
	items []store.OrderItem, a *attempt) (*Session, error) {
	if err := s.createPaymentTx(ctx, tx, p, k, req, order); err != nil {
		return nil, err
	}
	sess, body := s.answer(order)
	if err := s.save(ctx, tx, a, body); err != nil {
		return nil, err
	}
	if err := store.InsertOrder(ctx, tx, order, items); err != nil {
		return nil, err
	}
	return sess, nil
}

// eventDate checks the requested date of event.
// Errors: event_date_not_found, event_date_not_available.
func (s *Service) eventDate(ctx context.Context, event *store.Event, id int64, now time.Time) (*store.EventDate, error) {
	d, err := s.catalog().EventDateOfEvent(ctx, id, event.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.New(apperr.EventDateNotFound, "Event date %d was not found for event %d.", id, event.ID)
	}
	if err != nil {
		return nil, err
	}
	if err := catalog.DateOnSale(d, now); err != nil {
		return nil, err
	}
	return d, nil
}

// price loads the requested tickets, checks each against the date, its
// sales window and the per-attendee limit, and totals the cart.
func (s *Service) price(ctx context.Context, event *store.Event, date *store.EventDate, req *request, now time.Time) (*cart, error) {
	ids := make([]int64, len(req.Items))
	for i, it := range req.Items {
		ids[i] = it.TicketID
	}
	ts, err := s.catalog().TicketsByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	k := &cart{tickets: make(map[int64]*store.Ticket, len(ts))}
	for i := range ts {
		if ts[i].EventDateID == date.ID {
			k.tickets[ts[i].ID] = &ts[i]
		}
	}
	for _, it := range req.Items {
		if k.tickets[it.TicketID] == nil {
			return nil, apperr.New(apperr.TicketNotFound, "Ticket %d is not a ticket of event date %d.", it.TicketID, date.ID)
		}
	}
	for _, it := range req.Items {
		t := k.tickets[it.TicketID]
		if !onSale(now, t.SalesStart, t.SalesEnd) || !onSale(now, event.SalesStart, event.SalesEnd) {
			return nil, apperr.New(apperr.TicketNotOnSale, "Ticket %d is not on sale now.", t.ID)
		}
	}
	for _, it := range req.Items {
		t := k.tickets[it.TicketID]
		if t.TicketsPerAttendee != nil && it.Quantity > *t.TicketsPerAttendee {
			return nil, apperr.New(apperr.TicketQuantityExceeded,
				"Ticket %d allows at most %d per attendee.", t.ID, *t.TicketsPerAttendee)
		}
	}
	for _, it := range req.Items {
		t := k.tickets[it.TicketID]
		if k.currency == "" {
			k.currency = t.Currency
		} else if k.currency != t.Currency {
			return nil, apperr.Validation(apperr.Details{"items": {"all tickets of one checkout must share one currency"}})
		}
		k.total += catalog.EffectivePrice(t) * it.Quantity
		k.quantity += it.Quantity
	}
	return k, nil
}

func onSale(now, start, end time.Time) bool {
	return (start.IsZero() || !now.Before(start)) && (end.IsZero() || now.Before(end))
}

// takeStock holds the cart's tickets (live paid), sells them (live free),
// or only checks them against the stock read now (sandbox, which never
// holds stock). Tickets are updated in id order so concurrent checkouts
// cannot deadlock.
// Errors: sold_out.
func (s *Service) takeStock(ctx context.Context, tx bun.Tx, c Caller, req *request, k *cart, now time.Time) error {
	if !c.Live() {
		return s.checkStock(ctx, tx, req)
	}
	qty, ids := lockOrder(req)
	for _, id := range ids {
		ok, err := store.HoldStock(ctx, tx, id, qty[id], k.free(), now)
		if err != nil {
			return err
		}
		if !ok {
			return s.stockRefusal(ctx, tx, id)
		}
	}
	return nil
}

// stockRefusal says why the stock of ticket id could not be taken: its
// date was cancelled since the create read it, or too few are left.
func (s *Service) stockRefusal(ctx context.Context, db bun.IDB, id int64) error {
	ts, err := store.TicketsByIDs(ctx, db, []int64{id})
	if err != nil {
		return err
	}
	if len(ts) == 1 && ts[0].DateCancelled {
		return catalog.DateCancelled(ts[0].EventDateID)
	}
	return soldOut(id)
}

// checkStock refuses a cart that does not fit the stock read now from db,
// without taking any.
// Errors: sold_out.
func (s *Service) checkStock(ctx context.Context, db bun.IDB, req *request) error {
	ids := make([]int64, len(req.Items))
	for i, it := range req.Items {
		ids[i] = it.TicketID
	}
	ts, err := store.TicketsByIDs(ctx, db, ids)
	if err != nil {
		return err
	}
	stock := make(map[int64]store.Stock, len(ts))
	for i := range ts {
		stock[ts[i].ID] = ts[i].Stock()
	}
	for i := range ts {
		if ts[i].DateCancelled {
			return catalog.DateCancelled(ts[i].EventDateID)
		}
	}
	for _, it := range req.Items {
		if !catalog.Fits(stock[it.TicketID], it.Quantity) {
			return soldOut(it.TicketID)
		}
	}
	return nil
}

// lockOrder returns the quantity of each ticket of the cart and the
// tickets in id order, the order every create takes their rows in, so
// concurrent creates cannot deadlock.
func lockOrder(req *request) (map[int64]int64, []int64) {
	qty := make(map[int64]int64, len(req.Items))
	for _, it := range req.Items {
		qty[it.TicketID] = it.Quantity
	}
	ids := make([]int64, 0, len(qty))
	for id := range qty {
		ids = append(ids, id)
	}
	sortIDs(ids)
	return qty, ids
}

func soldOut(id int64) error {
	return apperr.New(apperr.SoldOut, "Ticket %d does not have enough tickets left.", id)
}

// takeFreeQuota counts a live free order against the buyer's daily cap for
// the event, the app's daily cap and its account's (all the account's
// apps together; UTC days). A buyer is one normalised
// email address (clientinput.BuyerEmail): Cap+1@Example.com is the buyer
// cap@example.com is, not a second allowance.
// Errors: quantity_exceeds_limit, free_order_limit_reached.
func (s *Service) takeFreeQuota(ctx context.Context, tx bun.Tx, c Caller, eventID int64, email string, qty int64, now time.Time) error {
	day := now.UTC().Format(time.DateOnly)
	buyer := store.BuyerScope(clientinput.BuyerEmail(email), eventID)
	used, err := store.FreeUsage(ctx, tx, buyer, day)
	if err != nil {
		return err
	}
	capBuyer := s.Config.FreeDailyBuyerEventCap
	if used == 0 && qty > capBuyer {
		return apperr.New(apperr.QuantityExceedsLimit, "A buyer may get at most %d free tickets for this event per day.", capBuyer)
	}
	ok, err := store.AddFreeUsage(ctx, tx, buyer, day, qty, capBuyer)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.FreeOrderLimitReached, "This buyer has reached today's limit of %d free tickets for this event.", capBuyer)
	}
	ok, err = store.AddFreeUsage(ctx, tx, "app:"+itoa(c.AppID), day, qty, s.Config.FreeDailyAppCap)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.FreeOrderLimitReached, "This app has reached today's limit of %d free tickets.", s.Config.FreeDailyAppCap)
	}
	capAccount := cmp.Or(s.Config.FreeDailyAccountCap, DefaultFreeDailyAccountCap)
	ok, err = store.AddFreeUsage(ctx, tx, "account:"+itoa(c.AccountID), day, qty, capAccount)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.FreeOrderLimitReached, "This account has reached today's limit of %d free tickets, all its apps together.", capAccount)
	}
	return nil
}

func (s *Service) expiry(c Caller) time.Duration {
	if c.Live() {
		return s.Config.LiveExpiry
	}
	return s.Config.SandboxExpiry
}

// answer is a created order's checkout session and the answer kept for
// its idempotency key.
func (s *Service) answer(o *store.Order) (*Session, []byte) {
	sess := s.session(o)
	body, _ := json.Marshal(outcome{Session: sess, Currency: sess.Currency})
	return sess, body
}

// session renders an order as the API's checkout session.
func (s *Service) session(o *store.Order) *Session {
	sess := &Session{
		OrderReference: o.Reference, Status: o.Status, Environment: o.Environment,
		RequiresPayment: o.RequiresPayment, PaymentReference: o.PaymentReference, Currency: o.Currency,
	}
	total := catalog.FormatAmount(o.TotalAmount)
	sess.TotalAmount = &total
	if o.Status == store.OrderPending {
		u := CheckoutURL(s.Config.PublicBaseURL, o.Environment, o.Reference)
		sess.CheckoutURL = &u
	}
	if !o.ExpiresAt.IsZero() {
		e := o.ExpiresAt.UTC().Format(time.RFC3339)
		sess.ExpiresAt = &e
	}
	return sess
}

// CheckoutURL is where a buyer pays for a pending order: the sandbox page
// for test orders, the service's hosted page for live ones.
func CheckoutURL(base, env, ref string) string {
	base = strings.TrimRight(base, "/")
	if env == store.EnvLive {
		return base + "/checkout/" + ref
	}
	return base + "/sandbox/checkout/" + ref
}

// Reference prefixes name an order's environment.
const (
	SandboxPrefix = "sbx_"
	LivePrefix    = "ord_"
)

var refEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// refTimeEncoding writes a reference's time: base32 with its 32 characters
// in ascending byte order ("2" < "7" < "a" < "z"), so that equal-length
// encodings sort as the numbers they encode.
var refTimeEncoding = base32.NewEncoding("234567abcdefghijklmnopqrstuvwxyz").WithPadding(base32.NoPadding)

// newReference returns an unguessable order reference: the prefix, then
// the creation time in milliseconds (45 bits, 9 characters, good until the
// year 3084), then 120 random bits. The time first makes a new reference
// sort after the earlier ones, so its index entry (orders' unique index,
// and the payment's key, which is the reference) goes at the right edge of
// the B-tree like an id's: with random references, each create wrote into
// a random leaf of indexes that outgrow the database's buffers in a flash
// sale of a million orders (bench: the sale's PostgreSQL CPU per create
// rose 1.22x over five minutes, as pages were read back and written out by
// the backends themselves).
func newReference(env string, now time.Time) string {
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(now.UnixMilli())<<19) // the top 45 bits of 64
	b := make([]byte, 15)
	_, _ = rand.Read(b)
	prefix := SandboxPrefix
	if env == store.EnvLive {
		prefix = LivePrefix
	}
	return prefix + refTimeEncoding.EncodeToString(t[:])[:9] + strings.ToLower(refEncoding.EncodeToString(b))
}
