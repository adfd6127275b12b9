package webpage

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
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
	fsys  fs.FS
	files map[string]*asset
}

// asset is a file of the page. Its content is not kept: an embedded file
// is read in place from the binary each time it is served, so the pages'
// scripts (about 6 MB, the GraphQL playground's and the API reference's
// mostly) are not a copy on the heap that the collector counts against
// the server's memory limit.
type asset struct {
	path        string
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
	a := &Assets{fsys: fsys, files: make(map[string]*asset, len(entries))}
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
		p := path.Join(dir, e.Name())
		h := hashFile(fsys, p)
		a.files[e.Name()] = &asset{path: p, contentType: ct, etag: `"` + h + `"`, version: h[:12]}
	}
	for _, name := range required {
		if a.files[name] == nil {
			panic("webpage: missing embedded asset " + path.Join(dir, name))
		}
	}
	return a
}

// hashFile returns the hex SHA-256 of the file at p, which must be
// seekable (embed.FS's files are): Serve hands it to http.ServeContent.
func hashFile(fsys fs.FS, p string) string {
	f, err := fsys.Open(p)
	if err != nil {
		panic("webpage: " + err.Error())
	}
	defer f.Close()
	if _, ok := f.(io.ReadSeeker); !ok {
		panic("webpage: " + p + " cannot seek; assets must come from an embed.FS")
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		panic("webpage: " + err.Error())
	}
	return hex.EncodeToString(sum.Sum(nil))
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
	file, err := a.fsys.Open(f.path)
	if err != nil { // opened at start; an embedded file does not go away
		panic("webpage: " + err.Error())
	}
	defer file.Close()
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, name, time.Time{}, file.(io.ReadSeeker))
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
