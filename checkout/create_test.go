package checkout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// cart is a valid checkout input of qty tickets of a demo ticket, named by
// the demo catalog's references.
func (b *lifecycleBundle) cart(event, date, ticket string, qty int) *checkout.Input {
	c := b.demo.Catalog
	return &checkout.Input{
		EventID: ptr(int(c.Events[event])), EventdateID: ptr(int(c.EventDates[date])),
		Items:      []*checkout.Item{{TicketID: ptr(int(c.Tickets[ticket])), Quantity: ptr(qty)}},
		Customer:   &checkout.Customer{Name: ptr("Ama Mensah"), Email: ptr("ama@example.com"), Phone: ptr("0241234567")},
		SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
	}
}

// create runs a checkout of the demo app in env.
func (b *lifecycleBundle) create(env string, r checkout.Request) (*checkout.Session, bool, error) {
	return b.svc.Create(context.Background(), checkout.Caller{AppID: b.demo.App.App.ID, Environment: env}, r)
}

// id returns the id of a demo event, date or ticket by its reference.
func (b *lifecycleBundle) id(ref string) int64 {
	c := b.demo.Catalog
	for _, m := range []map[string]int64{c.Events, c.EventDates, c.Tickets} {
		if id, ok := m[ref]; ok {
			return id
		}
	}
	panic("no demo row " + ref)
}

// exec runs a statement that moves the demo catalog into a state no import
// writes (an inactive date, a sold-out free ticket).
func (b *lifecycleBundle) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	_, err := b.db.ExecContext(context.Background(), query, args...)
	require.NoError(t, err)
}

// bigMetadata is metadata one key over the limit, and its size as JSON.
func bigMetadata() (map[string]any, int) {
	m := map[string]any{}
	for i := range checkout.MaxMetadataKeys + 1 {
		m[fmt.Sprintf("k%02d", i)] = "v"
	}
	raw, _ := json.Marshal(m)
	return m, len(raw)
}

// TestCreate_Precedence drives the service through every refusal of
// checkout's precedence (Service.Create's doc): each case but the bare ones breaks two
// rules at once, and the earlier rule must answer. Every case builds its
// own database.
func TestCreate_Precedence(t *testing.T) {
	t.Parallel()
	const key = "precedence-key"
	highlife := func(b *lifecycleBundle) *checkout.Input {
		return b.cart("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 1)
	}
	comedy := func(b *lifecycleBundle) *checkout.Input { // sold out
		return b.cart("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)
	}
	chalewote := func(b *lifecycleBundle, qty int) *checkout.Input { // free
		return b.cart("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", qty)
	}
	with := func(in *checkout.Input, change func(*checkout.Input)) checkout.Request {
		change(in)
		return checkout.Request{Key: key, Input: in}
	}
	// earlier runs a request under key before the case's own.
	earlier := func(env string, in func(*lifecycleBundle) *checkout.Input) func(*testing.T, *lifecycleBundle) {
		return func(t *testing.T, b *lifecycleBundle) {
			_, _, err := b.create(env, checkout.Request{Key: key, Input: in(b)})
			require.NoError(t, err)
		}
	}
	noDomains := func(t *testing.T, b *lifecycleBundle) {
		_, err := (&provision.Service{DB: b.db, Now: b.clock.Now}).UpdateApp(context.Background(), b.demo.App.App.ID,
			provision.AppUpdate{ClearRedirectDomains: true})
		require.NoError(t, err)
	}
	soldOutFree := func(t *testing.T, b *lifecycleBundle) {
		b.exec(t, "UPDATE tickets SET sold = quantity WHERE id = ?", b.id("DEMO-CHALEWOTE-1-GA"))
	}
	big, bigSize := bigMetadata()
	bodyProblem := apperr.Details{"body": {"is not valid JSON (unexpected EOF)"}}
	personal := "must not contain personal data (customer name, email address or phone number)"

	tests := []struct {
		name    string
		env     string // store.EnvTest when empty
		prepare func(*testing.T, *lifecycleBundle)
		req     func(*lifecycleBundle) checkout.Request
		code    apperr.Code
		message func(*lifecycleBundle) string
		details apperr.Details // checked when not nil
	}{
		{
			name: "ErrRateLimitExceededBeforeKey",
			prepare: func(_ *testing.T, b *lifecycleBundle) {
				b.svc.Throttle = func(context.Context, checkout.Caller) error {
					return apperr.New(apperr.RateLimitExceeded, "Too many checkout requests.")
				}
			},
			req:     func(*lifecycleBundle) checkout.Request { return checkout.Request{Problems: bodyProblem} },
			code:    apperr.RateLimitExceeded,
			message: func(*lifecycleBundle) string { return "Too many checkout requests." },
		},
		{
			name:    "ErrMissingIdempotencyKeyBeforeMalformedJSON",
			req:     func(*lifecycleBundle) checkout.Request { return checkout.Request{Problems: bodyProblem} },
			code:    apperr.MissingIdempotencyKey,
			message: func(*lifecycleBundle) string { return "The Idempotency-Key header is required." },
		},
		{
			name: "ErrInvalidIdempotencyKeyBeforeValidation",
			req: func(b *lifecycleBundle) checkout.Request {
				r := with(highlife(b), func(in *checkout.Input) { in.EventID = nil })
				r.Key = strings.Repeat("k", idempotency.MaxKeyLength+1)
				return r
			},
			code:    apperr.InvalidIdempotencyKey,
			message: func(*lifecycleBundle) string { return "The Idempotency-Key header must be at most 128 characters." },
		},
		{
			name:    "ErrValidationFailedMalformedJSON",
			req:     func(*lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Problems: bodyProblem} },
			code:    apperr.ValidationFailed,
			message: func(*lifecycleBundle) string { return "The request payload failed validation." },
			details: bodyProblem,
		},
		{
			name:    "ErrValidationFailedNoBody",
			req:     func(*lifecycleBundle) checkout.Request { return checkout.Request{Key: key} },
			code:    apperr.ValidationFailed,
			message: func(*lifecycleBundle) string { return "The request payload failed validation." },
			details: apperr.Details{"body": {"is required"}},
		},
		{
			name: "ErrValidationFailedTypeErrorsWithFieldErrors",
			req: func(b *lifecycleBundle) checkout.Request {
				r := with(highlife(b), func(in *checkout.Input) { in.EventID, in.Items[0].Quantity = nil, nil })
				r.Problems = apperr.Details{"items.0.quantity": {"must be an integer"}}
				return r
			},
			code:    apperr.ValidationFailed,
			message: func(*lifecycleBundle) string { return "The request payload failed validation." },
			details: apperr.Details{"event_id": {"is required"}, "items.0.quantity": {"must be an integer"}},
		},
		{
			name:    "ErrValidationFailedBeforeIdempotencyConflict",
			prepare: earlier(store.EnvTest, highlife),
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) { in.Customer.Email = ptr("ama@") })
			},
			code:    apperr.ValidationFailed,
			message: func(*lifecycleBundle) string { return "The request payload failed validation." },
			details: apperr.Details{"customer.email": {"must be a valid email address"}},
		},
		{
			name:    "ErrIdempotencyConflictBeforeEventNotFound",
			prepare: earlier(store.EnvTest, highlife),
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) { in.EventID = ptr(int(b.id("DEMO-HIDDEN"))) })
			},
			code: apperr.IdempotencyConflict,
			message: func(*lifecycleBundle) string {
				return "This Idempotency-Key was already used with a different request body."
			},
		},
		{
			name: "ErrIdempotencyInProgress",
			prepare: func(t *testing.T, b *lifecycleBundle) {
				canonical, err := json.Marshal(highlife(b))
				require.NoError(t, err)
				_, _, err = b.svc.Idempotency.Begin(context.Background(),
					idempotency.Scope{AppID: b.demo.App.App.ID, Environment: store.EnvTest}, key, idempotency.Fingerprint(canonical))
				require.NoError(t, err)
			},
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: highlife(b)} },
			code: apperr.IdempotencyInProgress,
			message: func(*lifecycleBundle) string {
				return "A request with this Idempotency-Key is still being processed; retry shortly."
			},
		},
		{
			name: "ErrCheckoutUnavailableUnreadableSavedAnswer",
			prepare: func(t *testing.T, b *lifecycleBundle) {
				canonical, err := json.Marshal(highlife(b))
				require.NoError(t, err)
				claim, _, err := b.svc.Idempotency.Begin(context.Background(),
					idempotency.Scope{AppID: b.demo.App.App.ID, Environment: store.EnvTest}, key, idempotency.Fingerprint(canonical))
				require.NoError(t, err)
				require.NoError(t, b.svc.Idempotency.Complete(context.Background(), b.db, claim, []byte("not JSON")))
			},
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: highlife(b)} },
			code: apperr.CheckoutUnavailable,
			message: func(*lifecycleBundle) string {
				return "Checkout is temporarily unavailable; retry shortly, then contact support."
			},
		},
		{
			name: "ErrEventNotFoundBeforeEventDateNotFound",
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) { in.EventID = ptr(int(b.id("DEMO-HIDDEN"))) })
			},
			code:    apperr.EventNotFound,
			message: func(b *lifecycleBundle) string { return fmt.Sprintf("Event %d was not found.", b.id("DEMO-HIDDEN")) },
		},
		{
			name: "ErrEventNotFoundUnpublished",
			req: func(b *lifecycleBundle) checkout.Request {
				return checkout.Request{Key: key, Input: b.cart("DEMO-DRAFT", "DEMO-DRAFT-1", "DEMO-DRAFT-GA", 1)}
			},
			code:    apperr.EventNotFound,
			message: func(b *lifecycleBundle) string { return fmt.Sprintf("Event %d was not found.", b.id("DEMO-DRAFT")) },
		},
		{
			name: "ErrEventNotAvailableBeforeEventDateNotFound",
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) { in.EventID = ptr(int(b.id("DEMO-GALA"))) })
			},
			code: apperr.EventNotAvailable,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Event %d is not available for checkout.", b.id("DEMO-GALA"))
			},
		},
		{
			name: "ErrEventDateNotFoundBeforeTicketNotFound",
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) { in.EventdateID = ptr(int(b.id("DEMO-MOVIES-1"))) })
			},
			code: apperr.EventDateNotFound,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Event date %d was not found for event %d.", b.id("DEMO-MOVIES-1"), b.id("DEMO-HIGHLIFE"))
			},
		},
		{
			name: "ErrEventDateNotAvailableEndedBeforeTicketNotFound",
			req: func(b *lifecycleBundle) checkout.Request {
				return checkout.Request{Key: key, Input: b.cart("DEMO-MOVIES", "DEMO-MOVIES-0", "DEMO-MOVIES-1-SEAT", 1)}
			},
			code:    apperr.EventDateNotAvailable,
			message: func(b *lifecycleBundle) string { return fmt.Sprintf("Event date %d has ended.", b.id("DEMO-MOVIES-0")) },
		},
		{
			name: "ErrEventDateNotAvailableInactive",
			prepare: func(t *testing.T, b *lifecycleBundle) {
				b.exec(t, "UPDATE event_dates SET active = ? WHERE id = ?", false, b.id("DEMO-HIGHLIFE-1"))
			},
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: highlife(b)} },
			code: apperr.EventDateNotAvailable,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Event date %d is not active.", b.id("DEMO-HIGHLIFE-1"))
			},
		},
		{
			name: "ErrEventDateCancelledBeforeNotAvailable",
			prepare: func(t *testing.T, b *lifecycleBundle) {
				_, err := store.CancelEventDate(context.Background(), b.db, b.id("DEMO-HIGHLIFE-1"), "Storm", false, time.Now())
				require.NoError(t, err)
				b.exec(t, "UPDATE event_dates SET active = ? WHERE id = ?", false, b.id("DEMO-HIGHLIFE-1"))
			},
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: highlife(b)} },
			code: apperr.EventDateCancelled,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Event date %d is cancelled; its tickets are no longer sold.", b.id("DEMO-HIGHLIFE-1"))
			},
		},
		{
			// The create read the date before its cancellation committed:
			// the stock write, which sees the ticket's flag, refuses it.
			name: "ErrEventDateCancelledAtTheStockWrite",
			prepare: func(t *testing.T, b *lifecycleBundle) {
				b.exec(t, "UPDATE tickets SET date_cancelled = ? WHERE event_date_id = ?", true, b.id("DEMO-HIGHLIFE-1"))
			},
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: highlife(b)} },
			code: apperr.EventDateCancelled,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Event date %d is cancelled; its tickets are no longer sold.", b.id("DEMO-HIGHLIFE-1"))
			},
		},
		{
			name: "ErrEventDateNotAvailablePayoutLocked",
			prepare: func(t *testing.T, b *lifecycleBundle) {
				b.exec(t, "UPDATE event_dates SET payout_locked = ? WHERE id = ?", true, b.id("DEMO-HIGHLIFE-1"))
			},
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: highlife(b)} },
			code: apperr.EventDateNotAvailable,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Event date %d is closed for sales.", b.id("DEMO-HIGHLIFE-1"))
			},
		},
		{
			name: "ErrTicketNotFoundBeforeTicketNotOnSale",
			// The first item is not on sale yet; the second is of another date.
			req: func(b *lifecycleBundle) checkout.Request {
				return with(b.cart("DEMO-JAZZ", "DEMO-JAZZ-1", "DEMO-JAZZ-GA", 1), func(in *checkout.Input) {
					in.Items = append(in.Items, &checkout.Item{TicketID: ptr(int(b.id("DEMO-HIGHLIFE-REG"))), Quantity: ptr(1)})
				})
			},
			code: apperr.TicketNotFound,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Ticket %d is not a ticket of event date %d.", b.id("DEMO-HIGHLIFE-REG"), b.id("DEMO-JAZZ-1"))
			},
		},
		{
			name: "ErrTicketNotOnSaleBeforeTicketQuantityExceeded",
			req: func(b *lifecycleBundle) checkout.Request {
				return checkout.Request{Key: key, Input: b.cart("DEMO-JAZZ", "DEMO-JAZZ-1", "DEMO-JAZZ-GA", 9)}
			},
			code: apperr.TicketNotOnSale,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Ticket %d is not on sale now.", b.id("DEMO-JAZZ-GA"))
			},
		},
		{
			name: "ErrTicketQuantityExceededBeforeInvalidRedirectURL",
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) {
					in.Items[0].Quantity = ptr(11)
					in.SuccessURL = ptr("http://partner.example/ok")
				})
			},
			code: apperr.TicketQuantityExceeded,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Ticket %d allows at most 10 per attendee.", b.id("DEMO-HIGHLIFE-REG"))
			},
		},
		{
			name: "ErrValidationFailedLiveFreeLandlineBeforeInvalidRedirectURL",
			env:  store.EnvLive,
			req: func(b *lifecycleBundle) checkout.Request {
				return with(chalewote(b, 1), func(in *checkout.Input) {
					in.Customer.Phone = ptr("0302123456")
					in.SuccessURL = ptr("http://partner.example/ok")
				})
			},
			code:    apperr.ValidationFailed,
			message: func(*lifecycleBundle) string { return "The request payload failed validation." },
			details: apperr.Details{"customer.phone": {"must be a valid Ghana mobile number for a free order"}},
		},
		{
			name:    "ErrInvalidRedirectURLBeforeRedirectAllowlistRequired",
			prepare: noDomains,
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) { in.SuccessURL = ptr("http://partner.example/ok") })
			},
			code:    apperr.InvalidRedirectURL,
			message: func(*lifecycleBundle) string { return "success_url must be a valid HTTPS URL." },
			details: apperr.Details{"success_url": {"must be an absolute https:// URL"}},
		},
		{
			name:    "ErrRedirectAllowlistRequiredBeforeMetadataTooLarge",
			prepare: noDomains,
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) { in.Metadata = big })
			},
			code: apperr.RedirectAllowlistRequired,
			message: func(*lifecycleBundle) string {
				return "This app has no allowed redirect domains; add one on the app page before creating checkouts."
			},
		},
		{
			name: "ErrRedirectDomainNotAllowedBeforeMetadataTooLarge",
			req: func(b *lifecycleBundle) checkout.Request {
				return with(highlife(b), func(in *checkout.Input) {
					in.CancelURL = ptr("https://Elsewhere.example/no")
					in.Metadata = big
				})
			},
			code: apperr.RedirectDomainNotAllowed,
			message: func(*lifecycleBundle) string {
				return "The host elsewhere.example of cancel_url is not on this app's redirect allowlist."
			},
			details: apperr.Details{"cancel_url": {"host is not on the app's redirect allowlist"}},
		},
		{
			name: "ErrMetadataTooLargeBeforeSoldOut",
			req: func(b *lifecycleBundle) checkout.Request {
				return with(comedy(b), func(in *checkout.Input) { in.Metadata = big })
			},
			code: apperr.MetadataTooLarge,
			message: func(*lifecycleBundle) string {
				return fmt.Sprintf("metadata may hold at most 20 keys and 4096 bytes of JSON (it has 21 keys, %d bytes).", bigSize)
			},
		},
		{
			name: "ErrValidationFailedPersonalMetadataBeforeSoldOut",
			req: func(b *lifecycleBundle) checkout.Request {
				return with(comedy(b), func(in *checkout.Input) {
					in.Metadata = map[string]any{"buyer": "Ama Mensah", "seat": "A12", "contact": []any{"call 024 123 4567"}}
				})
			},
			code:    apperr.ValidationFailed,
			message: func(*lifecycleBundle) string { return "The request payload failed validation." },
			details: apperr.Details{"metadata.buyer": {personal}, "metadata.contact": {personal}},
		},
		{
			name: "ErrFreeCheckoutUnavailable",
			env:  store.EnvLive,
			prepare: func(_ *testing.T, b *lifecycleBundle) {
				b.svc.Config.LiveFreeDisabled = true
			},
			req:     func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: chalewote(b, 1)} },
			code:    apperr.FreeCheckoutUnavailable,
			message: func(*lifecycleBundle) string { return "Live free checkout is switched off; try again later." },
		},
		{
			name: "ErrQuantityExceedsLimitBeforeSoldOut",
			env:  store.EnvLive,
			prepare: func(t *testing.T, b *lifecycleBundle) {
				b.svc.Config.FreeDailyBuyerEventCap = 3
				soldOutFree(t, b)
			},
			req:     func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: chalewote(b, 4)} },
			code:    apperr.QuantityExceedsLimit,
			message: func(*lifecycleBundle) string { return "A buyer may get at most 3 free tickets for this event per day." },
		},
		{
			name: "ErrFreeOrderLimitReachedBuyerBeforeSoldOut",
			env:  store.EnvLive,
			prepare: func(t *testing.T, b *lifecycleBundle) {
				b.svc.Config.FreeDailyBuyerEventCap = 4
				// The same buyer, another letter case and +tag: one allowance.
				first := chalewote(b, 3)
				first.Customer.Email = ptr("Ama+first@Example.com")
				_, _, err := b.create(store.EnvLive, checkout.Request{Key: "first", Input: first})
				require.NoError(t, err)
				soldOutFree(t, b)
			},
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: chalewote(b, 2)} },
			code: apperr.FreeOrderLimitReached,
			message: func(*lifecycleBundle) string {
				return "This buyer has reached today's limit of 4 free tickets for this event."
			},
		},
		{
			name: "ErrFreeOrderLimitReachedApp",
			env:  store.EnvLive,
			prepare: func(_ *testing.T, b *lifecycleBundle) {
				b.svc.Config.FreeDailyAppCap = 2
			},
			req:     func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: chalewote(b, 3)} },
			code:    apperr.FreeOrderLimitReached,
			message: func(*lifecycleBundle) string { return "This app has reached today's limit of 2 free tickets." },
		},
		{
			name: "ErrSoldOut",
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: comedy(b)} },
			code: apperr.SoldOut,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Ticket %d does not have enough tickets left.", b.id("DEMO-COMEDY-REG"))
			},
		},
		{
			name: "ErrSoldOutLiveBeforePaymentGatewayUnavailable",
			env:  store.EnvLive,
			prepare: func(_ *testing.T, b *lifecycleBundle) {
				b.svc.Payments = nil
			},
			req:  func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: comedy(b)} },
			code: apperr.SoldOut,
			message: func(b *lifecycleBundle) string {
				return fmt.Sprintf("Ticket %d does not have enough tickets left.", b.id("DEMO-COMEDY-REG"))
			},
		},
		{
			name: "ErrPaymentGatewayUnavailable",
			env:  store.EnvLive,
			prepare: func(_ *testing.T, b *lifecycleBundle) {
				b.svc.Payments = nil
			},
			req:     func(b *lifecycleBundle) checkout.Request { return checkout.Request{Key: key, Input: highlife(b)} },
			code:    apperr.PaymentGatewayUnavailable,
			message: func(*lifecycleBundle) string { return "No payment provider is configured for live payments." },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				b := setupLifecycle(t, db)
				if tt.prepare != nil {
					tt.prepare(t, b)
				}
				env := tt.env
				if env == "" {
					env = store.EnvTest
				}
				sess, replayed, err := b.create(env, tt.req(b))
				require.Nil(t, sess)
				require.False(t, replayed)
				ae := apperr.From(err)
				require.Equal(t, tt.code, ae.Code, "%v", err)
				require.Equal(t, tt.message(b), ae.Message)
				if tt.details != nil {
					require.Equal(t, tt.details, ae.Details)
				}
			})
		})
	}
}

// TestCreate_OK checks the session of each kind of cart: paid or free, in
// the sandbox or live.
func TestCreate_OK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      string
		event    string
		date     string
		ticket   string
		qty      int
		status   string
		total    string
		checkout string // the checkout_url's path before the reference; "" when null
		expires  time.Duration
		payment  bool
	}{
		{"OKSandboxPaid", store.EnvTest, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 2,
			store.OrderPending, "240.00", "/sandbox/checkout/", time.Hour, false},
		{"OKSandboxFree", store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2,
			store.OrderPaid, "0.00", "", 0, false},
		{"OKLivePaid", store.EnvLive, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-VIP", 1,
			store.OrderPending, "450.00", "/checkout/", 15 * time.Minute, true},
		{"OKLiveFree", store.EnvLive, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2,
			store.OrderCompleted, "0.00", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				b := setupLifecycle(t, db)
				sess, replayed, err := b.create(tt.env, checkout.Request{Key: "k", Input: b.cart(tt.event, tt.date, tt.ticket, tt.qty)})
				require.NoError(t, err)
				require.False(t, replayed)

				prefix := map[string]string{store.EnvTest: checkout.SandboxPrefix, store.EnvLive: checkout.LivePrefix}[tt.env]
				require.True(t, strings.HasPrefix(sess.OrderReference, prefix), sess.OrderReference)
				want := &checkout.Session{
					OrderReference: sess.OrderReference, Status: tt.status, Environment: tt.env,
					RequiresPayment: tt.total != "0.00", TotalAmount: ptr(tt.total), Currency: "GHS",
				}
				if tt.checkout != "" {
					want.CheckoutURL = ptr("http://localhost:8080" + tt.checkout + sess.OrderReference)
				}
				if tt.expires != 0 {
					want.ExpiresAt = ptr(b.start.Add(tt.expires).Format(time.RFC3339))
				}
				if tt.payment {
					require.NotNil(t, sess.PaymentReference, "the provider's reference")
					want.PaymentReference = sess.PaymentReference
				}
				require.Equal(t, want, sess)
			})
		})
	}
}

// TestCreate_Idempotency checks which answers a key keeps: a session and a
// business refusal are replayed (and say so); validation, limits and
// service failures are not kept, so the same key works once they are fixed.
func TestCreate_Idempotency(t *testing.T) {
	t.Parallel()
	highlife := func(b *lifecycleBundle) *checkout.Input {
		return b.cart("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 1)
	}
	chalewote := func(b *lifecycleBundle) *checkout.Input {
		return b.cart("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 3)
	}
	tests := []struct {
		name string
		env  string
		// first is the first run's input, refused with code (or created
		// when code is ""), after which fix may change the service.
		first func(*lifecycleBundle) *checkout.Input
		code  apperr.Code
		fix   func(*lifecycleBundle)
		// second is the second run's input under the same key; its answer
		// is replayed when replayed is set.
		second   func(*lifecycleBundle) *checkout.Input
		replayed bool
	}{
		{name: "OKReplayed", env: store.EnvTest, first: highlife, second: highlife, replayed: true},
		{name: "ErrSoldOutReplayed", env: store.EnvTest, code: apperr.SoldOut,
			first: func(b *lifecycleBundle) *checkout.Input {
				return b.cart("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)
			},
			second: func(b *lifecycleBundle) *checkout.Input {
				return b.cart("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)
			},
			replayed: true},
		{name: "ErrValidationFailedNotSaved", env: store.EnvTest, code: apperr.ValidationFailed,
			first: func(b *lifecycleBundle) *checkout.Input {
				in := highlife(b)
				in.Customer.Email = ptr("ama@")
				return in
			},
			second: highlife},
		{name: "ErrFreeOrderLimitReachedNotSaved", env: store.EnvLive, code: apperr.FreeOrderLimitReached,
			first: func(b *lifecycleBundle) *checkout.Input {
				b.svc.Config.FreeDailyAppCap = 2
				return chalewote(b)
			},
			fix:    func(b *lifecycleBundle) { b.svc.Config.FreeDailyAppCap = 10 },
			second: chalewote},
		{name: "ErrPaymentGatewayUnavailableNotSaved", env: store.EnvLive, code: apperr.PaymentGatewayUnavailable,
			first: func(b *lifecycleBundle) *checkout.Input {
				b.svc.Payments = nil
				return highlife(b)
			},
			fix: func(b *lifecycleBundle) {
				b.svc.Payments = devpay.New("http://boxoffice.test", b.db, b.clock.Now)
			},
			second: highlife},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				b := setupLifecycle(t, db)
				first, replayed, err := b.create(tt.env, checkout.Request{Key: "k", Input: tt.first(b)})
				require.False(t, replayed, "a first run")
				if tt.code == "" {
					require.NoError(t, err)
				} else {
					require.Equal(t, tt.code, apperr.CodeOf(err), "%v", err)
				}
				if tt.fix != nil {
					tt.fix(b)
				}

				second, replayed, err2 := b.create(tt.env, checkout.Request{Key: "k", Input: tt.second(b)})
				require.Equal(t, tt.replayed, replayed)
				if !tt.replayed {
					require.NoError(t, err2, "the key was not kept")
					require.NotNil(t, second)
					return
				}
				require.Equal(t, first, second, "the saved session, currency included")
				if err != nil {
					require.Equal(t, apperr.From(err).Code, apperr.From(err2).Code)
					require.Equal(t, apperr.From(err).Message, apperr.From(err2).Message)
				}
			})
		})
	}
}
