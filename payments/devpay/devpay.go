// Package devpay is a payment provider for development: its "hosted page"
// is served by Boxoffice itself and offers Pay and Decline, so the whole
// live flow (checkout, hosted page, payment, confirmation, webhook) can be
// tried on one machine without a real provider. It is used only when
// PAYMENT_PROVIDER=dev is set explicitly, keeps payments in memory, and
// must never face real buyers.
package devpay

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/go-chi/chi/v5"
)

// Provider is the development payment provider.
type Provider struct {
	base string
	// Confirm receives each outcome, as a real provider's callback would.
	Confirm func(ctx context.Context, st *payments.Status) error

	mu       sync.Mutex
	payments map[string]*entry
}

type entry struct {
	req   payments.Request
	state payments.State
}

// New returns the provider; base is PUBLIC_BASE_URL.
func New(base string) *Provider {
	return &Provider{base: strings.TrimRight(base, "/"), payments: map[string]*entry{}}
}

// Name implements payments.Provider.
func (p *Provider) Name() string { return "dev" }

// Create implements payments.Provider.
func (p *Provider) Create(_ context.Context, r payments.Request) (*payments.Payment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.payments[r.Reference] = &entry{req: r, state: payments.Pending}
	return &payments.Payment{Reference: r.Reference, RedirectURL: p.base + "/dev-pay/" + r.Reference}, nil
}

// Verify implements payments.Provider.
func (p *Provider) Verify(_ context.Context, ref string) (*payments.Status, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.payments[ref]
	if !ok {
		return nil, fmt.Errorf("devpay: no payment %s", ref)
	}
	return &payments.Status{Reference: ref, State: e.state, Amount: e.req.Amount, Currency: e.req.Currency}, nil
}

// ParseCallback implements payments.Provider: the development provider
// confirms in process and accepts no callbacks from outside.
func (p *Provider) ParseCallback(http.Header, []byte) (*payments.Status, error) {
	return nil, payments.ErrForged
}

// Routes serves the provider's page at /dev-pay/{reference}.
func (p *Provider) Routes(r chi.Router) {
	r.Get("/dev-pay/{reference}", p.page)
	r.Post("/dev-pay/{reference}", p.decide)
}

var page = template.Must(template.New("devpay").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Development payment</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;background:#f1f3f8;color:#1d2330;margin:0}
main{max-width:26rem;margin:3rem auto;background:#fff;border-radius:14px;padding:1.5rem;border:1px solid #e3e6ee}
.note{background:#fff4d6;color:#8a5a00;padding:.5rem .75rem;border-radius:8px;font-size:.9rem}
button{width:100%;padding:.8rem;font:inherit;font-weight:600;border-radius:10px;border:1px solid #d0d5df;margin-top:.75rem;cursor:pointer;background:#fff}
button.pay{background:#137a4b;color:#fff;border-color:#137a4b}</style></head>
<body><main><p class="note">Development payment provider — no money moves.</p>
<h1>Pay {{.Currency}} {{.Amount}}</h1><p>Order {{.Reference}}</p>
<form method="post"><button class="pay" name="outcome" value="pay">Pay</button></form>
<form method="post"><button name="outcome" value="decline">Decline</button></form>
</main></body></html>`))

func (p *Provider) page(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	e, ok := p.payments[chi.URLParam(r, "reference")]
	p.mu.Unlock()
	if !ok {
		http.Error(w, "No such development payment.", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, map[string]string{
		"Reference": e.req.Reference, "Currency": e.req.Currency,
		"Amount": catalog.FormatAmount(e.req.Amount),
	})
}

func (p *Provider) decide(w http.ResponseWriter, r *http.Request) {
	ref := chi.URLParam(r, "reference")
	p.mu.Lock()
	e, ok := p.payments[ref]
	if ok && e.state == payments.Pending {
		switch r.PostFormValue("outcome") {
		case "pay":
			e.state = payments.Paid
		case "decline":
			e.state = payments.Declined
		}
	}
	var st payments.Status
	if ok {
		st = payments.Status{Reference: ref, State: e.state, Amount: e.req.Amount, Currency: e.req.Currency}
	}
	p.mu.Unlock()
	if !ok {
		http.Error(w, "No such development payment.", http.StatusNotFound)
		return
	}
	if p.Confirm != nil && st.State != payments.Pending {
		if err := p.Confirm(r.Context(), &st); err != nil {
			http.Error(w, "Could not confirm the payment; try again.", http.StatusInternalServerError)
			return
		}
	}
	http.Redirect(w, r, e.req.CallbackURL, http.StatusSeeOther)
}
