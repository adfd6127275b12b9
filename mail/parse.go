package mail

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"net/textproto"
	"strings"
)

// shownHeaders are the header fields Stored.Headers holds, in order.
var shownHeaders = []string{"Date", "From", "To", "Subject", "Message-Id"}

// maxParts bounds how many MIME parts readRaw walks: the mailbox holds
// what compose wrote, but a page must not hang on a malformed row.
const maxParts = 100

// readRaw reads a raw MIME message back: its shown headers, decoded, and
// its attachments (every leaf part with an attachment disposition or a
// file name), decoded from their transfer encoding.
func readRaw(raw string) ([]Header, []Attachment, error) {
	msg, err := netmail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("mail: read stored message: %w", err)
	}
	var dec mime.WordDecoder
	var headers []Header
	for _, name := range shownHeaders {
		if v := msg.Header.Get(name); v != "" {
			if d, err := dec.DecodeHeader(v); err == nil {
				v = d
			}
			headers = append(headers, Header{Name: name, Value: v})
		}
	}
	w := walker{attachments: []Attachment{}}
	if err := w.walk(textproto.MIMEHeader(msg.Header), msg.Body); err != nil {
		return nil, nil, fmt.Errorf("mail: read stored message: %w", err)
	}
	return headers, w.attachments, nil
}

type walker struct {
	parts       int
	attachments []Attachment
}

func (w *walker) walk(h textproto.MIMEHeader, body io.Reader) error {
	if w.parts++; w.parts > maxParts {
		return fmt.Errorf("more than %d MIME parts", maxParts)
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mt, params = "text/plain", nil
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := w.walk(p.Header, p); err != nil {
				return err
			}
		}
	}
	disposition, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	if disposition != "attachment" && name == "" {
		return nil
	}
	// go-mail writes a non-ASCII file name as an encoded word.
	var dec mime.WordDecoder
	if d, err := dec.DecodeHeader(name); err == nil {
		name = d
	}
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	w.attachments = append(w.attachments, Attachment{Name: name, ContentType: mt, Data: data})
	return nil
}
