package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Media types of GraphQL over HTTP.
const (
	mediaJSON             = "application/json"
	mediaGraphQLResponse  = "application/graphql-response+json"
	persistedQueryMissing = "PERSISTED_QUERY_NOT_FOUND"
)

// httpTransport serves GraphQL over HTTP (the GraphQL-over-HTTP
// specification): POST with a JSON body, GET with URL parameters for
// queries, answered as application/json or, when the client prefers it,
// application/graphql-response+json. It is the one place that decides the
// HTTP status of a GraphQL answer, and so the one place that writes
// extensions.status, which is present exactly when the status sent is not
// 200 and then equals it:
//
//   - a request that cannot be read (malformed JSON, parameters of the
//     wrong type, no query): 400;
//   - a POST whose body is not application/json (UTF-8): 415;
//   - a mutation sent with GET: 405 with Allow: POST;
//   - a document that does not parse or validate, or variables that do
//     not coerce: 200 for application/json, 400 for
//     application/graphql-response+json (the specification's rule), with
//     no data entry either way;
//   - a persisted-query hash the server does not know:
//     PERSISTED_QUERY_NOT_FOUND, 200 for application/json (what Apollo
//     clients expect) and 404 for application/graphql-response+json (which
//     forbids a 2xx without data; not 400, which Apollo Client takes as
//     "persisted queries unsupported");
//   - our own refusals before execution (document_too_large) carry their
//     code's status;
//   - an operation that ran: 200, whatever its field errors, with a
//     Retry-After header when one of them is rate_limit_exceeded.
//
// Refusals before the handler (authentication, limits, body size) are
// written by WriteError with their own status.
type httpTransport struct {
	log *slog.Logger
}

var _ graphql.Transport = httpTransport{}

// Supports takes every request but WebSocket upgrades and OPTIONS (served
// by their own transports), so that a wrong method or content type gets a
// GraphQL-shaped 405 or 415 rather than gqlgen's bare 400.
func (httpTransport) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && r.Method != http.MethodOptions
}

// Do implements graphql.Transport.
func (t httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ct := responseType(r.Header.Get("Accept"))
	defer func() {
		// Resolver panics are recovered per field; this is for the rest.
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			t.log.ErrorContext(r.Context(), "panic in GraphQL transport", "panic", p, "stack", string(debug.Stack()))
			refuse(w, ct, http.StatusInternalServerError, apperr.Internal, "Internal error.")
		}
	}()

	var params *requestParams
	switch r.Method {
	case http.MethodGet, http.MethodHead: // net/http sends no body for HEAD
		params = paramsFromURL(r.URL.RawQuery)
	case http.MethodPost:
		if !jsonBody(r.Header.Get("Content-Type")) {
			refuse(w, ct, http.StatusUnsupportedMediaType, apperr.UnsupportedMediaType,
				"A GraphQL POST must have Content-Type: application/json (UTF-8).")
			return
		}
		params = paramsFromBody(r.Body)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST, OPTIONS")
		refuse(w, ct, http.StatusMethodNotAllowed, apperr.MethodNotAllowed,
			"Method "+r.Method+" is not allowed on the GraphQL endpoint; use POST, or GET for queries.")
		return
	}
	if params.problem != "" {
		refuse(w, ct, http.StatusBadRequest, apperr.ValidationFailed, params.problem)
		return
	}
	params.Headers = r.Header
	ctx := r.Context()

	oc, errs := exec.CreateOperationContext(ctx, &params.RawParams)
	if errs != nil {
		status := requestStatus(errs, ct)
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		if status == http.StatusOK || isPersistedQueryMiss(errs) {
			// A GET whose hash is unknown must not be cached as an answer.
			w.Header().Set("Cache-Control", "no-store")
		}
		writeRequestErrors(w, ct, status, resp.Errors)
		return
	}
	if r.Method != http.MethodPost && oc.Operation.Operation != ast.Query {
		w.Header().Set("Allow", "POST")
		refuse(w, ct, http.StatusMethodNotAllowed, apperr.MethodNotAllowed,
			"A GET request can only run a query; send a "+string(oc.Operation.Operation)+" with POST.")
		return
	}

	responses, ctx := exec.DispatchOperation(ctx, oc)
	ctx, release := withResponseBuffer(ctx)
	defer release() // after the answer is written
	resp := responses(ctx)
	if resp == nil {
		// gqlgen answers nothing for an operation whose client left while
		// it ran; the request log counts it as 499, not as a failure.
		if ctx.Err() == nil {
			WriteError(w, r, apperr.New(apperr.Internal, "Internal error."))
		}
		return
	}
	if s := retryAfter(resp.Errors); s > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	writeResponse(w, ct, resp)
}

// writeResponse answers with an executed operation's response. gqlgen has
// already written Data as compact JSON; json.Marshal of the Response would
// scan and compact those bytes again (a tenth of the server's CPU on a
// 90 KB catalog answer), so the envelope is written around them instead,
// without copying them.
func writeResponse(w http.ResponseWriter, ct string, resp *graphql.Response) {
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		writeJSON(w, ct, http.StatusOK, resp) // incremental delivery: not served, but kept whole
		return
	}
	head := []byte(`{`)
	if len(resp.Errors) > 0 {
		errs, err := json.Marshal(resp.Errors)
		if err != nil {
			writeJSON(w, ct, http.StatusOK, resp)
			return
		}
		head = append(append(append(head, `"errors":`...), errs...), ',')
	}
	head = append(head, `"data":`...)
	data := []byte(resp.Data)
	if len(data) == 0 {
		data = []byte("null")
	}
	tail := []byte(`}`)
	if len(resp.Extensions) > 0 {
		ext, err := json.Marshal(resp.Extensions)
		if err != nil {
			writeJSON(w, ct, http.StatusOK, resp)
			return
		}
		tail = append(append([]byte(`,"extensions":`), ext...), '}')
	}
	w.Header().Set("Content-Type", ct+"; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(data)+len(tail)))
	w.WriteHeader(http.StatusOK)
	for _, b := range [][]byte{head, data, tail} {
		if _, err := w.Write(b); err != nil {
			return
		}
	}
}

// requestParams are the parameters of a GraphQL request, or why they could
// not be read.
type requestParams struct {
	graphql.RawParams
	problem string
}

// paramsFromBody reads a POST body: a JSON object with a string query, an
// optional string operationName and optional objects variables and
// extensions.
func paramsFromBody(body io.Reader) *requestParams {
	raw, err := io.ReadAll(body)
	if err != nil {
		return &requestParams{problem: "The request body could not be read."}
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&fields); err != nil || fields == nil || dec.More() {
		return &requestParams{problem: "The request body must be a JSON object with a query."}
	}
	p := &requestParams{}
	p.problem = p.set(fields)
	return p
}

// paramsFromURL reads the parameters of a GET: query and operationName as
// text, variables and extensions as JSON objects.
func paramsFromURL(rawQuery string) *requestParams {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return &requestParams{problem: "The URL's query string could not be parsed."}
	}
	fields := map[string]json.RawMessage{}
	for _, name := range []string{"query", "operationName"} {
		if q.Has(name) {
			fields[name], _ = json.Marshal(q.Get(name))
		}
	}
	for _, name := range []string{"variables", "extensions"} {
		if q.Has(name) {
			if v := q.Get(name); json.Valid([]byte(v)) {
				fields[name] = json.RawMessage(v)
			} else {
				return &requestParams{problem: "The " + name + " parameter must be a JSON object."}
			}
		}
	}
	p := &requestParams{}
	p.problem = p.set(fields)
	return p
}

// set fills p from the request's fields and returns what is wrong with
// them, or "". A query may be left out only when a persisted-query hash
// stands for it.
func (p *requestParams) set(fields map[string]json.RawMessage) string {
	isNull := func(m json.RawMessage) bool { return m == nil || string(m) == "null" }
	if m := fields["query"]; !isNull(m) {
		if json.Unmarshal(m, &p.Query) != nil {
			return "query must be a string."
		}
	}
	if m := fields["operationName"]; !isNull(m) {
		if json.Unmarshal(m, &p.OperationName) != nil {
			return "operationName must be a string."
		}
	}
	for _, f := range []struct {
		name string
		dst  *map[string]any
	}{{"variables", &p.Variables}, {"extensions", &p.Extensions}} {
		name, dst := f.name, f.dst
		if m := fields[name]; !isNull(m) {
			dec := json.NewDecoder(bytes.NewReader(m))
			dec.UseNumber()
			if dec.Decode(dst) != nil || *dst == nil {
				return name + " must be a JSON object."
			}
		}
	}
	if p.Query == "" && p.Extensions["persistedQuery"] == nil {
		return "query is required: a GraphQL document as a string."
	}
	return ""
}

// jsonBody reports whether a request's Content-Type is JSON in UTF-8 (the
// charset may be left out).
func jsonBody(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != mediaJSON {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// responseType picks the answer's media type from Accept:
// application/graphql-response+json when the client ranks it at least as
// high as application/json, else application/json (also for */*, no
// Accept, or neither listed).
func responseType(accept string) string {
	best, bestQ := mediaJSON, -1.0
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				q = f
			}
		}
		switch {
		case q <= 0:
		case mt == mediaGraphQLResponse && q >= bestQ:
			best, bestQ = mediaGraphQLResponse, q
		case (mt == mediaJSON || mt == "application/*" || mt == "*/*") && q > bestQ:
			best, bestQ = mediaJSON, q
		}
	}
	return best
}

// requestStatus is the status of a request that failed before execution.
func requestStatus(errs gqlerror.List, ct string) int {
	if isPersistedQueryMiss(errs) {
		if ct == mediaGraphQLResponse {
			return http.StatusNotFound
		}
		return http.StatusOK
	}
	for _, e := range errs {
		var ae *apperr.Error
		if errors.As(e, &ae) {
			return ae.Status()
		}
	}
	if ct == mediaGraphQLResponse {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func isPersistedQueryMiss(errs gqlerror.List) bool {
	for _, e := range errs {
		if code, _ := e.Extensions["code"].(string); code == persistedQueryMissing {
			return true
		}
	}
	return false
}

// retryAfter is the largest extensions.retryAfter of errs, in seconds.
func retryAfter(errs gqlerror.List) int {
	n := 0
	for _, e := range errs {
		if s, ok := e.Extensions["retryAfter"].(int); ok {
			n = max(n, s)
		}
	}
	return n
}

// refuse answers a request the transport cannot take with one error.
func refuse(w http.ResponseWriter, ct string, status int, code apperr.Code, msg string) {
	writeRequestErrors(w, ct, status, gqlerror.List{{Message: msg, Extensions: map[string]any{"code": string(code)}}})
}

// writeRequestErrors answers a request that did not run: errors and no
// data entry, each error's extensions.status set to the status sent (or
// left out for 200).
func writeRequestErrors(w http.ResponseWriter, ct string, status int, errs gqlerror.List) {
	for _, e := range errs {
		if e.Extensions == nil {
			e.Extensions = map[string]any{}
		}
		if status == http.StatusOK {
			delete(e.Extensions, "status")
		} else {
			e.Extensions["status"] = status
		}
	}
	writeJSON(w, ct, status, struct {
		Errors gqlerror.List `json:"errors"`
	}{errs})
}

func writeJSON(w http.ResponseWriter, ct string, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"errors":[{"message":"Internal error.","extensions":{"code":"internal_error","status":500}}]}`)
	}
	w.Header().Set("Content-Type", ct+"; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
