// Package webpage holds what every HTML page the service shows a browser
// shares, so each rule is written once: the security headers (a
// Content-Security-Policy that forbids framing, nosniff, no referrer), the
// policy's hashes of a page's inline <style> and <script> elements,
// refusal of form posts from other sites, and the HTML page that answers an
// unknown address or a refused request.
package webpage

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// CSP returns a Content-Security-Policy: default-src 'none', then the
// page's own directives, then base-uri 'none' and frame-ancestors 'none'
// (no page of the service may be framed, so none can be clickjacked).
func CSP(directives ...string) string {
	all := append([]string{"default-src 'none'"}, directives...)
	return strings.Join(append(all, "base-uri 'none'", "frame-ancestors 'none'"), "; ")
}

// SetHeaders sets the headers every page carries: its policy, nosniff,
// X-Frame-Options for browsers older than frame-ancestors, and
// Referrer-Policy: same-origin. Page addresses hold order references and
// reset tokens, so no other site gets a Referer. Not no-referrer: under
// it a browser sends every form post with "Origin: null", and where it
// sends no Sec-Fetch-Site either (plain http on a host other than
// localhost) RefuseCrossSite could no longer tell the page's own posts.
func SetHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}

// inline matches an inline <script> or <style> element and its text; a
// <script src=…> has no text and gets no hash.
var inline = regexp.MustCompile(`(?is)<(script|style)(\s[^>]*)?>(.*?)</(?:script|style)\s*>`)

// Hash returns the policy source allowing an inline element whose text is
// exactly text: 'sha256-…'.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// InlineHashes returns the hash sources of the inline <script> and <style>
// elements of an HTML page, in order, for script-src and style-src.
func InlineHashes(page string) (scripts, styles []string) {
	for _, m := range inline.FindAllStringSubmatch(page, -1) {
		if strings.TrimSpace(m[3]) == "" {
			continue
		}
		if strings.EqualFold(m[1], "script") {
			scripts = append(scripts, Hash(m[3]))
		} else {
			styles = append(styles, Hash(m[3]))
		}
	}
	return scripts, styles
}

// Page is an HTML template embedded in the binary, served with the
// policy it needs: its inline styles and scripts are allowed by their
// hashes, computed once from the template's text, and nothing else runs.
type Page struct {
	tmpl       *template.Template
	directives []string
}

// NewPage parses src and builds its policy: the hashes of its inline
// elements, then directives (e.g. "form-action 'self'"). It panics when an
// inline element holds a template action, whose rendered text (and hash)
// could differ from the source's.
func NewPage(name, src string, directives ...string) *Page {
	for _, m := range inline.FindAllStringSubmatch(src, -1) {
		if strings.Contains(m[3], "{{") {
			panic("webpage: " + name + ": an inline <" + m[1] + "> holds a template action, so its hash is unknown until rendered")
		}
	}
	scripts, styles := InlineHashes(src)
	var d []string
	if len(scripts) > 0 {
		d = append(d, "script-src "+strings.Join(scripts, " "))
	}
	if len(styles) > 0 {
		d = append(d, "style-src "+strings.Join(styles, " "))
	}
	return &Page{tmpl: template.Must(template.New(name).Parse(src)), directives: append(d, directives...)}
}

// CSP is the page's Content-Security-Policy with the answer's own
// directives added.
func (p *Page) CSP(more ...string) string {
	return CSP(append(append([]string(nil), p.directives...), more...)...)
}

// Render writes the page filled with data, with status, the page headers
// and Cache-Control: no-store (pages show orders as they are now); more
// adds directives for this answer, such as FormAction's. A template that
// fails writes the error page instead and returns the error.
func (p *Page) Render(w http.ResponseWriter, status int, data any, more ...string) error {
	var buf bytes.Buffer
	if err := p.tmpl.Execute(&buf, data); err != nil {
		internalError(w)
		return err
	}
	h := w.Header()
	SetHeaders(h, p.CSP(more...))
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// Origin returns the origin, scheme://host[:port], of an http or https
// URL, or "" for anything else.
func Origin(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// FormAction returns the form-action directive of a page whose forms post
// to the page's own site and are answered with a redirect to targets:
// browsers hold the redirect to the directive too, so the partner's or
// the payment provider's origin must be named.
func FormAction(targets ...string) string {
	d := "form-action 'self'"
	seen := map[string]bool{}
	for _, t := range targets {
		if o := Origin(t); o != "" && !seen[o] {
			seen[o] = true
			d += " " + o
		}
	}
	return d
}

var messagePage = NewPage("message", `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
<style>
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; background: #f4f6fb; }
  main { max-width: 34rem; margin: 3rem auto; padding: 0 1rem; }
  .card { background: #fff; border: 1px solid #e3e6ee; border-radius: 14px; padding: 1.5rem; box-shadow: 0 6px 24px rgba(29,35,48,.06); }
  h1 { font-size: 1.35rem; margin: 0 0 .5rem; }
  p { margin: 0; color: #5d6678; }
</style>
</head>
<body>
<main><div class="card"><h1>{{.Title}}</h1><p>{{.Text}}</p></div></main>
</body>
</html>
`, "img-src data:")

// Message writes a short HTML page, a title and a sentence, with status
// and the page headers: what a browser shows instead of a bare text or
// the API's JSON.
func Message(w http.ResponseWriter, status int, title, text string) {
	_ = messagePage.Render(w, status, struct{ Title, Text string }{title, text})
}

// NotFound writes the HTML 404 page with text saying what does not exist.
func NotFound(w http.ResponseWriter, text string) {
	Message(w, http.StatusNotFound, "Not found", text)
}

// Fail logs err and writes the HTML 500 page, which says nothing of it.
func Fail(w http.ResponseWriter, r *http.Request, log *slog.Logger, what string, err error) {
	log.ErrorContext(r.Context(), what, "error", err)
	internalError(w)
}

func internalError(w http.ResponseWriter) {
	Message(w, http.StatusInternalServerError, "Something went wrong", "Something went wrong on our side; try again.")
}

// crossOrigin refuses state-changing requests from other sites.
var crossOrigin = func() *http.CrossOriginProtection {
	c := http.NewCrossOriginProtection()
	c.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		Message(w, http.StatusForbidden, "Refused",
			"This form was sent from another site, so it was not accepted. Open the page itself and use its buttons.")
	}))
	return c
}()

// RefuseCrossSite wraps a form's handler: a POST (any unsafe method) that
// a browser sends from another origin — by Sec-Fetch-Site, or Origin
// against Host — is answered 403 with the HTML page and never reaches
// next (http.CrossOriginProtection). Requests without those headers are
// not from a browser form and pass.
func RefuseCrossSite(next http.Handler) http.Handler {
	return crossOrigin.Handler(next)
}
