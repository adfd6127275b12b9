package portal

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/*.css assets/*.js
var assetFS embed.FS

// AssetPrefix is the URL path the portal's stylesheet and script are served under.
const AssetPrefix = "/portal/assets/"

// assets are the portal's stylesheet and script; read-only after init.
var assets = webpage.LoadAssets(assetFS, "assets")

// serveAsset answers GET /portal/assets/{name}: a content-hashed URL, so it
// may be cached for good.
func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request) {
	if !assets.Serve(w, r, chi.URLParam(r, "name")) {
		h.message(w, r, http.StatusNotFound, "Not found", "There is no such file.")
	}
}

// fieldView is what the "field" template renders.
type fieldView struct {
	Page                          *page
	Name, Label, Type, Auto, Hint string
	Required                      bool
}

var funcs = template.FuncMap{
	"asset": func(name string) string { return assets.URL(AssetPrefix, name) },
	"field": func(p *page, name, label, typ, auto, hint string, required bool) fieldView {
		return fieldView{Page: p, Name: name, Label: label, Type: typ, Auto: auto, Hint: hint, Required: required}
	},
	"when":     when,
	"status":   func(s string) string { return strings.ReplaceAll(s, "_", " ") },
	"sentence": sentence,
}

// pages are the portal's templates, each with the layout.
var pages = func() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic("portal: " + err.Error())
	}
	m := map[string]*template.Template{}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		m[strings.TrimSuffix(base, ".html")] = template.Must(
			template.New("layout").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n))
	}
	return m
}()

// page is what every template renders: the layout's parts and the page's own.
type page struct {
	Title   string
	Nav     string
	Narrow  bool
	Session *accounts.Session
	CSRF    string
	Flash   string
	// Err is the refusal to show; its Details mark fields.
	Err *apperr.Error
	// Form holds the submitted values, Defaults what a field shows otherwise.
	Form     url.Values
	Defaults map[string]string

	Message      string
	Account      *store.Account
	Apps         []store.App
	App          *appView
	Order        *orderView
	Webhooks     *webhookView
	Reveal       []secret
	Token        string
	PasswordHint string
}

// Value is what the input name shows: what was submitted, or its default.
func (p *page) Value(name string) string {
	if vs, ok := p.Form[name]; ok && len(vs) > 0 {
		return vs[0]
	}
	return p.Defaults[name]
}

// FieldErr is the refusal of the input name, "" when it is fine.
func (p *page) FieldErr(name string) string {
	if p.Err == nil || len(p.Err.Details[name]) == 0 {
		return ""
	}
	return labels[name] + " " + p.Err.Details[name][0] + "."
}

// Problem is the notice above a form whose fields were refused.
func (p *page) Problem() string {
	if p.Err != nil && len(p.Err.Details) == 1 {
		for _, f := range p.Err.Details.Fields() {
			return p.FieldErr(f)
		}
	}
	return "Check the highlighted fields."
}

// labels name the inputs in messages, as the forms label them. The keys
// are provision's field names, which are also the forms' input names.
var labels = map[string]string{
	"name": "Name", "email": "Email", "password": "Password", "redirect-domain": "Redirect host",
	"webhook-url": "Webhook URL", "env": "Environment", "reference": "Reference", "status": "Status",
	"account": "Your account", "events": "The delivery log's page",
}

// secret is a key or secret shown once.
type secret struct{ ID, Label, Value string }

var passwordHint = fmt.Sprintf("At least %d characters; a few unrelated words make a strong one.", provision.MinPasswordLength)

// when prints an instant for people: UTC, to the minute.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2 Jan 2006 15:04 UTC")
}

// sentence starts a message with a capital letter and ends it with a stop.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// render writes a page with status.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	if p.Session != nil {
		p.CSRF = p.Session.CSRF()
	}
	if p.PasswordHint == "" {
		p.PasswordHint = passwordHint
	}
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		h.Log.ErrorContext(r.Context(), "portal page", "page", name, "error", err)
		http.Error(w, "Something went wrong; try again.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
