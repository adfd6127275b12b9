// Package apiref serves the API reference page, GET /docs: the service's
// OpenAPI document rendered by Scalar's API reference, whose "try it" client
// sends requests with the partner's X-API-Key to this server. Scalar's
// standalone bundle is embedded in the binary (assets/VERSIONS.txt names its
// version and license), so the page needs no CDN, fonts or network beyond
// the service itself, and a Content-Security-Policy keeps it that way.
package apiref

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/webpage"
)

// assetFS holds the browser scripts. VERSIONS.txt is documentation and is
// deliberately not embedded, so it is not served.
//
//go:embed assets/*.js
var assetFS embed.FS

// Asset file names, as served under the asset prefix.
const (
	scalarJS    = "scalar-api-reference.js"
	referenceJS = "reference.js"
)

// asset is one embedded file with what its responses need.
type asset struct {
	body    []byte
	etag    string // strong ETag, quoted
	version string // short content hash, for cache-busting URLs
}

// assets maps a file name to its asset; it is read-only after init.
var assets = loadAssets()

func loadAssets() map[string]*asset {
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic("apiref: " + err.Error())
	}
	m := make(map[string]*asset, len(entries))
	for _, e := range entries {
		body, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			panic("apiref: " + err.Error())
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])
		m[e.Name()] = &asset{body: body, etag: `"` + h + `"`, version: h[:12]}
	}
	for _, name := range []string{scalarJS, referenceJS} {
		if m[name] == nil {
			panic("apiref: missing embedded asset " + name)
		}
	}
	return m
}

// Config says where the page finds what it shows.
type Config struct {
	// DocumentURL is the OpenAPI document the page renders, e.g.
	// "/api/v1/openapi.json".
	DocumentURL string
	// AssetPrefix is the URL path the scripts are served under, e.g.
	// "/docs/assets/"; a missing trailing slash is added.
	AssetPrefix string
	// APIBaseURL is the server the document names (PUBLIC_BASE_URL), which
	// "try it" sends requests to. When its origin is not the page's own,
	// the Content-Security-Policy allows it as well.
	APIBaseURL string
}

// pageData is what pageTemplate renders; html/template escapes each value
// for where it lands.
type pageData struct {
	DocumentURL string
	ScalarJS    string
	ReferenceJS string
}

var pageTemplate = template.Must(template.New("apiref").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Boxoffice API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>The API reference needs JavaScript. The document itself is at <a href="{{.DocumentURL}}">{{.DocumentURL}}</a>.</noscript>
<div id="reference" data-document="{{.DocumentURL}}"></div>
<script src="{{.ScalarJS}}"></script>
<script src="{{.ReferenceJS}}"></script>
</body>
</html>
`))

// Handler returns the reference's handler. A request whose path begins with
// the asset prefix is for a script, answered with its content type, an ETag
// and a one-year immutable Cache-Control (the page links each with a
// content-hash query string); any other name under the prefix is 404. Every
// other path gets the page (text/html, Cache-Control: no-cache) with its
// Content-Security-Policy. Both answer GET and HEAD; other methods get 405
// with Allow: GET, HEAD. It panics if AssetPrefix does not begin with "/".
func Handler(cfg Config) http.Handler {
	if !strings.HasPrefix(cfg.AssetPrefix, "/") {
		panic("apiref: AssetPrefix must begin with /: " + strconv.Quote(cfg.AssetPrefix))
	}
	if !strings.HasSuffix(cfg.AssetPrefix, "/") {
		cfg.AssetPrefix += "/"
	}
	h := &handler{cfg: cfg, connectSrc: connectSources(cfg.APIBaseURL)}
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, pageData{
		DocumentURL: cfg.DocumentURL,
		ScalarJS:    h.assetURL(scalarJS),
		ReferenceJS: h.assetURL(referenceJS),
	}); err != nil {
		panic("apiref: rendering page: " + err.Error())
	}
	h.page = page.Bytes()
	return h
}

type handler struct {
	cfg        Config
	connectSrc string
	page       []byte
}

// connectSources is the CSP connect-src: this server, and the API's origin
// when the document names another one.
func connectSources(apiBase string) string {
	src := "'self'"
	if o := webpage.Origin(apiBase); o != "" {
		src += " " + o
	}
	return src
}

// csp allows scripts from this server only: nothing inline, no eval (the
// bundle's zod probes for eval once and falls back without it). Styles may
// be inline: the bundle adds style elements and attributes of its own, and
// CSS cannot run script. Requests go to this server and the API only, so
// nothing of a partner's key or data can leave for a third party.
func (h *handler) csp() string {
	return webpage.CSP(
		"script-src 'self'",
		"style-src 'self' 'unsafe-inline'",
		"img-src 'self' data:",
		"font-src 'self' data:",
		"connect-src "+h.connectSrc,
		"form-action 'none'",
	)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, h.cfg.AssetPrefix); ok {
		h.serveAsset(w, r, name)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	webpage.SetHeaders(hd, h.csp())
	hd.Set("Content-Length", strconv.Itoa(len(h.page)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(h.page)
	}
}

func (h *handler) assetURL(name string) string {
	return h.cfg.AssetPrefix + name + "?v=" + assets[name].version
}

func (h *handler) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	a := assets[name]
	if a == nil || path.Ext(name) != ".js" {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/javascript; charset=utf-8")
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Set("ETag", a.etag)
	hd.Set("X-Content-Type-Options", "nosniff")
	// ServeContent handles HEAD, If-None-Match and Range.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}
