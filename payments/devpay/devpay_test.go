package devpay_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

const base = "http://boxoffice.test"

// errRollback ends a transaction the test wants rolled back.
var errRollback = errors.New("roll back")

// start is where every test's clock begins.
var start = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// clock is a fixed clock that a test moves on by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// confirms records what Provider.Confirm receives, and answers err.
type confirms struct {
	mu  sync.Mutex
	got []payments.Status
	err error
}

func (c *confirms) Confirm(_ context.Context, st *payments.Status) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, *st)
	return c.err
}

func (c *confirms) Got() []payments.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]payments.Status(nil), c.got...)
}

// orders makes live orders in db and returns requests for their payments.
type orders struct {
	t   *testing.T
	db  *store.DB
	app *store.App
	cat *storetest.Catalog
}

func newOrders(t *testing.T, db *store.DB) *orders {
	return &orders{t: t, db: db, app: storetest.MustApp(t, db), cat: storetest.MustCatalog(t, db, nil)}
}

// request stores the order ref and returns the request for its payment.
func (o *orders) request(t *testing.T, ref string) payments.Request {
	t.Helper()
	ord := storetest.MustOrder(t, o.db, o.app, o.cat, ref)
	return payments.Request{Reference: ord.Reference, Amount: ord.TotalAmount, Currency: ord.Currency,
		Email: ord.CustomerEmail, CallbackURL: base + "/checkout/" + ord.Reference + "/return"}
}

// row is the payment a request should leave, created at at.
func row(r payments.Request, at time.Time) *store.DevPayment {
	return &store.DevPayment{Reference: r.Reference, Amount: r.Amount, Currency: r.Currency, CallbackURL: r.CallbackURL,
		State: store.DevPaymentPending, RefundOutcome: store.DevRefundsSucceed, CreatedAt: at, UpdatedAt: at}
}

func mustCreate(t *testing.T, p *devpay.Provider, r payments.Request) {
	t.Helper()
	_, err := p.Create(context.Background(), r)
	require.NoError(t, err)
}

func TestName(t *testing.T) {
	t.Parallel()
	t.Run("OKDev", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, "dev", devpay.New(base, nil, time.Now).Name())
	})
}

// TestCreate: Create and CreateTx store a pending payment under the order's
// reference and send the buyer to the page under the base URL.
func TestCreate(t *testing.T) {
	t.Parallel()
	create := func(ctx context.Context, p *devpay.Provider, _ *store.DB, r payments.Request) (*payments.Payment, error) {
		return p.Create(ctx, r)
	}
	createTx := func(ctx context.Context, p *devpay.Provider, db *store.DB, r payments.Request) (*payments.Payment, error) {
		return p.CreateTx(ctx, db, r)
	}
	inTx := func(ctx context.Context, p *devpay.Provider, db *store.DB, r payments.Request) (pay *payments.Payment, err error) {
		txErr := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			pay, err = p.CreateTx(ctx, tx, r)
			return err
		})
		if err == nil {
			err = txErr
		}
		return pay, err
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		o := newOrders(t, db)
		tests := []struct {
			name   string
			base   string
			create func(context.Context, *devpay.Provider, *store.DB, payments.Request) (*payments.Payment, error)
			// taken stores a payment of the reference first.
			taken   bool
			wantURL string // the page, before the reference
			wantErr string // message before the store's error
		}{
			{name: "OKCreate", base: base, create: create, wantURL: base + "/dev-pay/"},
			{name: "OKCreateTrailingSlash", base: base + "/", create: create, wantURL: base + "/dev-pay/"},
			{name: "OKCreateTrailingSlashes", base: base + "//", create: create, wantURL: base + "/dev-pay/"},
			{name: "OKCreateUnderPath", base: "https://tickets.example/box/", create: create, wantURL: "https://tickets.example/box/dev-pay/"},
			{name: "OKCreateTx", base: base, create: createTx, wantURL: base + "/dev-pay/"},
			{name: "OKCreateTxTrailingSlash", base: base + "/", create: createTx, wantURL: base + "/dev-pay/"},
			{name: "OKCreateTxInCommittedTransaction", base: base + "/", create: inTx, wantURL: base + "/dev-pay/"},
			{name: "ErrCreateTaken", base: base, create: create, taken: true,
				wantErr: "devpay: storing payment %s: payments: provider unavailable: "},
			{name: "ErrCreateTxTaken", base: base, create: createTx, taken: true,
				wantErr: "devpay: storing payment %s: payments: provider unavailable: "},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ref := "ord_create_" + tt.name
				r := o.request(t, ref)
				c := &clock{now: start}
				p := devpay.New(tt.base, db, c.Now)
				if tt.taken {
					first := r
					first.Amount = 1
					mustCreate(t, p, first)
					c.Advance(time.Minute)
					pay, err := tt.create(ctx, p, db, r)
					require.ErrorIs(t, err, payments.ErrUnavailable)
					require.ErrorIs(t, err, store.ErrConflict)
					require.ErrorContains(t, err, fmt.Sprintf(tt.wantErr, ref))
					require.Nil(t, pay)
					got, err := store.DevPaymentByReference(ctx, db, ref)
					require.NoError(t, err)
					require.Equal(t, row(first, start), got, "the first payment stands")
					return
				}
				pay, err := tt.create(ctx, p, db, r)
				require.NoError(t, err)
				require.Equal(t, &payments.Payment{Reference: ref, RedirectURL: tt.wantURL + ref}, pay)
				got, err := store.DevPaymentByReference(ctx, db, ref)
				require.NoError(t, err)
				require.Equal(t, row(r, start), got)
			})
		}
	})
}

// TestCreateRolledBack: a payment made in the order's transaction goes
// with it when it rolls back.
func TestCreateRolledBack(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		o := newOrders(t, db)
		tests := []struct {
			name   string
			refs   []string
			create func(ctx context.Context, p *devpay.Provider, tx bun.Tx, rs []payments.Request) error
		}{
			{name: "OKCreateTxLeavesNoPayment", refs: []string{"ord_rb_one"},
				create: func(ctx context.Context, p *devpay.Provider, tx bun.Tx, rs []payments.Request) error {
					_, err := p.CreateTx(ctx, tx, rs[0])
					return err
				}},
			{name: "OKCreateAllTxLeavesNoPayments", refs: []string{"ord_rb_all_a", "ord_rb_all_b"},
				create: func(ctx context.Context, p *devpay.Provider, tx bun.Tx, rs []payments.Request) error {
					_, err := p.CreateAllTx(ctx, tx, rs)
					return err
				}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				var rs []payments.Request
				for _, ref := range tt.refs {
					rs = append(rs, o.request(t, ref))
				}
				p := devpay.New(base, db, (&clock{now: start}).Now)
				err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					require.NoError(t, tt.create(ctx, p, tx, rs))
					for _, ref := range tt.refs {
						_, err := store.DevPaymentByReference(ctx, tx, ref)
						require.NoError(t, err, "visible inside the transaction")
					}
					return errRollback
				})
				require.ErrorIs(t, err, errRollback)
				for _, ref := range tt.refs {
					_, err := p.Payment(ctx, ref)
					require.ErrorIs(t, err, store.ErrNotFound)
					_, err = p.Verify(ctx, ref)
					require.ErrorIs(t, err, store.ErrNotFound)
				}
			})
		}
	})
}

// TestCreateAllTx: the payments of several requests in one statement, in
// the requests' order; a taken reference stores none of them.
func TestCreateAllTx(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		o := newOrders(t, db)
		tests := []struct {
			name string
			refs []string
			// taken is a reference whose payment exists before.
			taken   string
			wantErr string
		}{
			// Out of sorted order, so the answer follows the requests.
			{name: "OKThree", refs: []string{"ord_all3_c", "ord_all3_a", "ord_all3_b"}},
			{name: "OKOne", refs: []string{"ord_all1"}},
			{name: "OKNone"},
			{name: "ErrTaken", refs: []string{"ord_taken_new", "ord_taken_old"}, taken: "ord_taken_old",
				wantErr: "devpay: storing 2 payments: payments: provider unavailable: "},
			{name: "ErrSameReferenceTwice", refs: []string{"ord_twice", "ord_twice"},
				wantErr: "devpay: storing 2 payments: payments: provider unavailable: "},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				c := &clock{now: start}
				p := devpay.New(base+"/", db, c.Now)
				rs := []payments.Request{}
				made := map[string]payments.Request{}
				for _, ref := range tt.refs {
					if _, ok := made[ref]; !ok {
						made[ref] = o.request(t, ref)
					}
					rs = append(rs, made[ref])
				}
				if tt.taken != "" {
					mustCreate(t, p, made[tt.taken])
					c.Advance(time.Minute)
				}
				pays, err := p.CreateAllTx(ctx, db, rs)
				if tt.wantErr != "" {
					require.ErrorIs(t, err, payments.ErrUnavailable)
					require.ErrorIs(t, err, store.ErrConflict)
					require.ErrorContains(t, err, tt.wantErr)
					require.Nil(t, pays)
					for _, ref := range tt.refs {
						got, err := p.Payment(ctx, ref)
						if ref == tt.taken {
							require.NoError(t, err)
							require.Equal(t, row(made[ref], start), got, "the earlier payment stands")
							continue
						}
						require.ErrorIs(t, err, store.ErrNotFound, "none of the batch is stored")
					}
					return
				}
				require.NoError(t, err)
				want := []*payments.Payment{}
				for _, r := range rs {
					want = append(want, &payments.Payment{Reference: r.Reference, RedirectURL: base + "/dev-pay/" + r.Reference})
				}
				require.Equal(t, want, pays)
				for _, r := range rs {
					got, err := store.DevPaymentByReference(ctx, db, r.Reference)
					require.NoError(t, err)
					require.Equal(t, row(r, start), got)
				}
			})
		}
	})
}

// TestVerify: where a payment stands, before and after the buyer decides.
func TestVerify(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		o := newOrders(t, db)
		tests := []struct {
			name      string
			decisions []payments.State
			unknown   bool
			want      payments.State
		}{
			{name: "OKPending", want: payments.Pending},
			{name: "OKPaid", decisions: []payments.State{payments.Paid}, want: payments.Paid},
			{name: "OKDeclined", decisions: []payments.State{payments.Declined}, want: payments.Declined},
			{name: "OKPaidThenDeclinedStaysPaid", decisions: []payments.State{payments.Paid, payments.Declined}, want: payments.Paid},
			{name: "OKDeclinedThenPaidStaysDeclined", decisions: []payments.State{payments.Declined, payments.Paid}, want: payments.Declined},
			{name: "ErrUnknownReference", unknown: true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ref := "ord_verify_" + tt.name
				c := &clock{now: start}
				p := devpay.New(base, db, c.Now)
				if tt.unknown {
					st, err := p.Verify(ctx, ref)
					require.ErrorIs(t, err, store.ErrNotFound)
					require.EqualError(t, err, "devpay: payment "+ref+": "+store.ErrNotFound.Error())
					require.Nil(t, st)
					return
				}
				r := o.request(t, ref)
				mustCreate(t, p, r)
				for _, to := range tt.decisions {
					c.Advance(time.Minute)
					_, err := p.Decide(ctx, ref, to)
					require.NoError(t, err)
				}
				st, err := p.Verify(ctx, ref)
				require.NoError(t, err)
				require.Equal(t, &payments.Status{Reference: ref, State: tt.want, Amount: r.Amount, Currency: r.Currency}, st)
			})
		}
	})
}

// TestDecide: the first decision stands and is confirmed as a provider's
// callback would; a later one changes nothing, and what Confirm receives
// again is the outcome that stands (as a provider's repeated callback).
func TestDecide(t *testing.T) {
	t.Parallel()
	errConfirm := errors.New("checkout is down")
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		o := newOrders(t, db)
		tests := []struct {
			name      string
			decisions []payments.State
			noConfirm bool  // Confirm is nil
			confirm   error // what Confirm answers
			unknown   bool
			want      payments.State
			// wantConfirms is how many times Confirm receives the outcome.
			wantConfirms int
			wantErr      error
			wantMsg      string
		}{
			{name: "OKPaid", decisions: []payments.State{payments.Paid}, want: payments.Paid, wantConfirms: 1},
			{name: "OKDeclined", decisions: []payments.State{payments.Declined}, want: payments.Declined, wantConfirms: 1},
			// Deciding pending leaves it pending, and nothing is confirmed.
			{name: "OKPendingIsNotConfirmed", decisions: []payments.State{payments.Pending}, want: payments.Pending},
			{name: "OKWithoutConfirm", decisions: []payments.State{payments.Paid}, noConfirm: true, want: payments.Paid},
			{name: "OKSecondDecisionChangesNothing", decisions: []payments.State{payments.Paid, payments.Declined},
				want: payments.Paid, wantConfirms: 2},
			{name: "OKSecondDeclineChangesNothing", decisions: []payments.State{payments.Declined, payments.Paid},
				want: payments.Declined, wantConfirms: 2},
			{name: "ErrConfirmFails", decisions: []payments.State{payments.Paid}, confirm: errConfirm,
				want: payments.Paid, wantConfirms: 1, wantErr: errConfirm,
				wantMsg: "devpay: confirming payment ord_decide_ErrConfirmFails: checkout is down"},
			{name: "ErrUnknownReference", decisions: []payments.State{payments.Paid}, unknown: true,
				wantErr: store.ErrNotFound, wantMsg: store.ErrNotFound.Error()},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ref := "ord_decide_" + tt.name
				c := &clock{now: start}
				p := devpay.New(base, db, c.Now)
				conf := &confirms{err: tt.confirm}
				if !tt.noConfirm {
					p.Confirm = conf.Confirm
				}
				if tt.unknown {
					dp, err := p.Decide(ctx, ref, tt.decisions[0])
					require.ErrorIs(t, err, tt.wantErr)
					require.EqualError(t, err, tt.wantMsg)
					require.Nil(t, dp)
					require.Empty(t, conf.Got(), "nothing to confirm")
					_, err = p.Payment(ctx, ref)
					require.ErrorIs(t, err, store.ErrNotFound, "Decide makes no payment")
					return
				}
				r := o.request(t, ref)
				mustCreate(t, p, r)
				require.Empty(t, conf.Got(), "a pending payment is not confirmed")
				decided := start.Add(time.Minute)
				want := row(r, start)
				want.State, want.UpdatedAt = string(tt.want), decided
				for i, to := range tt.decisions {
					c.Advance(time.Minute)
					dp, err := p.Decide(ctx, ref, to)
					if tt.wantErr != nil {
						require.ErrorIs(t, err, tt.wantErr)
						require.EqualError(t, err, tt.wantMsg)
						require.Nil(t, dp)
					} else {
						require.NoError(t, err)
						require.Equal(t, want, dp, "decision %d", i+1)
					}
				}
				got, err := p.Payment(ctx, ref)
				require.NoError(t, err)
				require.Equal(t, want, got, "the first decision stands, at its time")
				var wantGot []payments.Status
				for range tt.wantConfirms {
					wantGot = append(wantGot, payments.Status{Reference: ref, State: tt.want, Amount: r.Amount, Currency: r.Currency})
				}
				require.Equal(t, wantGot, conf.Got())
			})
		}
	})
}

// TestPayment: the payment its page shows.
func TestPayment(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		o := newOrders(t, db)
		tests := []struct {
			name    string
			create  bool
			wantErr error
		}{
			{name: "OKFound", create: true},
			{name: "ErrNotFound", wantErr: store.ErrNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ref := "ord_payment_" + tt.name
				p := devpay.New(base, db, (&clock{now: start}).Now)
				var want *store.DevPayment
				if tt.create {
					r := o.request(t, ref)
					mustCreate(t, p, r)
					want = row(r, start)
				}
				got, err := p.Payment(ctx, ref)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
					require.Nil(t, got)
					return
				}
				require.NoError(t, err)
				require.Equal(t, want, got)
			})
		}
	})
}

// TestParseCallback: the development provider confirms in process, so any
// callback from outside is forged.
func TestParseCallback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		h    http.Header
		body []byte
	}{
		{name: "ErrNothing"},
		{name: "ErrEmpty", h: http.Header{}, body: []byte{}},
		{name: "ErrSignedLikePaystack", h: http.Header{"X-Paystack-Signature": {"3c5d"}, "Content-Type": {"application/json"}},
			body: []byte(`{"event":"charge.success","data":{"reference":"ord_abc","status":"success","amount":15000,"currency":"GHS"}}`)},
		{name: "ErrDevLooking", h: http.Header{"Content-Type": {"application/json"}},
			body: []byte(`{"reference":"ord_abc","state":"paid","amount":15000,"currency":"GHS"}`)},
		{name: "ErrGarbage", body: []byte("\x00not json")},
	}
	p := devpay.New(base, nil, (&clock{now: start}).Now)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := p.ParseCallback(tt.h, tt.body)
			require.ErrorIs(t, err, payments.ErrForged)
			require.EqualError(t, err, "payments: callback signature does not match")
			require.Nil(t, st)
		})
	}
}

// TestRefund: the development provider refunds a paid payment at once, or
// fails it when its page's switch says so, and answers a second request
// for one refund with the first answer, as a real provider does.
func TestRefund(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		o := newOrders(t, db)
		tests := []struct {
			name      string
			pay       bool
			fail      bool
			wantState payments.RefundState
			wantErr   bool
		}{
			{name: "OKSucceeds", pay: true, wantState: payments.RefundSucceeded},
			{name: "OKFailsWhenTold", pay: true, fail: true, wantState: payments.RefundFailed},
			{name: "ErrNotPaid", wantErr: true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ref := "ord_refund_" + tt.name
				p := devpay.New(base, db, (&clock{now: start}).Now)
				r := o.request(t, ref)
				mustCreate(t, p, r)
				if tt.pay {
					_, err := p.Decide(ctx, ref, payments.Paid)
					require.NoError(t, err)
				}
				require.NoError(t, p.FailRefunds(ctx, ref, tt.fail))
				req := payments.RefundRequest{RefundID: "rfd_" + tt.name, PaymentReference: ref, Amount: 500, Currency: r.Currency}
				got, err := p.Refund(ctx, req)
				if tt.wantErr {
					require.Error(t, err)
					require.NotErrorIs(t, err, payments.ErrUnavailable, "a refusal, not an outage")
					list, err := p.RefundsOf(ctx, ref)
					require.NoError(t, err)
					require.Empty(t, list)
					return
				}
				require.NoError(t, err)
				require.Equal(t, tt.wantState, got.State)
				require.Equal(t, req.RefundID, got.RefundID)
				require.Equal(t, int64(500), got.Amount)
				require.Equal(t, tt.fail, got.FailureReason != "")

				// Asked again, even after the switch moved: the first answer.
				require.NoError(t, p.FailRefunds(ctx, ref, !tt.fail))
				again, err := p.Refund(ctx, req)
				require.NoError(t, err)
				require.Equal(t, got, again)
				list, err := p.RefundsOf(ctx, ref)
				require.NoError(t, err)
				require.Equal(t, []payments.RefundResult{*got}, list)
			})
		}
	})
}
