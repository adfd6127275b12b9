// Package devpay is a payment provider for development: its "hosted page"
// is served by Boxoffice itself and offers Pay and Decline, so the whole
// live flow (checkout, hosted page, payment, confirmation, webhook) can be
// tried on one machine without a real provider. It is used only when
// PAYMENT_PROVIDER=dev is set explicitly and must never face real buyers:
// anyone who opens its page can mark a live order paid, and no money
// moves. Its payments live in the database (dev_payments), so a pending
// order can still be paid after a restart or through another instance.
package devpay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
	"github.com/uptrace/bun"
)

// Warning is what serve logs at start-up while this provider is in use.
const Warning = "PAYMENT_PROVIDER=dev: live payments go to the development payment provider, which is NOT a real " +
	"payment provider: no money moves and anyone who opens its page can mark a live order paid. Never use it in production."

// Provider is the development payment provider.
type Provider struct {
	base string
	db   *store.DB
	now  func() time.Time
	log  *slog.Logger
	// Confirm receives each outcome, as a real provider's callback would.
	Confirm func(ctx context.Context, st *payments.Status) error
}

// New returns the provider; base is PUBLIC_BASE_URL, and payments are kept
// in db.
func New(base string, db *store.DB, now func() time.Time, log *slog.Logger) *Provider {
	return &Provider{base: strings.TrimRight(base, "/"), db: db, now: now, log: log}
}

// Name implements payments.Provider.
func (p *Provider) Name() string { return "dev" }

// Create implements payments.Provider. Errors wrap payments.ErrUnavailable
// when the payment cannot be stored.
func (p *Provider) Create(ctx context.Context, r payments.Request) (*payments.Payment, error) {
	return p.CreateTx(ctx, p.db, r)
}

// CreateTx implements payments.InTx: the payment is a row of the service's
// own database, written in db, the order's transaction.
func (p *Provider) CreateTx(ctx context.Context, db bun.IDB, r payments.Request) (*payments.Payment, error) {
	now := p.now()
	dp := p.row(r, now)
	if err := store.InsertDevPayment(ctx, db, &dp); err != nil {
		return nil, fmt.Errorf("devpay: storing payment %s: %w: %w", r.Reference, payments.ErrUnavailable, err)
	}
	return p.payment(r), nil
}

// CreateAllTx implements payments.InTx: the rows in one statement.
func (p *Provider) CreateAllTx(ctx context.Context, db bun.IDB, rs []payments.Request) ([]*payments.Payment, error) {
	now := p.now()
	rows := make([]store.DevPayment, len(rs))
	out := make([]*payments.Payment, len(rs))
	for i, r := range rs {
		rows[i], out[i] = p.row(r, now), p.payment(r)
	}
	if err := store.InsertDevPayments(ctx, db, rows); err != nil {
		return nil, fmt.Errorf("devpay: storing %d payments: %w: %w", len(rs), payments.ErrUnavailable, err)
	}
	return out, nil
}

func (p *Provider) row(r payments.Request, now time.Time) store.DevPayment {
	return store.DevPayment{Reference: r.Reference, Amount: r.Amount, Currency: r.Currency,
		CallbackURL: r.CallbackURL, State: string(payments.Pending), CreatedAt: now, UpdatedAt: now}
}

func (p *Provider) payment(r payments.Request) *payments.Payment {
	return &payments.Payment{Reference: r.Reference, RedirectURL: p.base + "/dev-pay/" + r.Reference}
}

// Verify implements payments.Provider.
func (p *Provider) Verify(ctx context.Context, ref string) (*payments.Status, error) {
	dp, err := store.DevPaymentByReference(ctx, p.db, ref)
	if err != nil {
		return nil, fmt.Errorf("devpay: payment %s: %w", ref, err)
	}
	return status(dp), nil
}

func status(dp *store.DevPayment) *payments.Status {
	return &payments.Status{Reference: dp.Reference, State: payments.State(dp.State), Amount: dp.Amount, Currency: dp.Currency}
}

// ParseCallback implements payments.Provider: the development provider
// confirms in process and accepts no callbacks from outside.
func (p *Provider) ParseCallback(http.Header, []byte) (*payments.Status, error) {
	return nil, payments.ErrForged
}

// Routes serves the provider's page at /dev-pay/{reference}. Its forms
// refuse posts from other sites: otherwise any page a developer visits
// could mark their live orders paid.
func (p *Provider) Routes(r chi.Router) {
	r.Get("/dev-pay/{reference}", p.page)
	r.With(webpage.RefuseCrossSite).Post("/dev-pay/{reference}", p.decide)
}

var page = webpage.NewPage("devpay", `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Development payment</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;background:#f1f3f8;color:#1d2330;margin:0}
main{max-width:26rem;margin:3rem auto;background:#fff;border-radius:14px;padding:1.5rem;border:1px solid #e3e6ee}
.note{background:#fff4d6;color:#8a5a00;padding:.5rem .75rem;border-radius:8px;font-size:.9rem}
button{width:100%;padding:.8rem;font:inherit;font-weight:600;border-radius:10px;border:1px solid #d0d5df;margin-top:.75rem;cursor:pointer;background:#fff}
button.pay{background:#137a4b;color:#fff;border-color:#137a4b}</style></head>
<body><main><p class="note">Development payment provider — no money moves. Never used in production.</p>
<h1>Pay {{.Currency}} {{.Amount}}</h1><p>Order {{.Reference}}</p>
{{if .Pending}}
<form method="post"><button class="pay" name="outcome" value="pay">Pay</button></form>
<form method="post"><button name="outcome" value="decline">Decline</button></form>
{{else}}
<p>This payment is {{.State}}. <a href="{{.Back}}">Back to the checkout</a>.</p>
{{end}}
</main></body></html>`, "img-src data:")

// load returns the payment of the request's reference, or answers 404.
func (p *Provider) load(w http.ResponseWriter, r *http.Request) (*store.DevPayment, bool) {
	ref := chi.URLParam(r, "reference")
	// A payment's reference is its order's: anything else is a 404 without
	// a query.
	if !store.PlausibleReference(ref) {
		webpage.NotFound(w, "There is no development payment with this reference.")
		return nil, false
	}
	dp, err := store.DevPaymentByReference(r.Context(), p.db, ref)
	if errors.Is(err, store.ErrNotFound) {
		webpage.NotFound(w, "There is no development payment with this reference.")
		return nil, false
	}
	if err != nil {
		webpage.Fail(w, r, p.log, "development payment", err)
		return nil, false
	}
	return dp, true
}

func (p *Provider) page(w http.ResponseWriter, r *http.Request) {
	dp, ok := p.load(w, r)
	if !ok {
		return
	}
	err := page.Render(w, http.StatusOK, map[string]any{
		"Reference": dp.Reference, "Currency": dp.Currency, "Amount": catalog.FormatAmount(dp.Amount),
		"Pending": dp.State == string(payments.Pending), "State": dp.State, "Back": dp.CallbackURL,
	}, webpage.FormAction(dp.CallbackURL))
	if err != nil {
		p.log.ErrorContext(r.Context(), "development payment page", "error", err)
	}
}

// decide applies Pay or Decline once (a later decision, from this page or
// another instance's, changes nothing), confirms the outcome with checkout
// as a provider's callback would, and returns the buyer to the service.
func (p *Provider) decide(w http.ResponseWriter, r *http.Request) {
	dp, ok := p.load(w, r)
	if !ok {
		return
	}
	var to payments.State
	switch r.PostFormValue("outcome") {
	case "pay":
		to = payments.Paid
	case "decline":
		to = payments.Declined
	default:
		webpage.Message(w, http.StatusBadRequest, "Choose Pay or Decline", "Choose one of the buttons on the development payment page.")
		return
	}
	dp, err := store.DecideDevPayment(r.Context(), p.db, dp.Reference, string(to), p.now())
	if err != nil {
		webpage.Fail(w, r, p.log, "development payment", err)
		return
	}
	if p.Confirm != nil && dp.State != string(payments.Pending) {
		if err := p.Confirm(r.Context(), status(dp)); err != nil {
			webpage.Fail(w, r, p.log, "development payment confirmation", err)
			return
		}
	}
	http.Redirect(w, r, dp.CallbackURL, http.StatusSeeOther)
}
