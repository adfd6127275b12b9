// Package mailpage shows the development mailbox on the admin listener:
// GET /mail lists the messages, newest first; GET /mail/{id} shows one,
// its headers, its HTML part in a sandboxed frame that runs no script and
// loads nothing from another host, its text part and its attachments, each
// downloaded from GET /mail/{id}/attachments/{n} (n counts from 1). The
// mailbox holds buyers' addresses and ticket links: never mount it on the
// public listener.
package mailpage

import (
	_ "embed"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
)

// ListLimit is how many of the newest messages the list shows.
const ListLimit = 100

var (
	//go:embed list.html
	listHTML string
	//go:embed message.html
	messageHTML string

	listPage = webpage.NewPage("mail list", listHTML, "img-src data:")
	// The HTML part is the frame's srcdoc, and a srcdoc document lives
	// under its parent's policy: the message's own <style> elements and
	// style attributes are its look, so they are allowed (by the CSP3
	// directives; a browser without them keeps this page's hashes and shows
	// the part unstyled). Scripts, and every load, stay refused.
	messagePage = webpage.NewPage("mail message", messageHTML, "img-src data:",
		"style-src-elem 'unsafe-inline'", "style-src-attr 'unsafe-inline'", "form-action 'none'")
)

// Handler serves the mailbox pages.
type Handler struct {
	Mailbox *mail.Mailbox
	Log     *slog.Logger
}

// Routes registers the pages on r.
func (h *Handler) Routes(r chi.Router) {
	r.Get("/mail", h.list)
	r.Get("/mail/{id}", h.message)
	r.Get("/mail/{id}/attachments/{n}", h.attachment)
}

type listView struct {
	Messages []listItem
	More     bool // the list stops at ListLimit
}

type listItem struct {
	ID                 int64
	To, Subject, Order string
	When, ISO          string
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	ms, err := h.Mailbox.Recent(r.Context(), ListLimit)
	if err != nil {
		webpage.Fail(w, r, h.Log, "mailbox list", err)
		return
	}
	v := listView{Messages: make([]listItem, len(ms)), More: len(ms) == ListLimit}
	for i, m := range ms {
		v.Messages[i] = listItem{ID: m.ID, To: m.To, Subject: orNoSubject(m.Subject), When: when(m.CreatedAt),
			ISO: m.CreatedAt.Format(time.RFC3339)}
		if m.OrderReference != nil {
			v.Messages[i].Order = *m.OrderReference
		}
	}
	h.render(w, r, listPage, v)
}

type messageView struct {
	Subject     string
	Headers     []mail.Header
	Order       string
	Text, HTML  string
	Attachments []attachmentItem
}

type attachmentItem struct {
	Name, Type, Size, URL string
}

// frameHead opens the HTML part's frame document: links leave the frame
// for a new tab (the sandbox allows that, and nothing else), and send no
// Referer.
const frameHead = `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><base target="_blank">`

func (h *Handler) message(w http.ResponseWriter, r *http.Request) {
	m, ok := h.load(w, r)
	if !ok {
		return
	}
	v := messageView{Subject: orNoSubject(m.Subject), Headers: m.Headers, Text: m.TextBody}
	if m.OrderReference != nil {
		v.Order = *m.OrderReference
	}
	if m.HTMLBody != "" {
		v.HTML = frameHead + m.HTMLBody
	}
	for i, a := range m.Attachments {
		v.Attachments = append(v.Attachments, attachmentItem{Name: a.Name, Type: a.ContentType, Size: size(len(a.Data)),
			URL: fmt.Sprintf("/mail/%d/attachments/%d", m.ID, i+1)})
	}
	h.render(w, r, messagePage, v)
}

// attachment downloads a file of a message, never shown in place: a
// message's file is whatever its sender made it.
func (h *Handler) attachment(w http.ResponseWriter, r *http.Request) {
	m, ok := h.load(w, r)
	if !ok {
		return
	}
	n, err := strconv.Atoi(chi.URLParam(r, "n"))
	if err != nil || n < 1 || n > len(m.Attachments) {
		webpage.NotFound(w, fmt.Sprintf("Mail message %d has no attachment %s.", m.ID, chi.URLParam(r, "n")))
		return
	}
	a := m.Attachments[n-1]
	hd := w.Header()
	hd.Set("Content-Type", contentType(a.ContentType))
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": a.Name})
	if disposition == "" {
		disposition = "attachment"
	}
	hd.Set("Content-Disposition", disposition)
	hd.Set("Content-Length", strconv.Itoa(len(a.Data)))
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	_, _ = w.Write(a.Data)
}

// load reads the message of the request's {id}, answering 404 for one
// that does not exist.
func (h *Handler) load(w http.ResponseWriter, r *http.Request) (*mail.Stored, bool) {
	raw := chi.URLParam(r, "id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		webpage.NotFound(w, "There is no mail message "+raw+".")
		return nil, false
	}
	m, err := h.Mailbox.Message(r.Context(), id)
	if apperr.CodeOf(err) == apperr.NotFound {
		webpage.NotFound(w, fmt.Sprintf("There is no mail message %d.", id))
		return nil, false
	}
	if err != nil {
		webpage.Fail(w, r, h.Log, "mailbox message", err)
		return nil, false
	}
	return m, true
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, p *webpage.Page, v any) {
	if err := p.Render(w, http.StatusOK, v); err != nil {
		h.Log.ErrorContext(r.Context(), "mailbox page", "error", err)
	}
}

// contentType is a download's Content-Type: the attachment's media type
// when it is one, else application/octet-stream.
func contentType(t string) string {
	if mt, _, err := mime.ParseMediaType(t); err == nil {
		return mt
	}
	return "application/octet-stream"
}

func orNoSubject(s string) string {
	if s == "" {
		return "(no subject)"
	}
	return s
}

// when is an instant as the pages show it.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// size is a byte count for people: "812 bytes", "48.2 KB", "1.3 MB".
func size(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}
