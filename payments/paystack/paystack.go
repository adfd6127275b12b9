// Package paystack is the payments.Provider for Paystack
// (https://paystack.com/docs/api/), using its redirect flow:
//
//   - Create initializes a transaction (POST /transaction/initialize) and
//     returns the authorization_url the buyer pays at;
//   - Verify asks where a transaction stands
//     (GET /transaction/verify/{reference});
//   - ParseCallback authenticates a webhook by its x-paystack-signature
//     header (HMAC-SHA512 of the raw body, keyed with the secret key);
//   - Refund returns money (POST /refund, the service's refund id as the
//     merchant note), RefundsOf lists a transaction's refunds
//     (GET /refund?reference=…), and ParseRefundCallback reads the
//     refund.* webhooks (refund.go).
//
// Create and Verify run behind a circuit breaker: after a run of
// unavailability failures (network errors, timeouts, 5xx, malformed
// answers) calls fail at once with an error wrapping
// payments.ErrUnavailable until the breaker's open interval has passed,
// so checkout answers 503 at once instead of waiting on a dead provider.
// Refusals (4xx, status false) never count against the breaker.
//
// Paystack only accepts letters, digits, '-', '.' and '=' in a
// transaction reference, and Boxoffice order references contain '_'
// ("ord_…"). The provider therefore sends a reversible encoding of the
// order reference ('_' becomes '-'; '-', '=' and any other character not
// allowed become "=XX" hex escapes, so "ord_abc" is sent as "ord-abc").
// payments.Payment.Reference is the Paystack reference; every
// payments.Status carries the order reference again.
//
// The secret key is never logged and never part of an error.
package paystack

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/sony/gobreaker/v2"
)

// Defaults of Config.
const (
	DefaultBaseURL         = "https://api.paystack.co"
	DefaultTimeout         = 10 * time.Second
	DefaultBreakerFailures = 5
	DefaultBreakerOpenFor  = 30 * time.Second
)

// SignatureHeader is the header carrying a webhook's signature.
const SignatureHeader = "X-Paystack-Signature"

// maxResponse bounds how much of an API response is read.
const maxResponse = 1 << 20

// Config configures a Provider.
type Config struct {
	// SecretKey is the integration's secret key (sk_live_… or sk_test_…);
	// required. It authenticates API calls and keys webhook signatures.
	SecretKey string
	// BaseURL is the API's address; DefaultBaseURL when empty.
	BaseURL string
	// HTTPClient makes the API calls; a client with a DefaultTimeout
	// timeout when nil.
	HTTPClient *http.Client
	// BreakerFailures is how many consecutive unavailability failures of
	// Create/Verify open the circuit breaker; DefaultBreakerFailures when 0.
	BreakerFailures uint32
	// BreakerOpenFor is how long the breaker stays open before it lets a
	// trial call through; DefaultBreakerOpenFor when 0.
	BreakerOpenFor time.Duration
}

// String describes the configuration without the secret key.
func (c Config) String() string {
	return fmt.Sprintf("paystack.Config{SecretKey: %s, BaseURL: %q, BreakerFailures: %d, BreakerOpenFor: %s}",
		redacted(c.SecretKey), c.BaseURL, c.BreakerFailures, c.BreakerOpenFor)
}

// GoString is String, so %#v does not print the secret key either.
func (c Config) GoString() string { return c.String() }

// LogValue keeps the secret key out of structured logs.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("secret_key", redacted(c.SecretKey)),
		slog.String("base_url", c.BaseURL),
		slog.Any("breaker_failures", c.BreakerFailures),
		slog.Duration("breaker_open_for", c.BreakerOpenFor),
	)
}

func redacted(s string) string {
	if s == "" {
		return "(empty)"
	}
	return "[REDACTED]"
}

// credentials holds the secret key behind a pointer, so that printing a
// Provider (even with %+v or %#v) shows an address, not the key.
type credentials struct{ key string }

// Provider is the Paystack payments.Provider. It is safe for concurrent use.
type Provider struct {
	cred    *credentials
	base    string
	client  *http.Client
	breaker *gobreaker.CircuitBreaker[struct{}]
}

var _ payments.Provider = (*Provider)(nil)

// New returns a Provider. It fails when the secret key is empty or the
// base URL is not an absolute http(s) URL.
func New(cfg Config) (*Provider, error) {
	if strings.TrimSpace(cfg.SecretKey) == "" {
		return nil, errors.New("paystack: a secret key is required")
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("paystack: base URL %q is not an absolute http(s) URL", cfg.BaseURL)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	failures := cfg.BreakerFailures
	if failures == 0 {
		failures = DefaultBreakerFailures
	}
	openFor := cfg.BreakerOpenFor
	if openFor <= 0 {
		openFor = DefaultBreakerOpenFor
	}
	return &Provider{
		cred:   &credentials{key: cfg.SecretKey},
		base:   base,
		client: client,
		breaker: gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
			Name:        "paystack",
			MaxRequests: 1, // one trial call when half-open
			Timeout:     openFor,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
			// Only the provider failing counts; refusals and the caller
			// giving up are answers, not outages.
			IsSuccessful: func(err error) bool { return !errors.Is(err, payments.ErrUnavailable) },
		}),
	}, nil
}

// Name implements payments.Provider.
func (p *Provider) Name() string { return "paystack" }

// APIError is a refusal by Paystack: a 4xx answer, or an answer with
// status false. It does not wrap payments.ErrUnavailable.
type APIError struct {
	// HTTPStatus is the HTTP status code of the answer.
	HTTPStatus int
	// Message is Paystack's message.
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("refused by Paystack (HTTP %d): %s", e.HTTPStatus, e.Message)
}

type initializeRequest struct {
	Email       string `json:"email"`
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency,omitempty"`
	Reference   string `json:"reference"`
	CallbackURL string `json:"callback_url,omitempty"`
}

type initializeData struct {
	AuthorizationURL string `json:"authorization_url"`
	AccessCode       string `json:"access_code"`
	Reference        string `json:"reference"`
}

type transaction struct {
	Status    string `json:"status"`
	Reference string `json:"reference"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

type envelope[T any] struct {
	Status  bool   `json:"status"`
	Message string `json:"message"`
	Data    T      `json:"data"`
}

// Create implements payments.Provider: it initializes a transaction for
// r.Amount minor units (pesewas for GHS, kobo for NGN) of r.Currency.
func (p *Provider) Create(ctx context.Context, r payments.Request) (*payments.Payment, error) {
	switch {
	case r.Reference == "":
		return nil, errors.New("paystack: a payment needs a reference")
	case r.Amount <= 0:
		return nil, fmt.Errorf("paystack: payment %s: amount %d is not positive", r.Reference, r.Amount)
	case strings.TrimSpace(r.Email) == "":
		return nil, fmt.Errorf("paystack: payment %s: an email address is required", r.Reference)
	}
	body, err := json.Marshal(initializeRequest{
		Email:       r.Email,
		Amount:      r.Amount,
		Currency:    strings.ToUpper(r.Currency),
		Reference:   EncodeReference(r.Reference),
		CallbackURL: r.CallbackURL,
	})
	if err != nil {
		return nil, fmt.Errorf("paystack: payment %s: %w", r.Reference, err)
	}
	d, err := execute(p, func() (initializeData, error) {
		d, err := call[initializeData](ctx, p, http.MethodPost, "/transaction/initialize", body)
		if err == nil && (d.AuthorizationURL == "" || d.Reference == "") {
			err = unavailable("initialize answered without authorization_url or reference")
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("paystack: create payment %s: %w", r.Reference, err)
	}
	return &payments.Payment{Reference: d.Reference, RedirectURL: d.AuthorizationURL}, nil
}

// Verify implements payments.Provider. reference is the Paystack reference
// (payments.Payment.Reference); an order reference is accepted too and
// encoded as Create encodes it. The Status carries the order reference.
func (p *Provider) Verify(ctx context.Context, reference string) (*payments.Status, error) {
	if reference == "" {
		return nil, errors.New("paystack: verify needs a reference")
	}
	ref := reference
	if !ValidReference(ref) {
		ref = EncodeReference(ref)
	}
	tx, err := execute(p, func() (transaction, error) {
		tx, err := call[transaction](ctx, p, http.MethodGet, "/transaction/verify/"+url.PathEscape(ref), nil)
		if err == nil && tx.Reference != ref {
			err = unavailable(fmt.Sprintf("verify of %q answered for reference %q", ref, tx.Reference))
		}
		return tx, err
	})
	if err != nil {
		return nil, fmt.Errorf("paystack: verify payment %s: %w", reference, err)
	}
	return &payments.Status{
		Reference: DecodeReference(tx.Reference),
		State:     State(tx.Status),
		Amount:    tx.Amount,
		Currency:  strings.ToUpper(tx.Currency),
	}, nil
}

// State maps a Paystack transaction status to a payment state:
// "success" is Paid; "failed" and "reversed" are Declined; anything else
// ("abandoned", "ongoing", "pending", "processing", "queued", or a status
// Paystack adds later) is Pending.
//
// "abandoned" is Pending, not Declined: Paystack documents it as "the
// customer has not completed the transaction", which is also what a
// transaction that was just initialized reports while the buyer is still
// on the payment page. The order's own expiry ends it if the buyer never
// pays.
func State(status string) payments.State {
	switch strings.ToLower(status) {
	case "success":
		return payments.Paid
	case "failed", "reversed":
		return payments.Declined
	}
	return payments.Pending
}

// ParseCallback implements payments.Provider for Paystack's webhooks.
// The x-paystack-signature header must be the hex HMAC-SHA512 of body keyed
// with the secret key, or the error wraps payments.ErrForged. A
// "charge.success" event reports the payment in its data (its data.status
// mapped by State); Paystack sends no event for failed charges, and every
// other event returns (nil, nil).
func (p *Provider) ParseCallback(h http.Header, body []byte) (*payments.Status, error) {
	if err := p.authentic(h, body); err != nil {
		return nil, err
	}
	var ev struct {
		Event string      `json:"event"`
		Data  transaction `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("paystack: webhook: malformed body: %w", err)
	}
	if ev.Event != "charge.success" {
		return nil, nil
	}
	if ev.Data.Reference == "" {
		return nil, errors.New("paystack: webhook: charge.success without a reference")
	}
	return &payments.Status{
		Reference: DecodeReference(ev.Data.Reference),
		State:     State(ev.Data.Status),
		Amount:    ev.Data.Amount,
		Currency:  strings.ToUpper(ev.Data.Currency),
	}, nil
}

func (p *Provider) sign(body []byte) []byte {
	m := hmac.New(sha512.New, []byte(p.cred.key))
	m.Write(body)
	return m.Sum(nil)
}

// header is h.Get(name), also finding a key that was not canonicalized.
func header(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// execute runs fn behind the breaker; an open breaker is unavailability.
func execute[T any](p *Provider, fn func() (T, error)) (T, error) {
	var out T
	_, err := p.breaker.Execute(func() (struct{}, error) {
		var err error
		out, err = fn()
		return struct{}{}, err
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return out, fmt.Errorf("%w (circuit breaker: %w)", payments.ErrUnavailable, err)
	}
	return out, err
}

func unavailable(what string) error {
	return fmt.Errorf("%w: %s", payments.ErrUnavailable, what)
}

// call makes one API call and returns the data of a successful answer.
// Network errors, timeouts, 408, 429, 5xx and unreadable answers wrap
// payments.ErrUnavailable; other 4xx and status false are *APIError.
func call[T any](ctx context.Context, p *Provider, method, path string, body []byte) (T, error) {
	var zero T
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return zero, fmt.Errorf("paystack: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+p.cred.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := p.client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			// The caller gave up: not the provider's failure.
			return zero, fmt.Errorf("paystack: %s %s: %w", method, path, ctx.Err())
		}
		return zero, fmt.Errorf("%w: %s %s: %w", payments.ErrUnavailable, method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if err != nil {
		return zero, fmt.Errorf("%w: %s %s: reading the answer: %w", payments.ErrUnavailable, method, path, err)
	}
	code := res.StatusCode
	if code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout {
		return zero, fmt.Errorf("%w: %s %s: HTTP %d", payments.ErrUnavailable, method, path, code)
	}
	if code >= 400 {
		var e envelope[json.RawMessage]
		msg := http.StatusText(code)
		if json.Unmarshal(raw, &e) == nil && e.Message != "" {
			msg = e.Message
		}
		return zero, &APIError{HTTPStatus: code, Message: msg}
	}
	if code < 200 || code > 299 {
		return zero, fmt.Errorf("%w: %s %s: unexpected HTTP %d", payments.ErrUnavailable, method, path, code)
	}
	var e envelope[T]
	if err := json.Unmarshal(raw, &e); err != nil {
		return zero, fmt.Errorf("%w: %s %s: malformed answer: %w", payments.ErrUnavailable, method, path, err)
	}
	if !e.Status {
		return zero, &APIError{HTTPStatus: code, Message: e.Message}
	}
	return e.Data, nil
}

// ValidReference reports whether ref is a valid Paystack transaction
// reference: non-empty, only letters, digits, '-', '.' and '='.
func ValidReference(ref string) bool {
	if ref == "" {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; !isAlnum(c) && c != '-' && c != '.' && c != '=' {
			return false
		}
	}
	return true
}

// EncodeReference turns an order reference into a valid Paystack
// reference: letters, digits and '.' stay, '_' becomes '-', and every
// other byte (including '-' and '=') becomes "=XX" (uppercase hex).
// DecodeReference reverses it.
func EncodeReference(ref string) string {
	var b strings.Builder
	for i := 0; i < len(ref); i++ {
		switch c := ref[i]; {
		case isAlnum(c) || c == '.':
			b.WriteByte(c)
		case c == '_':
			b.WriteByte('-')
		default:
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	return b.String()
}

// DecodeReference reverses EncodeReference.
func DecodeReference(ref string) string {
	var b strings.Builder
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case c == '-':
			b.WriteByte('_')
		case c == '=' && i+2 < len(ref):
			if v, err := hex.DecodeString(ref[i+1 : i+3]); err == nil {
				b.WriteByte(v[0])
				i += 2
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
