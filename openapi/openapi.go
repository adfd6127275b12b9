// Package openapi holds the OpenAPI 3.1 description of the /api/v1 REST
// contract (docs/spec/ticketing-api.md): every route, parameter, schema,
// error code and header, version 1.0.0, and the webhooks Boxoffice sends
// (every event type, its body and its signature headers). The document is
// embedded in the binary and served at GET /api/v1/openapi.json with the
// instance's public base URL as its server; the cmd/boxoffice contract test
// validates every REST response and every webhook delivery of the test suite
// against it, so the document and the code cannot drift apart.
package openapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// source is the document as written (YAML, the reviewable form).
//
//go:embed openapi.yaml
var source []byte

// Version is the document's info.version.
const Version = "1.0.0"

// JSONFor returns the document as an instance serves it: JSON whose only
// server is baseURL (the instance's PUBLIC_BASE_URL) instead of the source's
// {publicBaseUrl} variable, so tools and the /docs page send requests to
// this instance. It panics if the embedded document does not load, which
// the package's tests rule out. The document is embedded, so the answer
// for a base URL never changes: it is made once per process (parsing and
// validating the document costs a fraction of a second, paid by every
// Handler, and the test suite builds hundreds).
func JSONFor(baseURL string) []byte {
	f, _ := jsonFor.LoadOrStore(baseURL, sync.OnceValue(func() []byte { return makeJSON(baseURL) }))
	return bytes.Clone(f.(func() []byte)())
}

// jsonFor holds, for each base URL asked for, a func returning its JSON.
var jsonFor sync.Map

func makeJSON(baseURL string) []byte {
	doc, err := Load()
	if err != nil {
		panic(fmt.Sprintf("openapi: embedded document: %v", err))
	}
	doc.Servers = openapi3.Servers{{URL: baseURL, Description: "This Boxoffice instance."}}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		panic(fmt.Sprintf("openapi: encoding the document as JSON: %v", err))
	}
	return out.Bytes()
}

// Load parses the embedded document and validates it with kin-openapi
// (structure, references, examples against their schemas). Each call
// returns a fresh *openapi3.T that the caller may keep and use read-only.
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(source)
	if err != nil {
		return nil, fmt.Errorf("openapi: parsing the document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	return doc, nil
}

// Handler serves JSONFor(baseURL) as application/json, cacheable for a
// while and with an ETag so clients can revalidate cheaply. Mount it outside
// the API key guard: the document is public.
func Handler(baseURL string) http.Handler {
	body := JSONFor(baseURL)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("ETag", etag)
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, "openapi.json", time.Time{}, bytes.NewReader(body))
	})
}
