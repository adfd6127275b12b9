package tickets_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

var (
	liveCode = regexp.MustCompile(`^[A-Z2-7]{32}$`)
	testCode = regexp.MustCompile(`^TEST[A-Z2-7]{32}$`)
	ticketID = regexp.MustCompile(`^itk_[a-z2-7]{26}$`)
	token    = regexp.MustCompile(`^[a-z2-7]{32}$`)
)

// baseURL is the tickets service's PUBLIC_BASE_URL, with the trailing
// slash an operator may well write.
const baseURL = "https://tickets.example/"

func ptr[T any](v T) *T { return &v }

// bundle is a tickets service over a fresh database holding the demo
// catalog and app, wired into a real checkout service that issues its
// tickets. The clock stands still at Now.
type bundle struct {
	*checkouttest.Fixture
	svc *tickets.Service

	keys atomic.Int64 // idempotency keys and buyers

	mu sync.Mutex
	// enqueued holds, per order whose email was scheduled, how many of its
	// tickets the scheduling transaction saw.
	enqueued map[int64]int
}

func setup(t *testing.T, db *store.DB) *bundle {
	t.Helper()
	f := checkouttest.MustNew(t, db)
	b := &bundle{Fixture: f, enqueued: map[int64]int{}}
	b.svc = &tickets.Service{DB: db, Now: func() time.Time { return f.Now }, PublicBaseURL: baseURL,
		EnqueueEmail: b.enqueue, Webhooks: f.Service.Webhooks, From: "Boxoffice <tickets@boxoffice.example>"}
	f.Service.Tickets = b.svc
	return b
}

// enqueue stands in for the job runner: it records that the order's email
// was scheduled and what the scheduling transaction could see.
func (b *bundle) enqueue(ctx context.Context, tx bun.Tx, orderID int64) error {
	var n int
	if err := tx.NewSelect().Model((*store.IssuedTicket)(nil)).ColumnExpr("count(*)").
		Where("order_id = ?", orderID).Scan(ctx, &n); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enqueued[orderID] = n
	return nil
}

func (b *bundle) scheduled(orderID int64) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.enqueued[orderID]
	return n, ok
}

// line is qty of a demo ticket, by reference.
type line struct {
	ticket string
	qty    int64
}

// insertOrder stores an order of app in env and status for lines of
// demo tickets of one date, as checkout leaves it before issuing, and
// returns it with its items.
func (b *bundle) insertOrder(t *testing.T, appID int64, env, status, event, date string, lines ...line) (*store.Order, []store.OrderItem) {
	t.Helper()
	ctx := context.Background()
	ids := make([]int64, len(lines))
	for i, l := range lines {
		ids[i] = b.Demo.Catalog.Tickets[l.ticket]
	}
	ts, err := store.TicketsByIDs(ctx, b.DB, ids)
	require.NoError(t, err)
	byID := map[int64]store.Ticket{}
	for _, tk := range ts {
		byID[tk.ID] = tk
	}
	var items []store.OrderItem
	var total int64
	for i, l := range lines {
		tk := byID[ids[i]]
		price := int64(0)
		if tk.Price != nil {
			price = *tk.Price
		}
		items = append(items, store.OrderItem{TicketID: tk.ID, Name: tk.Name, Quantity: l.qty, UnitPrice: price})
		total += price * l.qty
	}
	prefix := checkout.LivePrefix
	if env == store.EnvTest {
		prefix = checkout.SandboxPrefix
	}
	o := &store.Order{
		Reference: prefix + tickets.NewToken(), AppID: appID, Environment: env, Status: status,
		EventID: b.Demo.Catalog.Events[event], EventDateID: b.Demo.Catalog.EventDates[date], Currency: "GHS", TotalAmount: total,
		RequiresPayment: total > 0, CustomerName: "Ama Mensah", CustomerEmail: "ama@example.com", CustomerPhone: "+233241234567",
		SuccessURL: "https://partner.example/ok", CancelURL: "https://partner.example/no",
		TicketsEmailStatus: store.TicketsEmailNotSent, CreatedAt: b.Now, UpdatedAt: b.Now,
	}
	require.NoError(t, store.InsertOrder(ctx, b.DB, o, items))
	return o, items
}

// buy checks out qty of a demo ticket in env through the checkout service
// and, for a cart that waits for payment, settles it paid, as a buyer
// would. It returns the order as the API shows it, tickets included.
func (b *bundle) buy(t *testing.T, env, event, date, ticket string, qty int) *checkout.OrderView {
	t.Helper()
	ctx := context.Background()
	n := b.keys.Add(1)
	caller := checkout.Caller{AppID: b.Demo.App.App.ID, Environment: env}
	sess, _, err := b.Service.Create(ctx, caller, checkout.Request{Key: fmt.Sprintf("tickets-%d", n), Input: &checkout.Input{
		EventID: ptr(b.ID(t, event)), EventdateID: ptr(b.ID(t, date)),
		Items:      []*checkout.Item{{TicketID: ptr(b.ID(t, ticket)), Quantity: ptr(qty)}},
		Customer:   &checkout.Customer{Name: ptr("Ama Mensah"), Email: ptr(fmt.Sprintf("ama%d@example.com", n)), Phone: ptr("0241234567")},
		SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
	}})
	require.NoError(t, err)
	if sess.Status == store.OrderPending {
		_, changed, err := b.Service.Settle(ctx, sess.OrderReference, store.OrderPaid)
		require.NoError(t, err)
		require.True(t, changed)
	}
	return b.view(t, env, sess.OrderReference)
}

// highlife buys qty Regular tickets of the Highlife night (a venue with
// an address) in env.
func (b *bundle) highlife(t *testing.T, env string, qty int) *checkout.OrderView {
	t.Helper()
	return b.buy(t, env, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", qty)
}

func (b *bundle) view(t *testing.T, env, ref string) *checkout.OrderView {
	t.Helper()
	v, err := b.Service.OrderView(context.Background(), checkout.Caller{AppID: b.Demo.App.App.ID, Environment: env}, ref)
	require.NoError(t, err)
	return v
}

func (b *bundle) order(t *testing.T, ref string) *store.Order {
	t.Helper()
	o, err := store.OrderByReference(context.Background(), b.DB, ref)
	require.NoError(t, err)
	return o
}

func (b *bundle) issued(t *testing.T, orderID int64) []store.IssuedTicket {
	t.Helper()
	ts, err := store.IssuedTicketsOfOrder(context.Background(), b.DB, orderID)
	require.NoError(t, err)
	return ts
}

func TestNewCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  string
		form *regexp.Regexp
	}{
		// A door tells a test ticket by its code alone.
		{"OKTest", store.EnvTest, testCode},
		{"OKLive", store.EnvLive, liveCode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seen := map[string]bool{}
			for range 2000 {
				c := tickets.NewCode(tt.env)
				require.Regexp(t, tt.form, c)
				if tt.env == store.EnvLive {
					require.False(t, strings.HasPrefix(c, tickets.TestCodePrefix), "a live code never reads as a test one")
				}
				require.False(t, seen[c], "code repeated")
				seen[c] = true
			}
		})
	}
}

func TestNewToken(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 2000 {
		tok := tickets.NewToken()
		require.Regexp(t, token, tok)
		require.False(t, seen[tok], "token repeated")
		seen[tok] = true
	}
}

func TestURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base, want string
	}{
		{"OK", "https://tickets.example", "https://tickets.example/tickets/abc"},
		{"OKTrailingSlash", "https://tickets.example/", "https://tickets.example/tickets/abc"},
		{"OKTrailingSlashes", "https://tickets.example//", "https://tickets.example/tickets/abc"},
		{"OKUnderAPath", "https://example.com/boxoffice/", "https://example.com/boxoffice/tickets/abc"},
		{"OKLocal", "http://localhost:8080", "http://localhost:8080/tickets/abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, tickets.URL(tt.base, "abc"))
		})
	}
}

// TestIssue: one ticket per admission, in item order, with fresh codes of
// the order's environment, the page token and the email's state, all in
// the transaction that makes the order paid.
func TestIssue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		selfDelivering := storetest.MustApp(t, db)
		require.NoError(t, store.SetTicketEmails(ctx, db, selfDelivering.ID, false, b.Now))
		demoApp := b.Demo.App.App.ID
		// Two ticket types: positions run across the items in their order.
		cart := []line{{"DEMO-HIGHLIFE-VIP", 1}, {"DEMO-HIGHLIFE-REG", 3}}
		names := []string{"VIP table seat", "Regular", "Regular", "Regular"}

		tests := []struct {
			name      string
			app       int64
			env       string
			status    string
			wantEmail string
			wantCode  *regexp.Regexp
		}{
			{"OKLivePaid", demoApp, store.EnvLive, store.OrderPaid, store.TicketsEmailQueued, liveCode},
			{"OKLiveCompleted", demoApp, store.EnvLive, store.OrderCompleted, store.TicketsEmailQueued, liveCode},
			// An app that delivers tickets itself gets no email sent for it.
			{"OKLiveAppDeliversItself", selfDelivering.ID, store.EnvLive, store.OrderPaid, store.TicketsEmailNotSent, liveCode},
			// Test orders never email the buyer.
			{"OKTestPaid", demoApp, store.EnvTest, store.OrderPaid, store.TicketsEmailNotSent, testCode},
		}
		codes := map[string]bool{}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				o, items := b.insertOrder(t, tt.app, tt.env, tt.status, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", cart...)
				var ts []store.IssuedTicket
				require.NoError(t, db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					var err error
					ts, err = b.svc.Issue(ctx, tx, o, items)
					return err
				}))

				require.Len(t, ts, 4, "one ticket per admission")
				for i, tk := range ts {
					require.Positive(t, tk.ID)
					require.Regexp(t, ticketID, tk.PublicID)
					require.Regexp(t, tt.wantCode, tk.Code)
					require.False(t, codes[tk.Code], "codes are unique")
					codes[tk.Code] = true
					require.Equal(t, int64(i+1), tk.Position)
					require.Equal(t, int64(4), tk.TicketsInOrder)
					require.Equal(t, names[i], tk.TicketName)
					require.Equal(t, o.ID, tk.OrderID)
					require.Equal(t, tt.app, tk.AppID)
					require.Equal(t, tt.env, tk.Environment)
					require.Equal(t, o.EventID, tk.EventID)
					require.Equal(t, o.EventDateID, tk.EventDateID)
					require.Equal(t, store.TicketValid, tk.Status)
					require.True(t, b.Now.Equal(tk.CreatedAt))
				}
				require.Equal(t, b.Demo.Catalog.Tickets["DEMO-HIGHLIFE-VIP"], ts[0].TicketID)
				require.Equal(t, b.Demo.Catalog.Tickets["DEMO-HIGHLIFE-REG"], ts[3].TicketID)

				require.NotNil(t, o.TicketsToken, "o receives its page token")
				require.Regexp(t, token, *o.TicketsToken)
				require.Equal(t, tt.wantEmail, o.TicketsEmailStatus)
				stored := b.order(t, o.Reference)
				require.Equal(t, o.TicketsToken, stored.TicketsToken)
				require.Equal(t, tt.wantEmail, stored.TicketsEmailStatus)
				got := b.issued(t, o.ID)
				require.Len(t, got, 4)
				for i := range got {
					require.Equal(t, ts[i].Code, got[i].Code)
				}

				n, queued := b.scheduled(o.ID)
				require.Equal(t, tt.wantEmail == store.TicketsEmailQueued, queued, "the email is scheduled exactly when it is queued")
				if queued {
					require.Equal(t, 4, n, "scheduled in the transaction that issues the tickets")
				}
			})
		}

		errBoom := errors.New("the job table is on fire")
		failing := *b.svc
		failing.EnqueueEmail = func(context.Context, bun.Tx, int64) error { return errBoom }
		errTests := []struct {
			name   string
			svc    *tickets.Service
			status string
			// rollback makes the caller's transaction fail after Issue.
			rollback bool
			// wantErr is the error's text, %s the order's reference.
			wantErr string
			wantIs  error
		}{
			{name: "ErrPending", svc: b.svc, status: store.OrderPending,
				wantErr: "tickets: order %s is pending, not paid or completed"},
			{name: "ErrFailed", svc: b.svc, status: store.OrderFailed,
				wantErr: "tickets: order %s is failed, not paid or completed"},
			{name: "ErrExpired", svc: b.svc, status: store.OrderExpired,
				wantErr: "tickets: order %s is expired, not paid or completed"},
			// The outbox: without its email's job the tickets are not
			// issued either.
			{name: "ErrEnqueueEmail", svc: &failing, status: store.OrderPaid, wantIs: errBoom,
				wantErr: "tickets: enqueue the email of order %s: the job table is on fire"},
			{name: "ErrCallerRollsBack", svc: b.svc, status: store.OrderPaid, rollback: true, wantIs: errBoom,
				wantErr: "the job table is on fire"},
		}
		for _, tt := range errTests {
			t.Run(tt.name, func(t *testing.T) {
				o, items := b.insertOrder(t, demoApp, store.EnvLive, tt.status, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", cart...)
				err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					if _, err := tt.svc.Issue(ctx, tx, o, items); err != nil {
						return err
					}
					if tt.rollback {
						return errBoom
					}
					return nil
				})
				if strings.Contains(tt.wantErr, "%s") {
					require.EqualError(t, err, fmt.Sprintf(tt.wantErr, o.Reference))
				} else {
					require.EqualError(t, err, tt.wantErr)
				}
				if tt.wantIs != nil {
					require.ErrorIs(t, err, tt.wantIs)
				}
				require.Empty(t, b.issued(t, o.ID), "nothing issued")
				stored := b.order(t, o.Reference)
				require.Nil(t, stored.TicketsToken)
				require.Equal(t, store.TicketsEmailNotSent, stored.TicketsEmailStatus)
			})
		}

		// Should a caller issue twice, the unique (order, position) index
		// refuses the second issuance: a buyer never holds two sets.
		t.Run("ErrIssuedTwice", func(t *testing.T) {
			o, items := b.insertOrder(t, demoApp, store.EnvTest, store.OrderPaid, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", cart...)
			issue := func() error {
				return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					_, err := b.svc.Issue(ctx, tx, o, items)
					return err
				})
			}
			require.NoError(t, issue())
			first := b.issued(t, o.ID)
			token := *b.order(t, o.Reference).TicketsToken
			err := issue()
			require.ErrorIs(t, err, store.ErrConflict)
			require.ErrorContains(t, err, "tickets: issue for order "+o.Reference+": ")
			require.Equal(t, first, b.issued(t, o.ID), "the first tickets stand")
			require.Equal(t, token, *b.order(t, o.Reference).TicketsToken, "and so does their page")
		})
	})
}
