package webpage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"time"
)

// Assets are the embedded scripts and stylesheets of a page. A page links
// each by a URL that carries a hash of the file's content, so a new build's
// files get new URLs and a served file may be cached for good.
type Assets struct {
	files map[string]*asset
}

type asset struct {
	body        []byte
	contentType string
	etag        string // strong, quoted
	version     string // short content hash, for URLs
}

// LoadAssets reads the .js and .css files of dir in fsys. The files are
// embedded, so a read error or a missing required name is a build error:
// it panics.
func LoadAssets(fsys fs.FS, dir string, required ...string) *Assets {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		panic("webpage: " + err.Error())
	}
	a := &Assets{files: make(map[string]*asset, len(entries))}
	for _, e := range entries {
		var ct string
		switch path.Ext(e.Name()) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		default:
			continue
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			panic("webpage: " + err.Error())
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])
		a.files[e.Name()] = &asset{body: body, contentType: ct, etag: `"` + h + `"`, version: h[:12]}
	}
	for _, name := range required {
		if a.files[name] == nil {
			panic("webpage: missing embedded asset " + path.Join(dir, name))
		}
	}
	return a
}

// Version returns the short content hash of the named file; it panics for
// a name that was not loaded: a page naming a file that is not there is a
// build error.
func (a *Assets) Version(name string) string {
	f := a.files[name]
	if f == nil {
		panic("webpage: no asset " + strconv.Quote(name))
	}
	return f.version
}

// URL returns the path a page links the named file by when the assets are
// served under prefix: prefix + name + "?v=" + its version.
func (a *Assets) URL(prefix, name string) string {
	return prefix + name + "?v=" + a.Version(name)
}

// Serve answers a GET or HEAD for the named file: its content type, its
// ETag, a one-year immutable Cache-Control and nosniff (ServeContent
// handles If-None-Match and Range). For a name it does not hold it writes
// nothing and reports false, so the caller answers with its own 404 page.
func (a *Assets) Serve(w http.ResponseWriter, r *http.Request, name string) bool {
	f := a.files[name]
	if f == nil {
		return false
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	return true
}

// ReadOnly answers a request whose method is neither GET nor HEAD with
// 405, Allow: GET, HEAD and the HTML message page, and reports whether it
// did: for handlers that only show pages and files.
func ReadOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	w.Header().Set("Allow", "GET, HEAD")
	Message(w, http.StatusMethodNotAllowed, "Method not allowed", "This address answers GET and HEAD only.")
	return true
}

// ServePage answers with a rendered page that is the same for everyone:
// text/html, Cache-Control: no-cache, the page headers with csp, and the
// body unless the request is HEAD.
func ServePage(w http.ResponseWriter, r *http.Request, page []byte, csp string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	SetHeaders(h, csp)
	h.Set("Content-Length", strconv.Itoa(len(page)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(page)
	}
}
