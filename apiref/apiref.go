// Package apiref serves the API reference page, GET /docs: the service's
// OpenAPI document rendered by Scalar's API reference, whose "try it" client
// sends requests with the partner's X-API-Key to this server. Scalar's
// standalone bundle is embedded in the binary (assets/VERSIONS.txt names its
// version and license), so the page needs no CDN, fonts or network beyond
// the service itself, and a Content-Security-Policy keeps it that way.
package apiref

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strconv"
	"strings"

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

// assets are the embedded scripts; read-only after init.
var assets = webpage.LoadAssets(assetFS, "assets", scalarJS, referenceJS)

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
	if webpage.ReadOnly(w, r) {
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, h.cfg.AssetPrefix); ok {
		if !assets.Serve(w, r, name) {
			webpage.NotFound(w, "There is no such file.")
		}
		return
	}
	webpage.ServePage(w, r, h.page, h.csp())
}

func (h *handler) assetURL(name string) string { return assets.URL(h.cfg.AssetPrefix, name) }
