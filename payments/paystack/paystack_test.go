package paystack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/paystack"
	"github.com/boxoffice/boxoffice/payments/paystacktest"
)

const secret = "sk_test_0123456789abcdef"

func newProvider(t *testing.T, base string, mod ...func(*paystack.Config)) *paystack.Provider {
	t.Helper()
	cfg := paystack.Config{SecretKey: secret, BaseURL: base}
	for _, m := range mod {
		m(&cfg)
	}
	p, err := paystack.New(cfg)
	require.NoError(t, err)
	return p
}

func request(ref string) payments.Request {
	return payments.Request{
		Reference: ref, Amount: 12550, Currency: "GHS", Email: "ama@example.com",
		CallbackURL: "https://boxoffice.example/checkout/" + ref + "/return",
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  paystack.Config
		ok   bool
	}{
		{"no secret key", paystack.Config{}, false},
		{"blank secret key", paystack.Config{SecretKey: "  "}, false},
		{"default base URL", paystack.Config{SecretKey: secret}, true},
		{"relative base URL", paystack.Config{SecretKey: secret, BaseURL: "api.paystack.co"}, false},
		{"ftp base URL", paystack.Config{SecretKey: secret, BaseURL: "ftp://api.paystack.co"}, false},
		{"trailing slash", paystack.Config{SecretKey: secret, BaseURL: "https://api.paystack.co/"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := paystack.New(tc.cfg)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "paystack", p.Name())
		})
	}
}

func TestSecretKeyIsNeverShown(t *testing.T) {
	cfg := paystack.Config{SecretKey: secret, BaseURL: "https://api.paystack.co"}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "paystack", cfg)
	p, err := paystack.New(cfg)
	require.NoError(t, err)
	for _, s := range []string{
		fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), logged.String(),
		fmt.Sprintf("%v", p), fmt.Sprintf("%+v", p), fmt.Sprintf("%#v", *p),
	} {
		assert.NotContains(t, s, secret)
	}

	// A refusal for a wrong key does not echo the key that was sent.
	s := paystacktest.New(t, "sk_test_other")
	_, err = newProvider(t, s.URL).Create(context.Background(), request("ord_key"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
}

// TestCreateSends checks the exact request against Paystack's documented
// initialize body: integer amount in minor units, Bearer auth, JSON.
func TestCreateSends(t *testing.T) {
	var (
		mu     sync.Mutex
		got    *http.Request
		body   map[string]any
		rawLen int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, rawLen = r, len(raw)
		body = nil
		d := json.NewDecoder(strings.NewReader(string(raw)))
		d.UseNumber()
		_ = d.Decode(&body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":true,"message":"Authorization URL created","data":{"authorization_url":"https://checkout.paystack.com/0peioxfhpn","access_code":"0peioxfhpn","reference":"ord-7h2k"}}`)
	}))
	defer srv.Close()

	pay, err := newProvider(t, srv.URL).Create(context.Background(), request("ord_7h2k"))
	require.NoError(t, err)
	assert.Equal(t, &payments.Payment{Reference: "ord-7h2k", RedirectURL: "https://checkout.paystack.com/0peioxfhpn"}, pay)

	mu.Lock()
	defer mu.Unlock()
	require.NotNil(t, got)
	assert.Positive(t, rawLen)
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "/transaction/initialize", got.URL.Path)
	assert.Equal(t, "Bearer "+secret, got.Header.Get("Authorization"))
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	for _, tc := range []struct {
		field string
		want  any
	}{
		{"email", "ama@example.com"},
		{"amount", json.Number("12550")}, // an integer, in pesewas
		{"currency", "GHS"},
		{"reference", "ord-7h2k"}, // the order reference, made valid for Paystack
		{"callback_url", "https://boxoffice.example/checkout/ord_7h2k/return"},
	} {
		assert.Equal(t, tc.want, body[tc.field], tc.field)
	}
	assert.Len(t, body, 5)
}

func TestCreateAgainstStandIn(t *testing.T) {
	s := paystacktest.New(t, secret)
	p := newProvider(t, s.URL)
	pay, err := p.Create(context.Background(), request("ord_abc234"))
	require.NoError(t, err)
	assert.Equal(t, "ord-abc234", pay.Reference)
	assert.True(t, strings.HasPrefix(pay.RedirectURL, s.URL+"/pay/"), pay.RedirectURL)

	tx, ok := s.Transaction(pay.Reference)
	require.True(t, ok)
	assert.Equal(t, "ama@example.com", tx.Email)
	assert.Equal(t, int64(12550), tx.Amount)
	assert.Equal(t, "GHS", tx.Currency)
	assert.Equal(t, "https://boxoffice.example/checkout/ord_abc234/return", tx.CallbackURL)
	assert.Equal(t, pay.RedirectURL, s.URL+"/pay/"+tx.AccessCode)
	assert.Equal(t, 1, s.Calls())

	// A just-initialized transaction verifies as "abandoned": still pending.
	st, err := p.Verify(context.Background(), pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, &payments.Status{Reference: "ord_abc234", State: payments.Pending, Amount: 12550, Currency: "GHS"}, st)
}

// TestRefusals: 4xx answers and bad requests are refusals, never
// unavailability, and carry Paystack's message.
func TestRefusals(t *testing.T) {
	s := paystacktest.New(t, secret)
	ctx := context.Background()
	_, err := newProvider(t, s.URL).Create(ctx, request("ord_dup"))
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		key    string
		req    payments.Request
		status int    // 0: refused before any call
		msg    string // Paystack's message
	}{
		{"wrong secret key", "sk_test_wrong", request("ord_k1"), 401, "Invalid key"},
		{"duplicate reference", secret, request("ord_dup"), 400, "Duplicate Transaction Reference"},
		{"invalid email", secret, func() payments.Request { r := request("ord_e1"); r.Email = "nobody"; return r }(), 400, "Invalid Email Address Passed"},
		{"no email", secret, func() payments.Request { r := request("ord_e2"); r.Email = ""; return r }(), 0, ""},
		{"zero amount", secret, func() payments.Request { r := request("ord_a1"); r.Amount = 0; return r }(), 0, ""},
		{"no reference", secret, request(""), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := paystack.New(paystack.Config{SecretKey: tc.key, BaseURL: s.URL})
			require.NoError(t, err)
			before := s.Calls()
			_, err = p.Create(ctx, tc.req)
			require.Error(t, err)
			assert.NotErrorIs(t, err, payments.ErrUnavailable)
			if tc.status == 0 {
				assert.Equal(t, before, s.Calls(), "refused without a call")
				return
			}
			var apiErr *paystack.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.status, apiErr.HTTPStatus)
			assert.Equal(t, tc.msg, apiErr.Message)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}

	t.Run("verify unknown reference", func(t *testing.T) {
		_, err := newProvider(t, s.URL).Verify(ctx, "ord-unknown")
		var apiErr *paystack.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatus)
		assert.NotErrorIs(t, err, payments.ErrUnavailable)
	})
	t.Run("status false in a 200", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `{"status":false,"message":"Transaction not allowed"}`)
		}))
		defer srv.Close()
		_, err := newProvider(t, srv.URL).Create(ctx, request("ord_f"))
		var apiErr *paystack.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "Transaction not allowed", apiErr.Message)
		assert.NotErrorIs(t, err, payments.ErrUnavailable)
	})
}

func TestVerifyMapsStatuses(t *testing.T) {
	s := paystacktest.New(t, secret)
	p := newProvider(t, s.URL)
	ctx := context.Background()
	for i, tc := range []struct {
		status string
		want   payments.State
	}{
		{"success", payments.Paid},
		{"failed", payments.Declined},
		{"reversed", payments.Declined},
		{"abandoned", payments.Pending}, // documented as "not completed", not final
		{"ongoing", payments.Pending},
		{"pending", payments.Pending},
		{"processing", payments.Pending},
		{"queued", payments.Pending},
		{"some_future_status", payments.Pending},
	} {
		t.Run(tc.status, func(t *testing.T) {
			ref := fmt.Sprintf("ord_st%d", i)
			r := request(ref)
			r.Amount, r.Currency = int64(1000+i), "ngn"
			pay, err := p.Create(ctx, r)
			require.NoError(t, err)
			s.SetStatus(pay.Reference, tc.status)
			st, err := p.Verify(ctx, pay.Reference)
			require.NoError(t, err)
			assert.Equal(t, &payments.Status{Reference: ref, State: tc.want, Amount: int64(1000 + i), Currency: "NGN"}, st)
			assert.Equal(t, tc.want, paystack.State(tc.status))
		})
	}
}

func TestVerifyAcceptsTheOrderReference(t *testing.T) {
	s := paystacktest.New(t, secret)
	p := newProvider(t, s.URL)
	ctx := context.Background()
	pay, err := p.Create(ctx, request("ord_orderref"))
	require.NoError(t, err)
	s.Approve(pay.Reference)
	for _, ref := range []string{pay.Reference, "ord_orderref"} {
		st, err := p.Verify(ctx, ref)
		require.NoError(t, err, ref)
		assert.Equal(t, "ord_orderref", st.Reference)
		assert.Equal(t, payments.Paid, st.State)
	}
}

func TestVerifyEscapesThePath(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.EscapedPath())
		mu.Unlock()
		ref := strings.TrimPrefix(r.URL.Path, "/transaction/verify/")
		_, _ = fmt.Fprintf(w, `{"status":true,"message":"Verification successful","data":{"status":"success","reference":%q,"amount":5,"currency":"GHS"}}`, ref)
	}))
	defer srv.Close()
	st, err := newProvider(t, srv.URL).Verify(context.Background(), "a/b c?d")
	require.NoError(t, err)
	assert.Equal(t, "a/b c?d", st.Reference)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, paths, 1)
	assert.Equal(t, "/transaction/verify/a=2Fb=20c=3Fd", paths[0])
	assert.NotContains(t, paths[0], "/b", "the reference stays one path segment")
}

func TestReferenceEncoding(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"ord_abc234", "ord-abc234"},
		{"sbx_zz", "sbx-zz"},
		{"plain123", "plain123"},
		{"a.b", "a.b"},
		{"a-b", "a=2Db"},
		{"a=b", "a=3Db"},
		{"a/b c", "a=2Fb=20c"},
		{"é", "=C3=A9"},
	} {
		enc := paystack.EncodeReference(tc.in)
		assert.Equal(t, tc.out, enc, tc.in)
		assert.True(t, paystack.ValidReference(enc), enc)
		assert.Equal(t, tc.in, paystack.DecodeReference(enc), tc.in)
	}
	assert.False(t, paystack.ValidReference("ord_x"))
	assert.False(t, paystack.ValidReference(""))
}

func TestParseCallback(t *testing.T) {
	p := newProvider(t, "https://api.paystack.co")
	tx := paystacktest.Transaction{ID: 1, Reference: "ord-cb1", Amount: 12550, Currency: "GHS", Email: "ama@example.com", Status: "success"}
	success := paystacktest.WebhookBody("charge.success", tx)
	failedTx := tx
	failedTx.Status = "failed"
	failed := paystacktest.WebhookBody("charge.success", failedTx)
	transfer := []byte(`{"event":"transfer.success","data":{"reference":"trf-1","status":"success","amount":100,"currency":"GHS"}}`)
	chargeFailed := []byte(`{"event":"charge.failed","data":{"reference":"ord-cb1","status":"failed","amount":12550,"currency":"GHS"}}`)
	sign := func(b []byte) string { return paystacktest.Sign(secret, b) }
	hdr := func(k, v string) http.Header { return http.Header{k: {v}} }
	tampered := []byte(strings.Replace(string(success), "12550", "1", 1))

	for _, tc := range []struct {
		name   string
		h      http.Header
		body   []byte
		want   *payments.Status
		forged bool
		err    bool
	}{
		{"charge.success", hdr("X-Paystack-Signature", sign(success)), success,
			&payments.Status{Reference: "ord_cb1", State: payments.Paid, Amount: 12550, Currency: "GHS"}, false, false},
		{"lowercase header key", http.Header{"x-paystack-signature": {sign(success)}}, success,
			&payments.Status{Reference: "ord_cb1", State: payments.Paid, Amount: 12550, Currency: "GHS"}, false, false},
		{"charge.success not successful", hdr("X-Paystack-Signature", sign(failed)), failed,
			&payments.Status{Reference: "ord_cb1", State: payments.Declined, Amount: 12550, Currency: "GHS"}, false, false},
		{"other event ignored", hdr("X-Paystack-Signature", sign(transfer)), transfer, nil, false, false},
		{"undocumented charge.failed ignored", hdr("X-Paystack-Signature", sign(chargeFailed)), chargeFailed, nil, false, false},
		{"tampered body", hdr("X-Paystack-Signature", sign(success)), tampered, nil, true, false},
		{"wrong secret", hdr("X-Paystack-Signature", paystacktest.Sign("sk_test_wrong", success)), success, nil, true, false},
		{"missing header", http.Header{}, success, nil, true, false},
		{"empty header", hdr("X-Paystack-Signature", ""), success, nil, true, false},
		{"not hex", hdr("X-Paystack-Signature", "zz"+sign(success)[2:]), success, nil, true, false},
		{"truncated signature", hdr("X-Paystack-Signature", sign(success)[:64]), success, nil, true, false},
		{"sha256-length signature", hdr("X-Paystack-Signature", strings.Repeat("ab", 32)), success, nil, true, false},
		{"signed but malformed", hdr("X-Paystack-Signature", sign([]byte("{"))), []byte("{"), nil, false, true},
		{"signed but no reference", hdr("X-Paystack-Signature", sign([]byte(`{"event":"charge.success","data":{}}`))),
			[]byte(`{"event":"charge.success","data":{}}`), nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := p.ParseCallback(tc.h, tc.body)
			switch {
			case tc.forged:
				require.ErrorIs(t, err, payments.ErrForged)
				assert.Nil(t, st)
			case tc.err:
				require.Error(t, err)
				assert.NotErrorIs(t, err, payments.ErrForged)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.want, st)
			}
		})
	}
}

// receiver is a webhook endpoint that authenticates with the provider, as
// the service's callback handler does.
type receiver struct {
	p  *paystack.Provider
	mu sync.Mutex
	ok []payments.Status
	n  int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	st, err := rc.p.ParseCallback(r.Header, body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.n++
	switch {
	case errors.Is(err, payments.ErrForged):
		http.Error(w, "forged", http.StatusUnauthorized)
	case err != nil:
		http.Error(w, "malformed", http.StatusBadRequest)
	default:
		if st != nil {
			rc.ok = append(rc.ok, *st)
		}
	}
}

func (rc *receiver) got() ([]payments.Status, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]payments.Status(nil), rc.ok...), rc.n
}

func TestHostedPageAndWebhooks(t *testing.T) {
	s := paystacktest.New(t, secret)
	p := newProvider(t, s.URL)
	rc := &receiver{p: p}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	s.SetWebhookURL(hook.URL + "/payments/paystack/callback")
	ctx := context.Background()
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	pay, err := p.Create(ctx, request("ord_web1"))
	require.NoError(t, err)
	res, err := browser.Get(pay.RedirectURL)
	require.NoError(t, err)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(page), "GHS 125.50")

	// Approve: signed charge.success webhook, then a 302 to callback_url.
	res, err = browser.PostForm(pay.RedirectURL, url.Values{"outcome": {"approve"}})
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusFound, res.StatusCode)
	loc, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, "/checkout/ord_web1/return", loc.Path)
	assert.Equal(t, pay.Reference, loc.Query().Get("trxref"))
	assert.Equal(t, pay.Reference, loc.Query().Get("reference"))
	paid := payments.Status{Reference: "ord_web1", State: payments.Paid, Amount: 12550, Currency: "GHS"}
	oks, n := rc.got()
	assert.Equal(t, []payments.Status{paid}, oks)
	assert.Equal(t, 1, n)
	st, err := p.Verify(ctx, pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, paid, *st)

	// Replay: authentic again; forged: refused.
	code, err := s.SendWebhook("charge.success", pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	code, err = s.SendForgedWebhook("charge.success", pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, code)
	oks, n = rc.got()
	assert.Equal(t, []payments.Status{paid, paid}, oks)
	assert.Equal(t, 3, n)

	// A second approve of an ended transaction changes and sends nothing.
	res, err = browser.PostForm(pay.RedirectURL, url.Values{"outcome": {"decline"}})
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusFound, res.StatusCode)
	_, n = rc.got()
	assert.Equal(t, 3, n)

	// Decline: no webhook (Paystack sends none for failed charges), the
	// buyer is redirected, and verification says declined.
	pay2, err := p.Create(ctx, request("ord_web2"))
	require.NoError(t, err)
	res, err = browser.PostForm(pay2.RedirectURL, url.Values{"outcome": {"decline"}})
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusFound, res.StatusCode)
	_, n = rc.got()
	assert.Equal(t, 3, n)
	st, err = p.Verify(ctx, pay2.Reference)
	require.NoError(t, err)
	assert.Equal(t, payments.Declined, st.State)
	// A charge.success about it (the brief's fallback shape) says declined.
	_, err = s.SendWebhook("charge.success", pay2.Reference)
	require.NoError(t, err)
	oks, _ = rc.got()
	assert.Equal(t, payments.Declined, oks[len(oks)-1].State)

	// Approve/Decline without a browser.
	pay3, err := p.Create(ctx, request("ord_web3"))
	require.NoError(t, err)
	s.Approve(pay3.Reference)
	oks, _ = rc.got()
	assert.Equal(t, "ord_web3", oks[len(oks)-1].Reference)
	assert.Len(t, s.Webhooks(), 5)

	res, err = browser.PostForm(pay3.RedirectURL, url.Values{"outcome": {"maybe"}})
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
}

// TestUnavailable: every way of the provider failing wraps ErrUnavailable.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	answer := func(code int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			_, _ = io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	down := paystacktest.New(t, secret)
	down.Down(true)
	slow := paystacktest.New(t, secret)
	slow.Hang(5 * time.Second)
	short := func(c *paystack.Config) { c.HTTPClient = &http.Client{Timeout: 100 * time.Millisecond} }

	for _, tc := range []struct {
		name string
		base string
		mod  []func(*paystack.Config)
	}{
		{"stand-in down (503)", down.URL, nil},
		{"500", answer(500, `{"status":false,"message":"Internal error"}`), nil},
		{"502 html", answer(502, `<html>Bad gateway</html>`), nil},
		{"429", answer(429, `{"status":false,"message":"Too many requests"}`), nil},
		{"malformed 200", answer(200, `{"status":true,"data":`), nil},
		{"200 without data", answer(200, `{"status":true,"message":"ok"}`), nil},
		{"connection refused", closed.URL, nil},
		{"timeout", slow.URL, []func(*paystack.Config){short}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, tc.base, tc.mod...)
			start := time.Now()
			_, err := p.Create(ctx, request("ord_u1"))
			require.ErrorIs(t, err, payments.ErrUnavailable)
			_, err = p.Verify(ctx, "ord-u1")
			require.ErrorIs(t, err, payments.ErrUnavailable)
			assert.Less(t, time.Since(start), 3*time.Second)
		})
	}

	t.Run("verify answered for another reference", func(t *testing.T) {
		base := answer(200, `{"status":true,"data":{"status":"success","reference":"ord-other","amount":1,"currency":"GHS"}}`)
		_, err := newProvider(t, base).Verify(ctx, "ord-mine")
		require.ErrorIs(t, err, payments.ErrUnavailable)
	})

	t.Run("caller cancels: not unavailability", func(t *testing.T) {
		p := newProvider(t, slow.URL)
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := p.Create(cctx, request("ord_c1"))
		require.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, payments.ErrUnavailable)
	})
}

func TestBreaker(t *testing.T) {
	s := paystacktest.New(t, secret)
	const openFor = 300 * time.Millisecond
	p := newProvider(t, s.URL, func(c *paystack.Config) { c.BreakerOpenFor = openFor })
	ctx := context.Background()
	pay, err := p.Create(ctx, request("ord_br"))
	require.NoError(t, err)
	base := s.Calls()

	s.Down(true)
	for i := 1; i <= 5; i++ {
		var err error
		if i%2 == 0 {
			_, err = p.Verify(ctx, pay.Reference)
		} else {
			_, err = p.Create(ctx, request(fmt.Sprintf("ord_br%d", i)))
		}
		require.ErrorIs(t, err, payments.ErrUnavailable, "call %d", i)
		assert.NotErrorIs(t, err, gobreaker.ErrOpenState, "call %d reached Paystack", i)
		assert.Equal(t, base+i, s.Calls(), "call %d reached Paystack", i)
	}

	// Open: the 6th call fails at once without reaching Paystack, even
	// though Paystack is back.
	s.Down(false)
	for _, call := range []func() error{
		func() error { _, err := p.Create(ctx, request("ord_br6")); return err },
		func() error { _, err := p.Verify(ctx, pay.Reference); return err },
	} {
		start := time.Now()
		err := call()
		require.ErrorIs(t, err, payments.ErrUnavailable)
		assert.ErrorIs(t, err, gobreaker.ErrOpenState)
		assert.Less(t, time.Since(start), 50*time.Millisecond)
		assert.Equal(t, base+5, s.Calls(), "an open breaker makes no call")
	}

	// After the open interval a trial call goes through and closes it.
	time.Sleep(openFor + 50*time.Millisecond)
	st, err := p.Verify(ctx, pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, payments.Pending, st.State)
	assert.Equal(t, base+6, s.Calls())
	_, err = p.Create(ctx, request("ord_br7"))
	require.NoError(t, err)
	assert.Equal(t, base+7, s.Calls())
}

func TestBreakerReopensWhenTheTrialFails(t *testing.T) {
	s := paystacktest.New(t, secret)
	const openFor = 200 * time.Millisecond
	p := newProvider(t, s.URL, func(c *paystack.Config) { c.BreakerOpenFor = openFor; c.BreakerFailures = 2 })
	ctx := context.Background()
	s.Down(true)
	for range 2 {
		_, err := p.Verify(ctx, "ord-x")
		require.ErrorIs(t, err, payments.ErrUnavailable)
	}
	_, err := p.Verify(ctx, "ord-x")
	require.ErrorIs(t, err, gobreaker.ErrOpenState)
	assert.Equal(t, 2, s.Calls())

	time.Sleep(openFor + 50*time.Millisecond)
	_, err = p.Verify(ctx, "ord-x") // the trial, still down
	require.ErrorIs(t, err, payments.ErrUnavailable)
	assert.Equal(t, 3, s.Calls())
	_, err = p.Verify(ctx, "ord-x")
	require.ErrorIs(t, err, gobreaker.ErrOpenState)
	assert.Equal(t, 3, s.Calls())
}

func TestBreakerIgnoresRefusals(t *testing.T) {
	s := paystacktest.New(t, secret)
	ctx := context.Background()
	wrong, err := paystack.New(paystack.Config{SecretKey: "sk_test_wrong", BaseURL: s.URL})
	require.NoError(t, err)
	for i := range 10 {
		_, err := wrong.Verify(ctx, "ord-x")
		require.Error(t, err)
		require.NotErrorIs(t, err, payments.ErrUnavailable)
		require.Equal(t, i+1, s.Calls())
	}

	// Failures must be consecutive: a success in between resets the count.
	p := newProvider(t, s.URL)
	pay, err := p.Create(ctx, request("ord_reset"))
	require.NoError(t, err)
	for range 3 {
		for range 4 {
			s.Down(true)
			_, err := p.Verify(ctx, pay.Reference)
			require.ErrorIs(t, err, payments.ErrUnavailable)
		}
		s.Down(false)
		_, err := p.Verify(ctx, pay.Reference)
		require.NoError(t, err)
	}
}

func TestDefaultsAreDocumented(t *testing.T) {
	assert.Equal(t, "https://api.paystack.co", paystack.DefaultBaseURL)
	assert.Equal(t, 10*time.Second, paystack.DefaultTimeout)
	assert.Equal(t, uint32(5), uint32(paystack.DefaultBreakerFailures))
	assert.Equal(t, 30*time.Second, paystack.DefaultBreakerOpenFor)
}
