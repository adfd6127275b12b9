package ticketpage

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"

	qrcode "github.com/yeqown/go-qrcode/v2"
)

// quietZone is the blank border, in modules, a scanner needs around a QR
// code to find it (ISO/IEC 18004 asks for four).
const quietZone = 4

// qrMatrix is a QR code's modules, row by row, true for dark, without the
// quiet zone.
type qrMatrix [][]bool

// newQR encodes code, and exactly code, as a QR code at error correction
// level Q (a quarter of the code may be damaged: a folded printout, a
// cracked screen). Codes of A-Z and 0-9 use the alphanumeric mode, so
// TEST and 32 base32 characters fit in 33×33 modules. A code for which
// two of the eight masks score equally may come out with either from one
// call to the next (go-qrcode keeps whichever of its concurrent scorers
// reports first); both read the same.
func newQR(code string) (qrMatrix, error) {
	q, err := qrcode.NewWith(code, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionQuart))
	if err != nil {
		return nil, fmt.Errorf("ticketpage: qr code: %w", err)
	}
	var w matrixWriter
	if err := q.Save(&w); err != nil {
		return nil, fmt.Errorf("ticketpage: qr code: %w", err)
	}
	return w.m, nil
}

// matrixWriter receives the encoder's finished matrix: the page and the
// PDF draw the modules themselves, so neither needs an image.
type matrixWriter struct{ m qrMatrix }

func (w *matrixWriter) Write(m qrcode.Matrix) error {
	w.m = m.Bitmap()
	return nil
}

func (w *matrixWriter) Close() error { return nil }

// runs calls fn for every horizontal run of dark modules: row y, from
// column x, n modules long.
func (m qrMatrix) runs(fn func(x, y, n int)) {
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

// svg draws the code as inline SVG, one unit per module with the quiet
// zone: a white square and one path of the dark runs, drawn with crisp
// edges so the modules stay sharp at any size.
func (m qrMatrix) svg(label string) template.HTML {
	n := strconv.Itoa(len(m) + 2*quietZone)
	var b strings.Builder
	b.WriteString(`<svg class="qr" viewBox="0 0 ` + n + ` ` + n + `" shape-rendering="crispEdges" role="img" aria-label="` +
		template.HTMLEscapeString(label) + `"><rect width="` + n + `" height="` + n + `" fill="#fff"/><path fill="#000" d="`)
	m.runs(func(x, y, l int) {
		fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x+quietZone, y+quietZone, l, l)
	})
	b.WriteString(`"/></svg>`)
	return template.HTML(b.String()) //nolint:gosec // numbers and an escaped label only
}
