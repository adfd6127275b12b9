// Package paystacktest is a local stand-in for the Paystack API, for tests
// (which have no internet). It follows Paystack's public documentation
// (https://paystack.com/docs/api/transaction/,
// https://paystack.com/docs/payments/verify-payments/,
// https://paystack.com/docs/payments/webhooks/):
//
//   - POST /transaction/initialize (Bearer secret key, JSON body with email,
//     integer amount in minor units, currency, reference, callback_url)
//     answers {status, message, data: {authorization_url, access_code,
//     reference}}; the authorization_url is this server's hosted page;
//
//   - GET /transaction/verify/{reference} answers the transaction, its
//     data.status one of abandoned (just initialized), success, failed, or
//     whatever SetStatus set;
//
//   - GET /pay/{access_code} is the hosted payment page; POST
//     /pay/{access_code} with outcome=approve|decline settles the
//     transaction, sends a signed charge.success webhook to the URL given to
//     SetWebhookURL when approved, and redirects (302) the buyer to the
//     transaction's callback_url with ?trxref=<ref>&reference=<ref>.
//
//   - POST /refund (transaction reference, integer amount in subunits,
//     merchant_note) queues a refund of a successful transaction and
//     answers it "pending"; GET /refund?reference=… lists a
//     transaction's refunds; ProcessRefunds ends the queued ones
//     ("processed" or "failed") and sends their refund.processed or
//     refund.failed webhooks; LoseRefundAnswers makes the next POST
//     /refund queue its refund and answer 500 anyway, as a provider whose
//     answer is lost on the way.
//
// As Paystack documents, only successful charges raise a webhook: a
// declined payment is learned by verifying it. Webhooks are delivered
// synchronously, before the redirect, so a test sees their effect at once.
//
// A Server is safe for concurrent use.
package paystacktest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Transaction is a transaction as the stand-in stores it: the fields the
// client sent to /transaction/initialize, and where it stands.
type Transaction struct {
	ID          int64
	Reference   string
	AccessCode  string
	Email       string
	Amount      int64
	Currency    string
	CallbackURL string
	// Status is Paystack's data.status: "abandoned" until the buyer acts,
	// then "success" or "failed" (or what SetStatus set).
	Status          string
	GatewayResponse string
	CreatedAt       time.Time
	PaidAt          time.Time
}

// Delivery is one webhook the stand-in sent.
type Delivery struct {
	Event     string
	Reference string
	// Forged is true for SendForgedWebhook.
	Forged bool
	// StatusCode is the receiver's answer (0 when the request failed).
	StatusCode int
	Err        error
}

// Server is the stand-in Paystack.
type Server struct {
	// URL is the API's base URL, for paystack.Config.BaseURL.
	URL string

	t      testing.TB
	secret string
	srv    *httptest.Server
	client *http.Client

	mu         sync.Mutex
	txns       map[string]*Transaction // by reference
	codes      map[string]string       // access code → reference
	webhookURL string
	down       bool
	hang       time.Duration
	calls      int
	deliveries []Delivery
	lastID     int64
	refunds    []*Refund
	// lose is how many of the next POST /refund answer 500 after
	// queueing their refund.
	lose int
}

// Refund is a refund as the stand-in stores it.
type Refund struct {
	ID int64
	// Transaction is the refunded transaction's reference.
	Transaction  string
	Amount       int64
	Currency     string
	MerchantNote string
	// Status is "pending" until ProcessRefunds, then "processed" or
	// "failed".
	Status string
}

// DefaultCurrency is the integration currency a transaction gets when
// initialize is sent no currency.
const DefaultCurrency = "NGN"

// New starts a stand-in that accepts secret as the secret key; it is
// closed when the test ends.
func New(t testing.TB, secret string) *Server {
	t.Helper()
	s := &Server{
		t:      t,
		secret: secret,
		client: &http.Client{Timeout: 10 * time.Second},
		txns:   map[string]*Transaction{},
		codes:  map[string]string{},
		lastID: 4099260000,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /transaction/initialize", s.api(s.initialize))
	mux.HandleFunc("GET /transaction/verify/{reference}", s.api(s.verify))
	mux.HandleFunc("POST /refund", s.api(s.createRefund))
	mux.HandleFunc("GET /refund", s.api(s.listRefunds))
	mux.HandleFunc("/transaction/", s.api(func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusNotFound, false, "Route not found", nil)
	}))
	mux.HandleFunc("GET /pay/{code}", s.page)
	mux.HandleFunc("POST /pay/{code}", s.decide)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close stops the server; New arranges it for the end of the test.
func (s *Server) Close() { s.srv.Close() }

// SetWebhookURL sets where webhooks go ("" sends none).
func (s *Server) SetWebhookURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhookURL = u
}

// Down makes every API call answer 503 (true) or work again (false).
// The hosted page keeps working.
func (s *Server) Down(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Hang delays every API answer by d (0 stops it), or until the client
// gives up, to simulate a provider that does not answer in time.
func (s *Server) Hang(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = d
}

// Calls is how many API calls (initialize, verify, any other API route)
// reached the server, whatever their answer.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Transaction returns the stored transaction of a Paystack reference.
func (s *Server) Transaction(reference string) (Transaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, ok := s.txns[reference]
	if !ok {
		return Transaction{}, false
	}
	return *tx, true
}

// Transactions returns every stored transaction.
func (s *Server) Transactions() []Transaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Transaction, 0, len(s.txns))
	for _, tx := range s.txns {
		out = append(out, *tx)
	}
	return out
}

// Webhooks returns the webhooks sent so far, oldest first.
func (s *Server) Webhooks() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

// SetStatus sets a transaction's data.status as verify reports it (any
// string: "ongoing", "queued", "reversed", …), without a webhook.
func (s *Server) SetStatus(reference, status string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, ok := s.txns[reference]
	if !ok {
		s.t.Errorf("paystacktest: SetStatus: no transaction %q", reference)
		return
	}
	tx.Status = status
	if status == "success" && tx.PaidAt.IsZero() {
		tx.PaidAt = time.Now().UTC()
	}
}

// Approve pays a transaction as the hosted page's approve does: it
// becomes "success" and a signed charge.success webhook is sent. A
// transaction that already ended is left as it is, and sends nothing.
func (s *Server) Approve(reference string) {
	s.t.Helper()
	if err := s.settle(reference, true); err != nil {
		s.t.Errorf("paystacktest: Approve: %v", err)
	}
}

// Decline fails a transaction as the hosted page's decline does: it
// becomes "failed". Paystack sends no webhook for a failed charge.
func (s *Server) Decline(reference string) {
	s.t.Helper()
	if err := s.settle(reference, false); err != nil {
		s.t.Errorf("paystacktest: Decline: %v", err)
	}
}

// SendWebhook sends a correctly signed webhook of event about the stored
// transaction (again), e.g. to replay a charge.success. It returns the
// receiver's status code.
func (s *Server) SendWebhook(event, reference string) (int, error) {
	return s.send(event, reference, false)
}

// SendForgedWebhook sends the same webhook as SendWebhook with a signature
// made with the wrong key.
func (s *Server) SendForgedWebhook(event, reference string) (int, error) {
	return s.send(event, reference, true)
}

// Sign returns the x-paystack-signature of body for secret: the lowercase
// hex HMAC-SHA512 of the raw body keyed with the secret key.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha512.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// WebhookBody is the JSON body of a webhook of event about tx, as the
// stand-in sends it.
func WebhookBody(event string, tx Transaction) []byte {
	b, err := json.Marshal(map[string]any{"event": event, "data": txData(&tx)})
	if err != nil {
		panic(err)
	}
	return b
}

// --- API ---

func (s *Server) api(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: the server notices a client that gave up
		// (and cancels r.Context()) only once the body has been read.
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.calls++
		hang := s.hang
		s.mu.Unlock()
		if hang > 0 {
			select {
			case <-time.After(hang):
			case <-r.Context().Done():
				return
			}
		}
		s.mu.Lock()
		down := s.down
		s.mu.Unlock()
		if down {
			reply(w, http.StatusServiceUnavailable, false, "Service Unavailable", nil)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+s.secret {
			reply(w, http.StatusUnauthorized, false, "Invalid key", nil)
			return
		}
		h(w, r)
	}
}

func (s *Server) initialize(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		reply(w, http.StatusBadRequest, false, "Content-Type must be application/json", nil)
		return
	}
	var in map[string]json.RawMessage
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&in); err != nil {
		reply(w, http.StatusBadRequest, false, "Invalid JSON body", nil)
		return
	}
	var email, currency, reference, callback string
	var amount int64
	if json.Unmarshal(in["email"], &email) != nil || !strings.Contains(email, "@") {
		reply(w, http.StatusBadRequest, false, "Invalid Email Address Passed", nil)
		return
	}
	// amount must be a JSON integer (minor units), not a string or a fraction.
	if raw := bytes.TrimSpace(in["amount"]); len(raw) == 0 || raw[0] == '"' ||
		json.Unmarshal(raw, &amount) != nil || amount <= 0 {
		reply(w, http.StatusBadRequest, false, "Invalid Amount Sent", nil)
		return
	}
	if raw, ok := in["currency"]; ok {
		if json.Unmarshal(raw, &currency) != nil || !isCurrency(currency) {
			reply(w, http.StatusBadRequest, false, "Currency not supported by merchant", nil)
			return
		}
	}
	if currency == "" {
		currency = DefaultCurrency
	}
	if raw, ok := in["reference"]; ok {
		if json.Unmarshal(raw, &reference) != nil || !validReference(reference) {
			reply(w, http.StatusBadRequest, false,
				"Invalid transaction reference: only -, ., = and alphanumeric characters allowed", nil)
			return
		}
	}
	if raw, ok := in["callback_url"]; ok {
		u, err := url.Parse(unquote(raw))
		if json.Unmarshal(raw, &callback) != nil || err != nil ||
			(u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			reply(w, http.StatusBadRequest, false, "Invalid callback_url", nil)
			return
		}
	}

	s.mu.Lock()
	if reference == "" {
		reference = randomString(12)
	}
	if _, dup := s.txns[reference]; dup {
		s.mu.Unlock()
		reply(w, http.StatusBadRequest, false, "Duplicate Transaction Reference", nil)
		return
	}
	s.lastID++
	tx := &Transaction{
		ID: s.lastID, Reference: reference, AccessCode: randomString(15),
		Email: email, Amount: amount, Currency: currency, CallbackURL: callback,
		Status: "abandoned", CreatedAt: time.Now().UTC(),
	}
	s.txns[reference] = tx
	s.codes[tx.AccessCode] = reference
	s.mu.Unlock()

	reply(w, http.StatusOK, true, "Authorization URL created", map[string]any{
		"authorization_url": s.URL + "/pay/" + tx.AccessCode,
		"access_code":       tx.AccessCode,
		"reference":         tx.Reference,
	})
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("reference")
	s.mu.Lock()
	tx, ok := s.txns[ref]
	var data map[string]any
	if ok {
		data = txData(tx)
	}
	s.mu.Unlock()
	if !ok {
		reply(w, http.StatusNotFound, false, "Transaction reference not found", nil)
		return
	}
	reply(w, http.StatusOK, true, "Verification successful", data)
}

// txData is a transaction as verify and webhooks show it.
func txData(tx *Transaction) map[string]any {
	var paidAt any
	if !tx.PaidAt.IsZero() {
		paidAt = tx.PaidAt.Format(time.RFC3339)
	}
	gateway := tx.GatewayResponse
	if gateway == "" {
		switch tx.Status {
		case "success":
			gateway = "Successful"
		case "failed":
			gateway = "Declined"
		case "abandoned":
			gateway = "The transaction was not completed"
		}
	}
	return map[string]any{
		"id":               tx.ID,
		"domain":           "test",
		"status":           tx.Status,
		"reference":        tx.Reference,
		"amount":           tx.Amount,
		"requested_amount": tx.Amount,
		"message":          nil,
		"gateway_response": gateway,
		"paid_at":          paidAt,
		"created_at":       tx.CreatedAt.Format(time.RFC3339),
		"channel":          "card",
		"currency":         tx.Currency,
		"ip_address":       "127.0.0.1",
		"metadata":         "",
		"customer":         map[string]any{"email": tx.Email},
	}
}

func reply(w http.ResponseWriter, code int, ok bool, msg string, data any) {
	body := map[string]any{"status": ok, "message": msg}
	if data != nil {
		body["data"] = data
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// --- refunds ---

// Refunds returns the stored refunds of a transaction reference ("" for
// all), oldest first.
func (s *Server) Refunds(reference string) []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Refund
	for _, r := range s.refunds {
		if reference == "" || r.Transaction == reference {
			out = append(out, *r)
		}
	}
	return out
}

// LoseRefundAnswers makes the next n POST /refund queue their refund and
// answer 500, so the caller cannot know the refund exists.
func (s *Server) LoseRefundAnswers(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose = n
}

// ProcessRefunds ends every queued refund with status ("processed" or
// "failed") and sends its refund.processed or refund.failed webhook when
// a webhook URL is set.
func (s *Server) ProcessRefunds(status string) {
	s.t.Helper()
	s.mu.Lock()
	var done []Refund
	for _, r := range s.refunds {
		if r.Status == "pending" {
			r.Status = status
			done = append(done, *r)
		}
	}
	hook := s.webhookURL
	s.mu.Unlock()
	if hook == "" {
		return
	}
	for _, r := range done {
		if _, err := s.sendRefund(r); err != nil {
			s.t.Errorf("paystacktest: refund webhook: %v", err)
		}
	}
}

func (s *Server) createRefund(w http.ResponseWriter, r *http.Request) {
	var in map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		reply(w, http.StatusBadRequest, false, "Invalid JSON body", nil)
		return
	}
	var ref, note, currency string
	var amount int64
	if json.Unmarshal(in["transaction"], &ref) != nil || ref == "" {
		reply(w, http.StatusBadRequest, false, "Transaction reference is invalid", nil)
		return
	}
	if raw := bytes.TrimSpace(in["amount"]); len(raw) > 0 && (raw[0] == '"' || json.Unmarshal(raw, &amount) != nil || amount <= 0) {
		reply(w, http.StatusBadRequest, false, "Invalid Amount Sent", nil)
		return
	}
	_ = json.Unmarshal(in["merchant_note"], &note)
	_ = json.Unmarshal(in["currency"], &currency)
	s.mu.Lock()
	tx, ok := s.txns[ref]
	if !ok {
		s.mu.Unlock()
		reply(w, http.StatusNotFound, false, "Transaction not found", nil)
		return
	}
	if tx.Status != "success" {
		s.mu.Unlock()
		reply(w, http.StatusBadRequest, false, "Cannot refund a transaction that was not successful", nil)
		return
	}
	if amount == 0 {
		amount = tx.Amount
	}
	var refunded int64
	for _, x := range s.refunds {
		if x.Transaction == ref && x.Status != "failed" {
			refunded += x.Amount
		}
	}
	if refunded+amount > tx.Amount {
		s.mu.Unlock()
		reply(w, http.StatusBadRequest, false, "Refund amount cannot be greater than the transaction amount left to refund", nil)
		return
	}
	s.lastID++
	rf := &Refund{ID: s.lastID, Transaction: ref, Amount: amount, Currency: tx.Currency, MerchantNote: note, Status: "pending"}
	s.refunds = append(s.refunds, rf)
	lost := s.lose > 0
	if lost {
		s.lose--
	}
	data := refundData(rf, tx)
	s.mu.Unlock()
	if lost {
		reply(w, http.StatusInternalServerError, false, "An error occurred", nil)
		return
	}
	reply(w, http.StatusOK, true, "Refund has been queued for processing", data)
}

func (s *Server) listRefunds(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("reference")
	s.mu.Lock()
	list := []map[string]any{}
	for _, rf := range s.refunds {
		if ref == "" || rf.Transaction == ref {
			d := refundData(rf, s.txns[rf.Transaction])
			d["transaction"] = s.txns[rf.Transaction].ID // the list names the transaction by id
			list = append(list, d)
		}
	}
	s.mu.Unlock()
	reply(w, http.StatusOK, true, "Refunds retrieved", list)
}

// refundData is a refund as the create answer shows it.
func refundData(r *Refund, tx *Transaction) map[string]any {
	return map[string]any{
		"id": r.ID, "integration": 100032, "domain": "test", "amount": r.Amount, "currency": r.Currency,
		"status": r.Status, "merchant_note": r.MerchantNote, "customer_note": "Refund for transaction " + tx.Reference,
		"transaction": map[string]any{"id": tx.ID, "reference": tx.Reference, "amount": tx.Amount, "currency": tx.Currency},
		"refunded_by": "api", "channel": "card", "fully_deducted": true, "deducted_amount": r.Amount,
	}
}

// sendRefund posts the refund.processed or refund.failed webhook of r.
func (s *Server) sendRefund(r Refund) (int, error) {
	event := "refund.processed"
	if r.Status == "failed" {
		event = "refund.failed"
	}
	body, err := json.Marshal(map[string]any{"event": event, "data": map[string]any{
		"status": r.Status, "transaction_reference": r.Transaction, "refund_reference": strconv.FormatInt(r.ID, 10),
		"amount": r.Amount, "currency": r.Currency, "id": r.ID, "merchant_note": r.MerchantNote,
	}})
	if err != nil {
		return 0, err
	}
	return s.post(event, r.Transaction, body, s.secret, false)
}

// --- hosted page ---

var payPage = template.Must(template.New("pay").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Paystack (test stand-in)</title></head>
<body><main>
<h1>Pay {{.Currency}} {{.Major}}</h1>
<p>{{.Email}} · reference <code>{{.Reference}}</code> · status {{.Status}}</p>
<form method="post"><input type="hidden" name="outcome" value="approve"><button type="submit">Approve</button></form>
<form method="post"><input type="hidden" name="outcome" value="decline"><button type="submit">Decline</button></form>
</main></body></html>
`))

func (s *Server) lookupCode(code string) (Transaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.codes[code]
	if !ok {
		return Transaction{}, false
	}
	return *s.txns[ref], true
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	tx, ok := s.lookupCode(r.PathValue("code"))
	if !ok {
		http.Error(w, "This payment link is invalid.", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = payPage.Execute(w, map[string]any{
		"Currency": tx.Currency, "Major": fmt.Sprintf("%d.%02d", tx.Amount/100, tx.Amount%100),
		"Email": tx.Email, "Reference": tx.Reference, "Status": tx.Status,
	})
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	tx, ok := s.lookupCode(r.PathValue("code"))
	if !ok {
		http.Error(w, "This payment link is invalid.", http.StatusNotFound)
		return
	}
	var approve bool
	switch r.PostFormValue("outcome") {
	case "approve":
		approve = true
	case "decline":
	default:
		http.Error(w, "outcome must be approve or decline", http.StatusBadRequest)
		return
	}
	if err := s.settle(tx.Reference, approve); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if tx.CallbackURL == "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintf(w, "Payment %s finished; no callback_url was given.\n", tx.Reference)
		return
	}
	http.Redirect(w, r, callbackWith(tx.CallbackURL, tx.Reference), http.StatusFound)
}

// callbackWith adds trxref and reference to the callback URL's query.
func callbackWith(callback, ref string) string {
	u, err := url.Parse(callback)
	if err != nil {
		return callback
	}
	q := u.Query()
	q.Set("trxref", ref)
	q.Set("reference", ref)
	u.RawQuery = q.Encode()
	return u.String()
}

// settle ends a transaction that has not ended yet, and sends the
// charge.success webhook of an approved one.
func (s *Server) settle(reference string, approve bool) error {
	s.mu.Lock()
	tx, ok := s.txns[reference]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("no transaction %q", reference)
	}
	switch tx.Status {
	case "success", "failed", "reversed":
		s.mu.Unlock()
		return nil // already ended: nothing changes, nothing is sent
	}
	if approve {
		tx.Status, tx.GatewayResponse, tx.PaidAt = "success", "Successful", time.Now().UTC()
	} else {
		tx.Status, tx.GatewayResponse = "failed", "Declined"
	}
	hook := s.webhookURL
	s.mu.Unlock()
	if approve && hook != "" {
		_, _ = s.send("charge.success", reference, false)
	}
	return nil
}

// send posts a webhook about the stored transaction and records it.
func (s *Server) send(event, reference string, forged bool) (int, error) {
	s.mu.Lock()
	tx, ok := s.txns[reference]
	var snapshot Transaction
	if ok {
		snapshot = *tx
	}
	hook := s.webhookURL
	s.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("paystacktest: no transaction %q", reference)
	}
	if hook == "" {
		return 0, errors.New("paystacktest: no webhook URL; call SetWebhookURL")
	}
	key := s.secret
	if forged {
		key = "forged-" + s.secret
	}
	return s.post(event, reference, WebhookBody(event, snapshot), key, forged)
}

// post sends a webhook body signed with key to the webhook URL and
// records the delivery.
func (s *Server) post(event, reference string, body []byte, key string, forged bool) (int, error) {
	s.mu.Lock()
	hook := s.webhookURL
	s.mu.Unlock()
	d := Delivery{Event: event, Reference: reference, Forged: forged}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "Paystack-Webhook (paystacktest)")
		req.Header.Set("X-Paystack-Signature", Sign(key, body))
		var res *http.Response
		if res, err = s.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			d.StatusCode = res.StatusCode
		}
	}
	d.Err = err
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
	if err != nil {
		s.t.Logf("paystacktest: webhook %s for %s: %v", event, reference, err)
	}
	return d.StatusCode, err
}

// --- helpers ---

func validReference(ref string) bool {
	if ref == "" {
		return false
	}
	for _, c := range ref {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '=') {
			return false
		}
	}
	return true
}

// isCurrency accepts an uppercase three-letter code.
func isCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}

func unquote(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func randomString(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
