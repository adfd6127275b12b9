// Package doorpage serves the door page (spec/fulfilment.md section 4):
// GET /door, where door staff paste a scanner key, pick a date of its event
// and check tickets in with the phone's camera or by typing a code. The
// page's script calls the check-in API (POST /api/v1/check-ins,
// /api/v1/check-ins/stats, and for offline work /api/v1/check-ins/manifest
// and /batch) with the key itself; this package serves the
// page, its embedded scripts (its own and the jsQR decoder, with jsQR's
// licence), the service worker that keeps the page opening without a
// network, and GET /door/dates, the one thing the API does not offer a
// scanner key: the dates of its event.
package doorpage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	texttemplate "text/template"
	"time"

	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
)

// Paths the page is served under and the API routes its script calls.
const (
	PagePath     = "/door"
	AssetPrefix  = "/door/assets/"
	DatesPath    = "/door/dates"
	LicensesPath = "/door/licenses.txt"
	// WorkerPath is the page's service worker, which keeps the page
	// opening without a network; its scope is PagePath.
	WorkerPath   = "/door/sw.js"
	ManifestPath = "/api/v1/check-ins/manifest"
	BatchPath    = "/api/v1/check-ins/batch"
	CheckInsPath = "/api/v1/check-ins"
	StatsPath    = "/api/v1/check-ins/stats"
)

// Event is the event a scanner key covers, as the page shows it.
type Event struct {
	ID   int64
	Name string
	// Environment is the key's: "test" or "live". The page marks a test
	// key's screens TEST.
	Environment string
	// Dates are every date of the event, in start order.
	Dates []Date
}

// Date is one date of the event, for staff to pick.
type Date struct {
	ID int64
	// Start and End are the date's instants in the event's timezone; End
	// is zero when the date has none.
	Start, End time.Time
	// Venue is the venue's name; empty for an online date.
	Venue string
}

// Handler serves the door page, its assets and GET /door/dates.
type Handler struct {
	// Event authenticates a scanner key and returns its event with its
	// dates. key is the X-API-Key header exactly as sent ("" when absent),
	// so Event does all of the key's checks, the failed-authentication
	// limit included, as the check-in routes do. Errors: an *apperr.Error
	// (missing_api_key, invalid_api_key, scanner_key_required,
	// rate_limit_exceeded, …) is answered with its status and code; any
	// other error is answered 500 internal_error and logged, so it must not
	// carry the key.
	Event func(ctx context.Context, key string) (*Event, error)
	// WriteError renders Event's errors as the API does; nil writes the
	// spec's {error: {code, message}} with the code's status (and
	// Retry-After) itself, logging 5xx answers to Log.
	WriteError func(w http.ResponseWriter, r *http.Request, err error)
	// Now is the clock that marks dates as today or over; nil is time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Routes registers on r: GET and HEAD of /door (the page), of
// /door/assets/{name} (the scripts, content-hashed and cached for a year),
// of /door/licenses.txt (the bundled decoder's licence), of /door/sw.js
// (the service worker) and of /door/dates
// (the key's event and dates, JSON); everything else under /door/ is the
// HTML 404 page, and other methods get the HTML 405 page.
func (h *Handler) Routes(r chi.Router) {
	r.HandleFunc(PagePath, h.page)
	r.HandleFunc(AssetPrefix+"{name}", h.asset)
	r.HandleFunc(LicensesPath, h.licenses)
	r.HandleFunc(WorkerPath, h.worker)
	r.HandleFunc(DatesPath, h.dates)
	r.HandleFunc(PagePath+"/*", func(w http.ResponseWriter, _ *http.Request) {
		webpage.NotFound(w, "There is no door page at this address.")
	})
}

//go:embed page.html
var pageHTML string

//go:embed assets/*.js assets/jsQR.LICENSE
var assetFS embed.FS

// The embedded scripts: the page's own and the decoder.
const (
	doorJS = "door.js"
	jsQRJS = "jsQR.js"
)

var assets = webpage.LoadAssets(assetFS, "assets", doorJS, jsQRJS)

// licensesText is what /door/licenses.txt answers: the decoder's licence,
// which its Apache 2.0 terms ask to hand on with it.
var licensesText = func() []byte {
	lic, err := assetFS.ReadFile("assets/jsQR.LICENSE")
	if err != nil {
		panic("doorpage: " + err.Error())
	}
	return append([]byte("The door page decodes QR codes with jsQR 1.4.0 (https://github.com/cozmo/jsQR),\n"+
		"served unmodified under the Apache License 2.0, whose text follows.\n\n"), lic...)
}()

// pageView is what page.html is filled with once: where the scripts are
// and the routes the script calls.
type pageView struct {
	JSQR, DoorJS                     string
	Dates, CheckIns, Stats, Licenses string
	Manifest, Batch, Worker, Scope   string
}

// renderedPage is the page, the same for everyone, rendered at start.
var renderedPage = func() []byte {
	var buf bytes.Buffer
	err := template.Must(template.New("door").Parse(pageHTML)).Execute(&buf, pageView{
		JSQR:     assets.URL(AssetPrefix, jsQRJS),
		DoorJS:   assets.URL(AssetPrefix, doorJS),
		Dates:    DatesPath,
		CheckIns: CheckInsPath,
		Stats:    StatsPath,
		Licenses: LicensesPath,
		Manifest: ManifestPath,
		Batch:    BatchPath,
		Worker:   WorkerPath,
		Scope:    PagePath,
	})
	if err != nil {
		panic("doorpage: " + err.Error())
	}
	return buf.Bytes()
}()

//go:embed sw.js
var workerJS string

// renderedWorker is the service worker, rendered at start with what it
// caches: the page, its scripts (by their content-hashed URLs) and the
// licence. Its cache is named by the page's hash, so every release that
// changes the page or a script installs a new worker, which drops the old
// cache.
var renderedWorker = func() []byte {
	quote := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			panic("doorpage: " + err.Error())
		}
		return string(b)
	}
	sum := sha256.Sum256(renderedPage)
	var buf bytes.Buffer
	err := texttemplate.Must(texttemplate.New("sw").Parse(workerJS)).Execute(&buf, struct {
		Version, Page, Licenses string
		Assets                  []string
	}{
		Version:  hex.EncodeToString(sum[:8]),
		Page:     quote(PagePath),
		Licenses: quote(LicensesPath),
		Assets:   []string{quote(assets.URL(AssetPrefix, jsQRJS)), quote(assets.URL(AssetPrefix, doorJS))},
	})
	if err != nil {
		panic("doorpage: " + err.Error())
	}
	return buf.Bytes()
}()

// workerCSP is the service worker's own policy: it runs no other script
// and fetches from this server only.
var workerCSP = webpage.CSP("connect-src 'self'")

// pageCSP runs the page's two scripts from this server and nothing inline,
// allows its inline style by its hash, and lets it talk to this server
// only; its forms never submit (the script handles them).
var pageCSP = webpage.NewPage("door", pageHTML,
	"script-src 'self'", "worker-src 'self'", "img-src data:", "connect-src 'self'", "form-action 'none'").CSP()

// private sets the headers of every answer but the assets: the page's
// policy, no caching (the page handles a secret and live counts), no
// Referer, no indexing, and the camera for this origin only.
func private(h http.Header) {
	webpage.SetHeaders(h, pageCSP)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex")
	h.Set("Permissions-Policy", "camera=(self), microphone=(), geolocation=()")
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	if webpage.ReadOnly(w, r) {
		return
	}
	respond(w, r, http.StatusOK, "text/html; charset=utf-8", renderedPage)
}

func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	if webpage.ReadOnly(w, r) {
		return
	}
	if !assets.Serve(w, r, chi.URLParam(r, "name")) {
		webpage.NotFound(w, "There is no such file.")
	}
}

// worker serves the service worker: revalidated on every load (a browser
// checks a worker for updates itself, but no-cache says so to proxies
// too), allowed to control /door itself and not only /door/….
func (h *Handler) worker(w http.ResponseWriter, r *http.Request) {
	if webpage.ReadOnly(w, r) {
		return
	}
	hd := w.Header()
	webpage.SetHeaders(hd, workerCSP)
	hd.Set("Service-Worker-Allowed", PagePath)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Type", "text/javascript; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(len(renderedWorker)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(renderedWorker)
	}
}

func (h *Handler) licenses(w http.ResponseWriter, r *http.Request) {
	if webpage.ReadOnly(w, r) {
		return
	}
	respond(w, r, http.StatusOK, "text/plain; charset=utf-8", licensesText)
}

// respond writes an answer with the private headers; a HEAD gets the
// headers alone.
func respond(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	h := w.Header()
	private(h)
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) log() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.Default()
}
