package ticketdoc

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"

	qrcode "github.com/yeqown/go-qrcode/v2"
)

// QuietZone is the blank border, in modules, a scanner needs around a QR
// code to find it (ISO/IEC 18004 asks for four).
const QuietZone = 4

// QR is a QR code's modules, row by row, true for dark, without the
// quiet zone.
type QR [][]bool

// NewQR encodes code, and exactly code, as a QR code at error correction
// level Q (a quarter of the code may be damaged: a folded printout, a
// cracked screen). Codes of A-Z and 0-9 use the alphanumeric mode, so
// TEST and 32 base32 characters fit in 33×33 modules. A code for which
// two of the eight masks score equally may come out with either from one
// call to the next (go-qrcode keeps whichever of its concurrent scorers
// reports first); both read the same.
func NewQR(code string) (QR, error) {
	q, err := qrcode.NewWith(code, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionQuart))
	if err != nil {
		return nil, fmt.Errorf("ticketdoc: qr code: %w", err)
	}
	var w matrixWriter
	if err := q.Save(&w); err != nil {
		return nil, fmt.Errorf("ticketdoc: qr code: %w", err)
	}
	return w.m, nil
}

// matrixWriter receives the encoder's finished matrix: the page and the
// PDF draw the modules themselves, so neither needs an image.
type matrixWriter struct{ m QR }

// Write keeps the finished matrix as modules (qrcode.Writer).
func (w *matrixWriter) Write(m qrcode.Matrix) error {
	w.m = m.Bitmap()
	return nil
}

// Close ends nothing: the modules are in memory (qrcode.Writer).
func (w *matrixWriter) Close() error { return nil }

// runs calls fn for every horizontal run of dark modules: row y, from
// column x, n modules long.
func (m QR) runs(fn func(x, y, n int)) {
	for y, row := range m {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			start := x
			for x < len(row) && row[x] {
				x++
			}
			fn(start, y, x-start)
		}
	}
}

// SVG draws the code as inline SVG for an HTML page, one unit per module
// with the quiet zone: a white square and one path of the dark runs, drawn
// with crisp edges so the modules stay sharp at any size. label, escaped,
// is what a screen reader says of it.
func (m QR) SVG(label string) template.HTML {
	n := strconv.Itoa(len(m) + 2*QuietZone)
	var b strings.Builder
	b.WriteString(`<svg class="qr" viewBox="0 0 ` + n + ` ` + n + `" shape-rendering="crispEdges" role="img" aria-label="` +
		template.HTMLEscapeString(label) + `"><rect width="` + n + `" height="` + n + `" fill="#fff"/><path fill="#000" d="`)
	m.runs(func(x, y, l int) {
		fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x+QuietZone, y+QuietZone, l, l)
	})
	b.WriteString(`"/></svg>`)
	return template.HTML(b.String()) //nolint:gosec // numbers and an escaped label only
}
