package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := Load()
	require.NoError(t, err)
	return doc
}

func TestDocumentValidates(t *testing.T) {
	doc := load(t)
	require.NoError(t, doc.Validate(context.Background()))
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.Equal(t, "1.0.0", doc.Info.Version)
	require.Equal(t, Version, doc.Info.Version)
	require.Len(t, doc.Servers, 1)
	require.Equal(t, "{publicBaseUrl}", doc.Servers[0].URL, "an instance serves its own base URL instead")
	require.Equal(t, "http://localhost:8080", doc.Servers[0].Variables["publicBaseUrl"].Default)
	require.Equal(t, "LicenseRef-Boxoffice-Proprietary", doc.Info.License.Identifier)

	require.Contains(t, doc.Components.SecuritySchemes, "ApiKeyAuth")
	scheme := doc.Components.SecuritySchemes["ApiKeyAuth"].Value
	require.Equal(t, []string{"apiKey", "header", "X-API-Key"}, []string{scheme.Type, scheme.In, scheme.Name})
	require.Equal(t, openapi3.SecurityRequirements{{"ApiKeyAuth": {}}}, doc.Security, "the key is required globally")
}

// TestRoutes checks that the document describes exactly the /api/v1 routes.
func TestRoutes(t *testing.T) {
	doc := load(t)
	want := []string{
		"GET /api/v1/events",
		"GET /api/v1/events/{id}",
		"GET /api/v1/events/{id}/dates",
		"GET /api/v1/event-dates/{id}/tickets",
		"POST /api/v1/checkout-sessions",
		"POST /api/v1/checkout-sessions/{order_reference}/expire",
		"GET /api/v1/orders",
		"GET /api/v1/order-changes",
		"GET /api/v1/orders/{reference}",
		"POST /api/v1/orders/{reference}/refunds",
		"GET /api/v1/orders/{reference}/refunds",
		"GET /api/v1/refunds/{id}",
		"POST /api/v1/check-ins",
		"GET /api/v1/check-ins/stats",
		"GET /api/v1/check-ins/manifest",
		"POST /api/v1/check-ins/batch",
		"GET /api/v1/webhook-events/stream",
		"POST /api/v1/webhook-endpoints",
		"GET /api/v1/webhook-endpoints",
		"GET /api/v1/webhook-endpoints/{id}",
		"PATCH /api/v1/webhook-endpoints/{id}",
		"DELETE /api/v1/webhook-endpoints/{id}",
		"POST /api/v1/webhook-endpoints/{id}/rotate-secret",
		"POST /api/v1/webhook-endpoints/{id}/recover",
		"GET /api/v1/webhook-events",
		"GET /api/v1/webhook-events/{id}",
		"POST /api/v1/webhook-events/{id}/redeliver",
		"GET /api/v1/openapi.json",
	}
	var got []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			got = append(got, method+" "+path)
			require.NotEmpty(t, op.OperationID, "%s %s", method, path)
			require.NotEmpty(t, op.Summary, "%s %s", method, path)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)

	openapiOp := doc.Paths.Find("/api/v1/openapi.json").Get
	require.NotNil(t, openapiOp.Security)
	require.Empty(t, *openapiOp.Security, "the document itself is public")

	// Every authenticated route documents the common errors.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if path == "/api/v1/openapi.json" {
				continue
			}
			for _, status := range []int{401, 403, 404, 405, 429, 500} {
				require.NotNil(t, op.Responses.Status(status), "%s %s: response %d", method, path, status)
			}
		}
	}

	checkout := doc.Paths.Find("/api/v1/checkout-sessions").Post
	for _, status := range []int{201, 400, 401, 403, 404, 409, 422, 429, 503} {
		require.NotNil(t, checkout.Responses.Status(status), "checkout response %d", status)
	}
	key := checkout.Parameters.GetByInAndName("header", "Idempotency-Key")
	require.NotNil(t, key)
	require.True(t, key.Required)
	require.EqualValues(t, 128, *key.Schema.Value.MaxLength)
	require.Contains(t, checkout.Responses.Status(201).Value.Headers, "Idempotent-Replayed")
	require.Contains(t, checkout.Responses.Status(409).Value.Headers, "Retry-After")
	allow := doc.Components.Responses["MethodNotAllowed"].Value.Headers["Allow"]
	require.True(t, allow.Value.Required, "405 answers always carry Allow")
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy", "Retry-After"} {
		require.True(t, doc.Components.Responses["TooManyRequests"].Value.Headers[h].Value.Required, "429 header %s", h)
	}
}

// specCodes returns the apperr.Code constants declared in apperr.go, read
// from the source so that a code added there cannot be missed here.
func specCodes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../apperr/apperr.go", nil, 0)
	require.NoError(t, err)
	var codes []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				require.True(t, ok, "apperr.Code constants are string literals")
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				codes = append(codes, s)
			}
		}
	}
	require.NotEmpty(t, codes)
	sort.Strings(codes)
	return codes
}

func enumStrings(t *testing.T, s *openapi3.Schema) []string {
	t.Helper()
	var out []string
	for _, v := range s.Enum {
		str, ok := v.(string)
		require.True(t, ok, "enum value %v", v)
		out = append(out, str)
	}
	sort.Strings(out)
	return out
}

func TestErrorCodesMatchApperr(t *testing.T) {
	doc := load(t)
	codes := specCodes(t)
	require.Equal(t, codes, enumStrings(t, doc.Components.Schemas["ErrorCode"].Value),
		"the ErrorCode enum lists exactly the apperr.Code constants")
	errSchema := doc.Components.Schemas["Error"].Value
	require.Equal(t, "#/components/schemas/ErrorCode", errSchema.Properties["error"].Value.Properties["code"].Ref)
}

// responseCodes returns the error codes a documented error response narrows
// its schema to (allOf: [Error, …, {error: {code: {enum}}}]).
func responseCodes(t *testing.T, where string, resp *openapi3.Response) []string {
	t.Helper()
	mt := resp.Content.Get("application/json")
	require.NotNil(t, mt, "%s: application/json content", where)
	schema := mt.Schema.Value
	require.NotEmpty(t, schema.AllOf, "%s: an error response is allOf [Error, …]", where)
	require.Equal(t, "#/components/schemas/Error", schema.AllOf[0].Ref, where)
	var codes []string
	for _, sub := range schema.AllOf[1:] {
		e := sub.Value.Properties["error"]
		if e == nil {
			continue
		}
		codes = append(codes, enumStrings(t, e.Value.Properties["code"].Value)...)
	}
	require.NotEmpty(t, codes, "%s: the response lists its codes", where)
	return codes
}

// TestErrorResponsesByStatus checks each operation's error responses list
// only codes of their HTTP status (apperr's table), and that every code is
// documented on at least one route.
func TestErrorResponsesByStatus(t *testing.T) {
	doc := load(t)
	seen := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for key, ref := range op.Responses.Map() {
				status, err := strconv.Atoi(key)
				require.NoError(t, err, "%s %s: response %q", method, path, key)
				if status < 400 {
					continue
				}
				where := method + " " + path + " " + key
				for _, code := range responseCodes(t, where, ref.Value) {
					e := &apperr.Error{Code: apperr.Code(code), Refund: op.OperationID == "createRefund"}
					require.Equal(t, status, e.Status(), "%s lists %s", where, code)
					seen[code] = true
				}
			}
		}
	}
	var missing []string
	for _, c := range specCodes(t) {
		if !seen[c] {
			missing = append(missing, c)
		}
	}
	require.Empty(t, missing, "codes no route documents")
	// Component responses the operations do not use would be dead text.
	used := map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, ref := range op.Responses.Map() {
				used[ref.Ref] = true
			}
		}
	}
	for name := range doc.Components.Responses {
		require.True(t, used["#/components/responses/"+name], "unused response component %s", name)
	}
}

func TestNullableFields(t *testing.T) {
	doc := load(t)
	// The spec's nullable fields (sections 2.1–2.5, and fulfilment.md's
	// section 1), and only those.
	want := map[string][]string{
		"Event": {"description", "image_url", "ussd_code", "ussd_full_code", "next_startdate", "last_enddate",
			"next_startdate_iso", "last_enddate_iso", "next_startdate_display", "last_enddate_display"},
		"EventDate": {"startdate_iso", "enddate_iso", "startdate_display", "enddate_display", "venue_id", "venue_name",
			"venue_slug", "venue_street", "venue_city", "venue_state", "venue_lat", "venue_lng"},
		"Ticket": {"description", "price", "promotionalprice", "quantity", "ticketsperattendee", "salesstartdate",
			"salesenddate", "salesstartdate_iso", "salesenddate_iso"},
		"CheckoutSession": {"checkout_url", "expires_at", "total_amount", "payment_reference"},
		"Order": {"currency", "created_at", "updated_at", "payment_reference", "expires_at", "checkout_url",
			"tickets_url"},
		"IssuedTicket": {"checked_in_at"},
		"LineItem":     nil,
	}
	for name, fields := range want {
		s := doc.Components.Schemas[name].Value
		require.NotNil(t, s.AdditionalProperties.Has, name)
		require.False(t, *s.AdditionalProperties.Has, "%s: additionalProperties false", name)
		var got []string
		for field, p := range s.Properties {
			require.Contains(t, s.Required, field, "%s.%s is always present", name, field)
			if p.Value.Type.IncludesNull() {
				got = append(got, field)
			}
		}
		sort.Strings(got)
		sort.Strings(fields)
		require.Equal(t, fields, got, "%s: nullable fields", name)
	}
}

func TestJSONFor(t *testing.T) {
	const base = "https://tickets.boxoffice.test"
	b := JSONFor(base)
	require.True(t, json.Valid(b))
	// The JSON form loads back into the same document, but for its server.
	doc, err := openapi3.NewLoader().LoadFromData(b)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	require.Equal(t, openapi3.Servers{{URL: base, Description: "This Boxoffice instance."}}, doc.Servers,
		"absolute: the served document names the instance")
	want := load(t)
	want.Servers = doc.Servers
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	gotJSON, err := json.Marshal(doc)
	require.NoError(t, err)
	require.JSONEq(t, string(wantJSON), string(gotJSON))
	var top map[string]any
	require.NoError(t, json.Unmarshal(b, &top))
	require.Equal(t, "3.1.0", top["openapi"])
	require.Equal(t, "1.0.0", top["info"].(map[string]any)["version"])
	require.Contains(t, top, "webhooks")
}

func TestHandler(t *testing.T) {
	const base = "http://127.0.0.1:8080"
	srv := httptest.NewServer(Handler(base))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/v1/openapi.json")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	require.NotEmpty(t, res.Header.Get("Cache-Control"))
	etag := res.Header.Get("ETag")
	require.NotEmpty(t, etag)
	var body bytes.Buffer
	_, err = body.ReadFrom(res.Body)
	require.NoError(t, err)
	require.Equal(t, JSONFor(base), body.Bytes())

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/openapi.json", nil)
	require.NoError(t, err)
	req.Header.Set("If-None-Match", etag)
	res2, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res2.Body.Close()
	require.Equal(t, http.StatusNotModified, res2.StatusCode)

	res3, err := http.Head(srv.URL + "/api/v1/openapi.json")
	require.NoError(t, err)
	res3.Body.Close()
	require.Equal(t, http.StatusOK, res3.StatusCode)
	require.Equal(t, strconv.Itoa(len(JSONFor(base))), res3.Header.Get("Content-Length"))

	other := httptest.NewServer(Handler("https://api.partner.test"))
	defer other.Close()
	res4, err := http.Get(other.URL + "/api/v1/openapi.json")
	require.NoError(t, err)
	defer res4.Body.Close()
	require.NotEqual(t, etag, res4.Header.Get("ETag"), "another base URL is another document")
}

// TestCheckoutRequestSchema spot-checks the request body's limits.
func TestCheckoutRequestSchema(t *testing.T) {
	s := load(t).Components.Schemas["CheckoutSessionRequest"].Value
	require.ElementsMatch(t, []string{"event_id", "eventdate_id", "items", "customer", "success_url", "cancel_url"}, s.Required)
	items := s.Properties["items"].Value
	require.EqualValues(t, 20, *items.MaxItems)
	qty := items.Items.Value.Properties["quantity"].Value
	require.EqualValues(t, 1, *qty.Min)
	require.EqualValues(t, 50, *qty.Max)
	require.EqualValues(t, 20, *s.Properties["metadata"].Value.MaxProps)
	require.True(t, slices.Equal([]string{"name", "email", "phone"}, s.Properties["customer"].Value.Required))
	customer := s.Properties["customer"].Value.Properties
	for name, want := range map[string]int{"name": clientinput.MaxName, "email": clientinput.MaxEmail, "phone": clientinput.MaxPhone} {
		require.EqualValues(t, want, *customer[name].Value.MaxLength, "customer.%s", name)
	}
	for _, name := range []string{"success_url", "cancel_url"} {
		require.EqualValues(t, clientinput.MaxURL, *s.Properties[name].Value.MaxLength, name)
	}
}
