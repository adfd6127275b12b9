// Package playground serves the GraphiQL playground for the GraphQL API: an
// HTML page that runs GraphiQL against the API's endpoint, and the GraphiQL
// and React browser bundles it loads. The bundles are embedded in the binary
// (see assets/VERSIONS.txt for their versions and licenses), so the
// playground needs no CDN and no network beyond the API itself. GraphiQL's
// bundle includes the graphql-ws client, which runs subscriptions over
// WebSocket (graphql-transport-ws).
package playground

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/webpage"
)

// assetFS holds the browser bundles. VERSIONS.txt is documentation and is
// deliberately not embedded, so it is not served.
//
//go:embed assets/*.js assets/*.css
var assetFS embed.FS

// Asset file names, as served under the asset prefix.
const (
	graphiqlJS  = "graphiql.min.js"
	graphiqlCSS = "graphiql.min.css"
	reactJS     = "react.production.min.js"
	reactDOMJS  = "react-dom.production.min.js"
)

// assets are the embedded bundles; read-only after init.
var assets = webpage.LoadAssets(assetFS, "assets", graphiqlJS, graphiqlCSS, reactJS, reactDOMJS)

// KeyStorage is the localStorage item where the page keeps the pasted API
// key, in the browser only.
const KeyStorage = "boxoffice.apiKey"

// The defaults GraphiQL starts with when the browser has nothing stored.
const (
	defaultQuery = `# Paste your test key (printed by ` + "`make run`" + `) into the API key field above;
# this browser keeps it. Press the play button to run the query, and open
# the book icon for the schema's documentation.
query Catalog {
  events(perPage: 5) {
    pageInfo { total page totalPages }
    nodes {
      id name nextStartdateDisplay
      pricing { hasFreeTickets hasPaidTickets isEntirelyFree }
      dates { id startdateDisplay venue { name city } tickets { name effectivePriceMoney { amount currency } quantityAvailable } }
    }
  }
}

# Live updates run here too, over WebSocket with the same key: uncomment
# this operation, put a date id from the answer above in Variables
# ({"date": 16}), run it, and buy tickets meanwhile. (Kept as a comment so
# the play button runs the query above without asking which operation.)
# subscription Availability($date: Int!) {
#   availabilityChanged(eventDateId: $date) { eventDateId tickets { ticketId quantityAvailable } }
# }
`
)

// pageData is what pageTemplate renders. html/template escapes each value
// for where it lands: text, URL attribute or JavaScript string.
type pageData struct {
	Endpoint        string
	SubscriptionURL string
	KeyStorage      string
	DefaultQuery    string
	GraphiQLCSS     string
	GraphiQLJS      string
	ReactJS         string
	ReactDOMJS      string
}

var pageTemplate = template.Must(template.New("playground").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Boxoffice GraphQL playground</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{{.GraphiQLCSS}}">
<style>
  html, body { height: 100%; margin: 0; }
  body { display: flex; flex-direction: column; overflow: hidden; }
  .bo-header {
    flex: none; display: flex; flex-wrap: wrap; align-items: center; gap: 0.35rem 0.75rem;
    padding: 0.45rem 1rem; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
    color: hsl(219, 28%, 32%); background: hsl(219, 28%, 97%);
    border-bottom: 1px solid hsla(219, 28%, 32%, 0.12);
  }
  .bo-header strong { font-weight: 600; color: hsl(219, 28%, 18%); }
  .bo-header code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
  .bo-key { display: flex; align-items: center; gap: 0.4rem; flex: 1 1 16rem; min-width: 0; max-width: 28rem; }
  .bo-key input {
    flex: 1; min-width: 0; padding: 0.25rem 0.45rem; font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
    color: inherit; background: hsl(0, 0%, 100%); border: 1px solid hsla(219, 28%, 32%, 0.3); border-radius: 4px;
  }
  .bo-key-state { white-space: nowrap; opacity: 0.75; }
  .bo-hint { opacity: 0.75; }
  /* No key yet: say where one comes from, and ask for it. */
  .bo-start {
    flex: 1 1 100%; margin: 0.15rem 0 0.1rem; padding: 0.55rem 0.75rem; border-radius: 6px;
    color: hsl(219, 28%, 18%); background: hsl(45, 100%, 92%); border: 1px solid hsl(45, 80%, 72%);
  }
  .bo-start[hidden] { display: none; }
  .bo-start strong { font-weight: 600; }
  body.bo-nokey .bo-key input { border-color: hsl(38, 90%, 45%); box-shadow: 0 0 0 2px hsla(38, 90%, 50%, 0.35); }
  @media (prefers-color-scheme: dark) {
    body:not(.graphiql-light) .bo-header { color: hsl(219, 29%, 78%); background: hsl(219, 29%, 14%); border-bottom-color: hsla(219, 29%, 78%, 0.12); }
    body:not(.graphiql-light) .bo-header strong { color: hsl(219, 29%, 92%); }
    body:not(.graphiql-light) .bo-key input { background: hsl(219, 29%, 18%); }
  }
  body.graphiql-dark .bo-header { color: hsl(219, 29%, 78%); background: hsl(219, 29%, 14%); border-bottom-color: hsla(219, 29%, 78%, 0.12); }
  body.graphiql-dark .bo-header strong { color: hsl(219, 29%, 92%); }
  body.graphiql-dark .bo-key input { background: hsl(219, 29%, 18%); }
  #graphiql { flex: 1; min-height: 0; }
  /* Phones: GraphiQL lays its panes side by side at any width; stack them. */
  @media (max-width: 640px) {
    .bo-endpoint, .bo-hint { display: none; }
    .bo-header { padding: 0.4rem 0.6rem; }
    .bo-key { flex-basis: 100%; max-width: none; }
    #graphiql .graphiql-container .graphiql-sidebar { padding: 4px; }
    #graphiql .graphiql-container .graphiql-main { flex-direction: column; min-width: 0; }
    #graphiql .graphiql-container .graphiql-main > .graphiql-plugin { flex: 1 1 0 !important; min-height: 0; max-width: none; border-right: 0; }
    #graphiql .graphiql-container .graphiql-main > .graphiql-horizontal-drag-bar { display: none; }
    #graphiql .graphiql-container .graphiql-plugin:not([style*="display: none"]) ~ .graphiql-sessions { display: none; }
    #graphiql .graphiql-container .graphiql-sessions { margin: 0; border-radius: 0; min-width: 0; }
    #graphiql .graphiql-container .graphiql-session { flex-direction: column; }
    #graphiql .graphiql-container .graphiql-session .graphiql-horizontal-drag-bar { display: none; }
    #graphiql .graphiql-container .graphiql-editors, #graphiql .graphiql-container .graphiql-response { flex: 1 1 0 !important; min-height: 0; }
    #graphiql .graphiql-container .graphiql-editors { border-radius: 0; }
  }
</style>
</head>
<body>
<header class="bo-header">
  <strong>Boxoffice GraphQL playground</strong>
  <span class="bo-endpoint">endpoint <code>{{.Endpoint}}</code></span>
  <label class="bo-key">API key
    <input id="bo-key" type="password" autocomplete="off" spellcheck="false" placeholder="svc_test_…" aria-describedby="bo-key-state">
    <span id="bo-key-state" class="bo-key-state" aria-live="polite"></span>
  </label>
  <span class="bo-hint">Sent as <code>X-API-Key</code> with every request, docs included; kept in this browser (localStorage) only. Use a <code>svc_test_</code> key.</span>
  <p id="bo-start" class="bo-start" role="status" hidden><strong>Paste your test key to start.</strong> It begins <code>svc_test_</code>: <code>make run</code> printed one, and the developer portal (<a href="/portal/">/portal</a>) issues a new one. Then press ▶ to run the query, and open the book icon for the schema.</p>
</header>
<div id="graphiql">Loading the playground…</div>
<script src="{{.ReactJS}}"></script>
<script src="{{.ReactDOMJS}}"></script>
<script src="{{.GraphiQLJS}}"></script>
<script>
  (function () {
    var endpoint = {{.Endpoint}};
    var subscriptionUrl = {{.SubscriptionURL}};
    var storageItem = {{.KeyStorage}};
    var input = document.getElementById("bo-key");
    var state = document.getElementById("bo-key-state");
    var start = document.getElementById("bo-start");

    function load() { try { return localStorage.getItem(storageItem) || ""; } catch (e) { return ""; } }
    function save(key) {
      try {
        if (key) { localStorage.setItem(storageItem, key); } else { localStorage.removeItem(storageItem); }
        return true;
      } catch (e) { return false; }
    }

    // noKey is what a run answers before any key is pasted: a pointer to
    // the key field, not a request the server would refuse.
    var noKey = { hint: "Paste your test key (svc_test_…) into the API key field above, then press ▶ again." };

    // fetcherFor adds the key to every request GraphiQL makes (queries and
    // the introspection behind the docs), unless the Headers tab sets a
    // non-empty X-API-Key of its own. subscriptionUrl, when the server
    // offers one, carries the key in the WebSocket's connection_init.
    function fetcherFor(key) {
      var opts = { url: endpoint };
      if (subscriptionUrl) {
        var ws = new URL(subscriptionUrl, window.location.href);
        if (ws.protocol === "https:") { ws.protocol = "wss:"; } else if (ws.protocol === "http:") { ws.protocol = "ws:"; }
        opts.subscriptionUrl = ws.href;
        opts.wsConnectionParams = key ? { "X-API-Key": key } : {};
      }
      var base = GraphiQL.createFetcher(opts);
      return function (params, fetchOpts) {
        var headers = {}, own = false, given = (fetchOpts && fetchOpts.headers) || {};
        Object.keys(given).forEach(function (h) {
          if (h.toLowerCase() !== "x-api-key") { headers[h] = given[h]; } else if (given[h]) { headers[h] = given[h]; own = true; }
        });
        if (key && !own) { headers["X-API-Key"] = key; }
        if (!key && !own) { return Promise.resolve(noKey); }
        return base(params, Object.assign({}, fetchOpts, { headers: headers }));
      };
    }

    var root = ReactDOM.createRoot(document.getElementById("graphiql"));
    function render(key) {
      // Without a key the page asks for one and fetches nothing (schema
      // null: no introspection the server would refuse). A new fetcher
      // makes GraphiQL fetch the schema again, with the key: the docs load
      // without a manual refresh.
      start.hidden = !!key;
      document.body.classList.toggle("bo-nokey", !key);
      root.render(React.createElement(GraphiQL, {
        fetcher: fetcherFor(key),
        schema: key ? undefined : null,
        schemaDescription: true,
        defaultQuery: {{.DefaultQuery}},
        isHeadersEditorEnabled: true,
        shouldPersistHeaders: true
      }));
    }

    var current = load();
    input.value = current;
    state.textContent = current ? "saved" : "";
    var timer;
    function apply() {
      clearTimeout(timer);
      var key = input.value.trim();
      if (key === current) { return; }
      current = key;
      state.textContent = !key ? "" : save(key) ? "saved" : "not saved (storage blocked)";
      if (!key) { save(""); }
      render(key);
    }
    input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 400); });
    input.addEventListener("change", apply);
    render(current);
  })();
</script>
</body>
</html>
`))

// Handler returns the playground's handler. endpoint is the URL GraphiQL
// POSTs its JSON requests to (for example "/graphql"); assetPrefix is the
// URL path the embedded bundles are served under (for example
// "/playground/assets/"; a missing trailing slash is added). It panics if
// assetPrefix does not begin with "/".
//
// A request whose path begins with assetPrefix is for a bundle:
// graphiql.min.js, graphiql.min.css, react.production.min.js or
// react-dom.production.min.js, answered with its JavaScript or CSS content
// type, an ETag and a one-year immutable Cache-Control (the page links them
// with a content-hash query string, so a new build's bundles get new URLs);
// any other name under the prefix is 404. Every other path gets the
// playground page (text/html, Cache-Control: no-cache), so the handler can
// be mounted at the GraphQL endpoint's own path for GET requests and at
// assetPrefix. Both answer GET and HEAD; other methods get 405 with
// Allow: GET, HEAD.
//
// Options add to the page; WithSubscriptions is the hook for GraphQL
// subscriptions.
func Handler(endpoint, assetPrefix string, opts ...Option) http.Handler {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if !strings.HasPrefix(assetPrefix, "/") {
		panic("playground: assetPrefix must begin with /: " + strconv.Quote(assetPrefix))
	}
	if !strings.HasSuffix(assetPrefix, "/") {
		assetPrefix += "/"
	}
	assetURL := func(name string) string { return assets.URL(assetPrefix, name) }
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, pageData{
		Endpoint:        endpoint,
		SubscriptionURL: o.subscriptionURL,
		KeyStorage:      KeyStorage,
		DefaultQuery:    defaultQuery,
		GraphiQLCSS:     assetURL(graphiqlCSS),
		GraphiQLJS:      assetURL(graphiqlJS),
		ReactJS:         assetURL(reactJS),
		ReactDOMJS:      assetURL(reactDOMJS),
	}); err != nil {
		panic("playground: rendering page: " + err.Error())
	}
	return &handler{page: buf.Bytes(), assetPrefix: assetPrefix, csp: contentSecurityPolicy(buf.String())}
}

// contentSecurityPolicy allows the bundles from this server and the page's
// own inline script by its hash, computed from the rendered page (the
// script holds the endpoint and the default query): nothing else runs.
// Styles may be inline: GraphiQL adds style elements and attributes of its
// own, and CSS cannot run script. Requests (and the subscription
// WebSocket) go to this server only.
func contentSecurityPolicy(page string) string {
	scripts, _ := webpage.InlineHashes(page)
	return webpage.CSP(
		strings.Join(append([]string{"script-src 'self'"}, scripts...), " "),
		"style-src 'self' 'unsafe-inline'",
		"img-src 'self' data:",
		"font-src 'self' data:",
		"connect-src 'self'",
		"form-action 'none'",
	)
}

// Option configures the page.
type Option func(*options)

type options struct {
	subscriptionURL string
}

// WithSubscriptions makes the page run subscriptions over the WebSocket at
// url (graphql-transport-ws, ws:// or wss://, or a path the browser
// resolves), sending the pasted key as X-API-Key in connection_init.
func WithSubscriptions(url string) Option {
	return func(o *options) { o.subscriptionURL = url }
}

type handler struct {
	page        []byte
	assetPrefix string
	csp         string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if webpage.ReadOnly(w, r) {
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, h.assetPrefix); ok {
		if !assets.Serve(w, r, name) {
			webpage.NotFound(w, "There is no such file.")
		}
		return
	}
	webpage.ServePage(w, r, h.page, h.csp)
}
