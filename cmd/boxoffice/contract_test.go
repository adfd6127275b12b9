package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/openapi"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"
)

// The contract test: every REST answer the suite receives through
// testBundle.do, and every webhook delivery its receivers get, is validated
// against the embedded OpenAPI document (openapi/openapi.yaml) with
// kin-openapi, so the document and the code cannot drift apart. Requests to
// the API are not validated: the suite sends invalid ones on purpose.

// contractReportEnv names a file to which every validated answer is
// appended as "METHOD path-template status" (for coverage reports).
const contractReportEnv = "BOXOFFICE_CONTRACT_REPORT"

var contract struct {
	once   sync.Once
	err    error
	doc    *openapi3.T
	router routers.Router
	// unknownPath and wrongMethod stand in for the operation of a request
	// the document has no route for: an unknown path under /api/v1, or a
	// documented path with a method it does not take.
	unknownPath, wrongMethod *openapi3.Operation
	checked                  atomic.Int64
	webhooksChecked          atomic.Int64
	reportMu                 sync.Mutex
}

var contractOptions = &openapi3filter.Options{
	IncludeResponseStatus: true,
	MultiError:            true,
	// Responses are validated, not authentication.
	AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
}

func loadContract() {
	doc, err := openapi.Load()
	if err != nil {
		contract.err = err
		return
	}
	// The suite's servers listen on ports of their own, so routes match any
	// host: the document names each instance's PUBLIC_BASE_URL only when served.
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		contract.err = fmt.Errorf("routing the OpenAPI document: %w", err)
		return
	}
	op := func(statuses map[int]string) *openapi3.Operation {
		o := openapi3.NewOperation()
		o.Responses = openapi3.NewResponses()
		o.Responses.Delete("default")
		for status, name := range statuses {
			ref := doc.Components.Responses[name]
			if ref == nil {
				contract.err = fmt.Errorf("OpenAPI document: components.responses.%s is missing", name)
				return nil
			}
			o.Responses.Set(fmt.Sprint(status), ref)
		}
		return o
	}
	common := func(status int, name string) map[int]string {
		return map[int]string{401: "Unauthorized", 403: "Forbidden", 429: "TooManyRequests", 500: "InternalError", status: name}
	}
	contract.doc, contract.router = doc, router
	contract.unknownPath = op(common(http.StatusNotFound, "NotFound"))
	contract.wrongMethod = op(common(http.StatusMethodNotAllowed, "MethodNotAllowed"))
}

// contractCheck validates one answer of the REST API against the OpenAPI
// document; answers of other paths (/graphql, /sandbox, …) are skipped.
func contractCheck(t testing.TB, req *http.Request, res *http.Response, raw []byte) {
	t.Helper()
	path := req.URL.Path
	if path != "/api/v1" && !strings.HasPrefix(path, "/api/v1/") {
		return
	}
	contract.once.Do(loadContract)
	if contract.err != nil {
		// Errorf, not Fatalf: answers may arrive on goroutines of their own.
		t.Errorf("contract: %v", contract.err)
		return
	}
	route, params, err := contract.router.FindRoute(req)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		route = &routers.Route{Spec: contract.doc, Path: path, Method: req.Method, Operation: contract.wrongMethod}
	case err != nil: // routers.ErrPathNotFound: not a documented route
		route = &routers.Route{Spec: contract.doc, Path: path, Method: req.Method, Operation: contract.unknownPath}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route, Options: contractOptions,
		},
		Status:  res.StatusCode,
		Header:  res.Header,
		Options: contractOptions,
	}
	in.SetBodyBytes(raw)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("contract: %s %s → %d does not match openapi/openapi.yaml (%s %s):\n%v\nheaders: %v\nbody: %s",
			req.Method, req.URL.RequestURI(), res.StatusCode, req.Method, route.Path, err, res.Header, raw)
		return
	}
	if _, synthetic := t.(*recordingTB); synthetic {
		return
	}
	contract.checked.Add(1)
	if file := os.Getenv(contractReportEnv); file != "" {
		contractReport(t, file, fmt.Sprintf("%s %s %d\n", req.Method, route.Path, res.StatusCode))
	}
}

// webhookContractCheck validates one webhook delivery, its headers and body,
// against the document's webhook of its event type.
func webhookContractCheck(t testing.TB, h http.Header, body []byte) {
	t.Helper()
	contract.once.Do(loadContract)
	if contract.err != nil {
		t.Errorf("contract: %v", contract.err)
		return
	}
	typ := h.Get(verify.HeaderEventType)
	item := contract.doc.Webhooks[typ]
	if item == nil || item.Post == nil {
		t.Errorf("contract: webhook %q (%s) is not in openapi/openapi.yaml's webhooks", typ, body)
		return
	}
	req, err := http.NewRequest(http.MethodPost, "http://receiver.test/", bytes.NewReader(body))
	if err != nil {
		t.Errorf("contract: %v", err)
		return
	}
	req.Header = h.Clone()
	in := &openapi3filter.RequestValidationInput{
		Request: req,
		Route:   &routers.Route{Spec: contract.doc, Path: typ, PathItem: item, Method: http.MethodPost, Operation: item.Post},
		Options: contractOptions,
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		t.Errorf("contract: webhook %s does not match openapi/openapi.yaml's webhooks.%s:\n%v\nheaders: %v\nbody: %s", typ, typ, err, h, body)
		return
	}
	if _, synthetic := t.(*recordingTB); !synthetic {
		contract.webhooksChecked.Add(1)
	}
}

func contractReport(t testing.TB, file, line string) {
	contract.reportMu.Lock()
	defer contract.reportMu.Unlock()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("contract report: %v", err)
		return
	}
	defer f.Close()
	if _, err := io.WriteString(f, line); err != nil {
		t.Errorf("contract report: %v", err)
	}
}

// TestContract reaches every documented route and the answers that are easy
// to provoke; testBundle.do validates each one against the document. The
// rest of the suite adds its own answers to the check.
func TestContract(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		ctx := context.Background()
		ids := tb.demo.Catalog
		key := tb.testKey
		before := contract.checked.Load()
		expect := func(t *testing.T, res *response, status int, code string) {
			t.Helper()
			require.Equal(t, status, res.Status, "%s", res.Raw)
			if code != "" {
				require.Equal(t, code, res.errorCode(), "%s", res.Raw)
			}
		}

		t.Run("Catalog", func(t *testing.T) {
			for _, q := range []string{"", "?per_page=2&page=2", "?page=99", "?q=highlife", "?include_past=true", "?per_page=500"} {
				expect(t, tb.get(t, "/api/v1/events"+q, key), 200, "")
			}
			expect(t, tb.get(t, "/api/v1/events?per_page=x&page=0&include_past=maybe", key), 422, "validation_failed")
			for ref := range ids.Events {
				res := tb.get(t, fmt.Sprintf("/api/v1/events/%d", ids.Events[ref]), key)
				require.Contains(t, []int{200, 404}, res.Status, ref)
				res = tb.get(t, fmt.Sprintf("/api/v1/events/%d/dates?include_past=true", ids.Events[ref]), key)
				require.Contains(t, []int{200, 404}, res.Status, ref)
			}
			for ref := range ids.EventDates {
				res := tb.get(t, fmt.Sprintf("/api/v1/event-dates/%d/tickets", ids.EventDates[ref]), key)
				require.Contains(t, []int{200, 404}, res.Status, ref)
			}
			expect(t, tb.get(t, fmt.Sprintf("/api/v1/events/%d/dates", ids.Events["DEMO-MOVIES"]), key), 200, "")
			expect(t, tb.get(t, fmt.Sprintf("/api/v1/events/%d/dates?include_past=nope", ids.Events["DEMO-MOVIES"]), key), 422, "validation_failed")
			expect(t, tb.get(t, "/api/v1/events/abc", key), 404, "event_not_found")
			expect(t, tb.get(t, "/api/v1/events/999999/dates", key), 404, "event_not_found")
			expect(t, tb.get(t, "/api/v1/event-dates/0/tickets", key), 404, "event_date_not_found")
		})
		t.Run("Auth", func(t *testing.T) {
			expect(t, tb.get(t, "/api/v1/events", ""), 401, "missing_api_key")
			expect(t, tb.get(t, "/api/v1/events/1", "svc_test_nope"), 401, "invalid_api_key")
			expect(t, tb.checkout(t, "", newIdemKey(), tb.highlife(1)), 401, "missing_api_key")
			expect(t, tb.get(t, "/api/v1/nope", ""), 401, "missing_api_key")
			acc, err := tb.m.Provision.CreateAccount(ctx, provisionAccount("contract@example.com"))
			require.NoError(t, err)
			other, err := tb.m.Provision.CreateApp(ctx, provisionApp(acc.ID))
			require.NoError(t, err)
			require.NoError(t, tb.m.Provision.SetAppStatus(ctx, other.App.ID, store.AppSuspended))
			expect(t, tb.get(t, "/api/v1/orders/sbx_x", other.TestKey), 403, "app_suspended")
			expect(t, tb.checkout(t, other.TestKey, newIdemKey(), tb.highlife(1)), 403, "app_suspended")
		})
		t.Run("Routing", func(t *testing.T) {
			expect(t, tb.get(t, "/api/v1/nope", key), 404, "not_found")
			expect(t, tb.get(t, "/api/v1/events/1/nope", key), 404, "not_found")
			expect(t, tb.do(t, http.MethodPost, "/api/v1/events", key, nil), 405, "method_not_allowed")
			expect(t, tb.do(t, http.MethodDelete, "/api/v1/orders/sbx_x", key, nil), 405, "method_not_allowed")
			expect(t, tb.get(t, "/api/v1/checkout-sessions", key), 405, "method_not_allowed")
		})
		t.Run("Checkout", func(t *testing.T) {
			idem := newIdemKey()
			first := tb.checkout(t, key, idem, tb.highlife(2))
			expect(t, first, 201, "")
			replay := tb.checkout(t, key, idem, tb.highlife(2))
			expect(t, replay, 201, "")
			require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
			expect(t, tb.checkout(t, key, idem, tb.highlife(3)), 409, "idempotency_conflict")
			free := tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1)
			expect(t, tb.checkout(t, key, newIdemKey(), free), 201, "")
			expect(t, tb.checkout(t, tb.liveKey, newIdemKey(), free), 201, "")
			live := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1))
			expect(t, live, 201, "")

			expect(t, tb.checkout(t, key, "", tb.highlife(1)), 400, "missing_idempotency_key")
			expect(t, tb.checkout(t, key, strings.Repeat("k", 129), tb.highlife(1)), 400, "invalid_idempotency_key")
			expect(t, tb.checkout(t, key, newIdemKey(), tb.cartFor("DEMO-GALA", "DEMO-GALA-1", "DEMO-GALA-SEAT", 1)), 403, "event_not_available")
			expect(t, tb.checkout(t, key, newIdemKey(), with(tb.highlife(1), "event_id", ids.Events["DEMO-HIDDEN"])), 404, "event_not_found")
			expect(t, tb.checkout(t, key, newIdemKey(), with(tb.highlife(1), "eventdate_id", ids.EventDates["DEMO-CHALEWOTE-1"])), 404, "event_date_not_found")
			soldOut := newIdemKey()
			comedy := tb.cartFor("DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)
			expect(t, tb.checkout(t, key, soldOut, comedy), 409, "sold_out")
			replayed := tb.checkout(t, key, soldOut, comedy)
			expect(t, replayed, 409, "sold_out")
			require.Equal(t, "true", replayed.Header.Get("Idempotent-Replayed"))
			expect(t, tb.checkout(t, key, newIdemKey(), []byte(`{"items": [{"quantity": 0}]`)), 422, "validation_failed")
			expect(t, tb.checkout(t, key, newIdemKey(), with(tb.highlife(1), "items.0.quantity", 0)), 422, "validation_failed")
			expect(t, tb.checkout(t, key, newIdemKey(), with(tb.highlife(1), "success_url", "http://partner.example/x")), 422, "invalid_redirect_url")
			expect(t, tb.checkout(t, key, newIdemKey(), tb.cartFor("DEMO-JAZZ", "DEMO-JAZZ-1", "DEMO-JAZZ-GA", 1)), 422, "ticket_not_on_sale")

			ref := first.data()["order_reference"].(string)
			expect(t, tb.get(t, "/api/v1/orders/"+ref, key), 200, "")
			expect(t, tb.get(t, "/api/v1/orders/"+live.data()["order_reference"].(string), tb.liveKey), 200, "")
			expect(t, tb.get(t, "/api/v1/orders/"+ref, tb.liveKey), 403, "environment_mismatch")
			expect(t, tb.get(t, "/api/v1/orders/sbx_doesnotexist", key), 404, "order_not_found")
		})
		t.Run("OpenAPIDocument", func(t *testing.T) {
			// Served outside the key guard once the router mounts it.
			res, err := tb.srv.Client().Get(tb.srv.URL + "/api/v1/openapi.json")
			require.NoError(t, err)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Skipf("GET /api/v1/openapi.json is not mounted yet (%d)", res.StatusCode)
			}
			doc := tb.get(t, "/api/v1/openapi.json", "")
			expect(t, doc, 200, "")
			require.JSONEq(t, string(openapi.JSONFor(tb.m.Config.PublicBaseURL)), string(doc.Raw))
			var served struct{ Servers []struct{ URL string } }
			require.NoError(t, json.Unmarshal(doc.Raw, &served))
			require.Equal(t, "http://boxoffice.test", served.Servers[0].URL, "the document names PUBLIC_BASE_URL")
		})
		if !t.Failed() {
			t.Logf("contract: %d answers validated by this test; %d so far in this run", contract.checked.Load()-before, contract.checked.Load())
		}
	})
}

// TestContractLimits provokes the 429 answers, with their headers.
func TestContractLimits(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(2, 100, 3, 1))
	for i := 0; i < 3; i++ {
		require.Equal(t, 200, tb.get(t, "/api/v1/events", tb.testKey).Status)
	}
	res := tb.get(t, "/api/v1/events", tb.testKey)
	require.Equal(t, 429, res.Status, "%s", res.Raw)

	require.Equal(t, 201, tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).Status)
	res = tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1))
	require.Equal(t, 429, res.Status, "%s", res.Raw)
	require.Equal(t, "rate_limit_exceeded", res.errorCode())

	for i := 0; i < 2; i++ {
		require.Equal(t, 401, tb.get(t, "/api/v1/orders/sbx_x", "svc_test_nope").Status)
	}
	res = tb.get(t, "/api/v1/orders/sbx_x", "")
	require.Equal(t, 429, res.Status, "failed-auth bucket: %s", res.Raw)
}

// recordingTB collects the failures contractCheck reports.
type recordingTB struct {
	testing.TB
	failures []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// TestContractCatchesDrift feeds contractCheck answers that break the
// document in the ways drift would, and one that keeps it.
func TestContractCatchesDrift(t *testing.T) {
	t.Parallel()
	event := `{"id":1,"reference":"E","name":"N","slug":"n","description":null,"image_url":null,"active_dates_count":0,` +
		`"has_multiple_dates":false,"ussd_code":null,"ussd_full_code":null,"has_ussd":false,"next_startdate":null,` +
		`"last_enddate":null,"next_startdate_iso":null,"last_enddate_iso":null,"next_startdate_display":null,` +
		`"last_enddate_display":null,"timezone":"Africa/Accra","created_at":"2026-01-02T03:04:05Z",` +
		`"updated_at":"2026-01-02T03:04:05Z","pricing":{"has_free_tickets":false,"has_paid_tickets":true,"is_entirely_free":false}}`
	session := `{"order_reference":"sbx_abc","checkout_url":null,"expires_at":null,"status":"paid","environment":"test",` +
		`"requires_payment":false,"total_amount":"0.00","payment_reference":null}`
	json := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	withHeader := func(k, v string) http.Header {
		h := json.Clone()
		h.Set(k, v)
		return h
	}
	cases := []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		ok                 bool
	}{
		{"Valid", "GET", "/api/v1/events/1", 200, json, `{"data":` + event + `}`, true},
		{"ValidCheckout", "POST", "/api/v1/checkout-sessions", 201, withHeader("Idempotent-Replayed", "true"), `{"data":` + session + `,"meta":{"status_code":201}}`, true},
		{"ValidUnknownRoute", "GET", "/api/v1/nope", 404, json, `{"error":{"code":"not_found","message":"No route."}}`, true},
		{"StrayField", "GET", "/api/v1/events/1", 200, json, `{"data":` + strings.Replace(event, `"id":1,`, `"id":1,"extra":1,`, 1) + `}`, false},
		{"MissingField", "GET", "/api/v1/events/1", 200, json, `{"data":` + strings.Replace(event, `"slug":"n",`, ``, 1) + `}`, false},
		{"WrongType", "GET", "/api/v1/events/1", 200, json, `{"data":` + strings.Replace(event, `"id":1,`, `"id":"1",`, 1) + `}`, false},
		{"NullNotNullable", "GET", "/api/v1/events/1", 200, json, `{"data":` + strings.Replace(event, `"name":"N",`, `"name":null,`, 1) + `}`, false},
		{"BadDateTime", "GET", "/api/v1/events/1", 200, json, `{"data":` + strings.Replace(event, `"created_at":"2026-01-02T03:04:05Z"`, `"created_at":"2026-01-02 03:04:05"`, 1) + `}`, false},
		{"BadMoney", "POST", "/api/v1/checkout-sessions", 201, json, `{"data":` + strings.Replace(session, `"0.00"`, `"0.0"`, 1) + `,"meta":{"status_code":201}}`, false},
		{"CheckoutWithoutMeta", "POST", "/api/v1/checkout-sessions", 201, json, `{"data":` + session + `}`, false},
		{"WrongMetaStatus", "POST", "/api/v1/checkout-sessions", 409, json, `{"error":{"code":"sold_out","message":"m"},"meta":{"status_code":422}}`, false},
		{"CodeOfAnotherStatus", "GET", "/api/v1/events/1", 404, json, `{"error":{"code":"order_not_found","message":"m"}}`, false},
		{"UnknownCode", "GET", "/api/v1/nope", 404, json, `{"error":{"code":"nope","message":"m"}}`, false},
		{"DetailsNotLists", "GET", "/api/v1/events", 422, json, `{"error":{"code":"validation_failed","message":"m","details":{"page":"bad"}}}`, false},
		{"ValidBusinessError", "POST", "/api/v1/checkout-sessions", 422, json, `{"error":{"code":"ticket_not_found","message":"m"},"meta":{"status_code":422}}`, true},
		{"ValidationWithoutDetails", "POST", "/api/v1/checkout-sessions", 422, json, `{"error":{"code":"validation_failed","message":"m"},"meta":{"status_code":422}}`, false},
		{"UndocumentedStatus", "GET", "/api/v1/events", 418, json, `{"error":{"code":"internal_error","message":"m"}}`, false},
		{"429WithoutRetryAfter", "GET", "/api/v1/events", 429, json, `{"error":{"code":"rate_limit_exceeded","message":"m"}}`, false},
		{"405WithoutAllow", "POST", "/api/v1/events", 405, json, `{"error":{"code":"method_not_allowed","message":"m"}}`, false},
		{"BadReplayedHeader", "POST", "/api/v1/checkout-sessions", 201, withHeader("Idempotent-Replayed", "yes"), `{"data":` + session + `,"meta":{"status_code":201}}`, false},
		{"NotJSON", "GET", "/api/v1/events/1", 200, http.Header{"Content-Type": {"text/plain"}}, `hello`, false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, "http://boxoffice.test"+tt.path, nil)
			require.NoError(t, err)
			rec := &recordingTB{TB: t}
			contractCheck(rec, req, &http.Response{StatusCode: tt.status, Header: tt.header}, []byte(tt.body))
			if tt.ok {
				require.Empty(t, rec.failures)
			} else {
				require.Len(t, rec.failures, 1, "contractCheck must reject this answer")
				t.Log(rec.failures[0])
			}
		})
	}
}

// TestWebhookContractCatchesDrift feeds webhookContractCheck deliveries
// signed as the webhook service signs them, and ones that drift from the
// document.
func TestWebhookContractCatchesDrift(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	const id = "evt_0123456789abcdef0123456789abcdef"
	order := `{"reference":"sbx_abc","status":"paid","status_code":2,"currency":"GHS","created_at":"2026-01-02T03:04:05Z",` +
		`"updated_at":"2026-01-02T03:04:05Z","payment_reference":null,"environment":"test","event_id":1,"eventdate_id":2,` +
		`"total_amount":"0.00","requires_payment":false,"expires_at":null,"checkout_url":null,"metadata":{},` +
		`"items":[{"ticket_id":3,"name":"GA","quantity":1,"unit_price":"0.00","amount":"0.00"}],` +
		`"tickets":[{"id":"itk_abc","code":"TESTABCDEFGHIJKLMNOPQRSTUVWXYZ234567","order_reference":"sbx_abc","ticket_id":3,` +
		`"ticket_name":"GA","event_id":1,"eventdate_id":2,"position":1,"tickets_in_order":1,"status":"valid","checked_in_at":null,"environment":"test"}],` +
		`"tickets_url":"https://boxoffice.example/tickets/abc","tickets_email":{"status":"not_sent","sent_at":null},` +
		`"refunded_amount":"0.00","refund_status":"none","refunds":[]}`
	paid := `{"id":"` + id + `","type":"order.paid","created_at":"2026-01-02T03:04:05Z","environment":"test","sequence":1,"data":{"order":` + order + `}}`
	test := `{"id":"` + id + `","type":"webhook.test","created_at":"2026-01-02T03:04:05Z","environment":"live","sequence":0,"data":{"message":"hi"}}`
	signed := func(typ, body string) http.Header {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		std, err := verify.SignStandard(secret, id, ts, []byte(body))
		require.NoError(t, err)
		h := http.Header{}
		for k, v := range map[string]string{
			"Content-Type":                 "application/json",
			verify.HeaderTimestamp:         ts,
			verify.HeaderSignature:         verify.Sign(secret, ts, []byte(body)),
			verify.HeaderEventID:           id,
			verify.HeaderEventType:         typ,
			verify.HeaderStandardID:        id,
			verify.HeaderStandardTimestamp: ts,
			verify.HeaderStandardSignature: std,
		} {
			h.Set(k, v)
		}
		return h
	}
	without := func(h http.Header, name string) http.Header {
		h = h.Clone()
		h.Del(name)
		return h
	}
	cases := []struct {
		name   string
		header http.Header
		body   string
		ok     bool
	}{
		{"ValidOrderPaid", signed("order.paid", paid), paid, true},
		{"ValidTest", signed("webhook.test", test), test, true},
		{"MissingSignature", without(signed("order.paid", paid), verify.HeaderSignature), paid, false},
		{"MissingStandardSignature", without(signed("order.paid", paid), verify.HeaderStandardSignature), paid, false},
		{"TypeOfAnotherWebhook", signed("order.failed", paid), paid, false},
		{"UnknownType", signed("order.refunded", paid), paid, false},
		{"StrayField", signed("order.paid", strings.Replace(paid, `"sequence":1,`, `"sequence":1,"extra":1,`, 1)), strings.Replace(paid, `"sequence":1,`, `"sequence":1,"extra":1,`, 1), false},
		{"NoSequence", signed("order.paid", strings.Replace(paid, `"sequence":1,`, ``, 1)), strings.Replace(paid, `"sequence":1,`, ``, 1), false},
		{"OrderNotTheSpecs", signed("order.paid", strings.Replace(paid, `"status_code":2,`, ``, 1)), strings.Replace(paid, `"status_code":2,`, ``, 1), false},
		{"TestWithSequence", signed("webhook.test", strings.Replace(test, `"sequence":0`, `"sequence":3`, 1)), strings.Replace(test, `"sequence":0`, `"sequence":3`, 1), false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			webhookContractCheck(rec, tt.header, []byte(tt.body))
			if tt.ok {
				require.Empty(t, rec.failures)
			} else {
				require.Len(t, rec.failures, 1, "webhookContractCheck must reject this delivery")
				t.Log(rec.failures[0])
			}
		})
	}
}
