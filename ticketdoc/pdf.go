package ticketdoc

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/go-pdf/fpdf"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

// The PDF's page: A6 portrait, a ticket's size that prints on any printer
// and fills a phone's screen.
const (
	pageW, pageH = 105.0, 148.0 // mm
	margin       = 7.0
	labelW       = 17.0 // the facts' label column
)

// Colours, as the page's CSS has them.
var (
	ink    = [3]int{29, 35, 48}
	muted  = [3]int{93, 102, 120}
	line   = [3]int{210, 214, 224}
	blue   = [3]int{43, 89, 195}
	green  = [3]int{19, 122, 75}
	red    = [3]int{179, 38, 30}
	amber  = [3]int{255, 212, 92}
	brown  = [3]int{92, 60, 0}
	onInk  = [3]int{255, 255, 255}
	onInk2 = [3]int{196, 205, 228}
)

// RenderPDF writes the tickets of o as a PDF, one A6 page per ticket, with
// the page's facts, the QR code drawn as filled rectangles (payload exactly
// the code), and the code in groups of four; a void ticket's page shows
// VOID and no QR code, and a test order's pages say "Test ticket — not
// valid for entry" at top and bottom. Text is printed in the core fonts'
// Windows-1252: a character it lacks becomes its base letter where it has
// one (ł has none, ź has z), else "?". Errors: for an order without
// tickets, from the QR encoder or the PDF writer, or w's.
func RenderPDF(w io.Writer, o *Order) error {
	return RenderPDFContext(context.Background(), w, o)
}

// RenderPDFContext is RenderPDF that stops, returning ctx's error, when
// ctx ends: a PDF of a thousand tickets takes seconds of a core, which
// must not go on for a client that left. It checks between pages.
func RenderPDFContext(ctx context.Context, w io.Writer, o *Order) error {
	if len(o.Tickets) == 0 {
		return ErrNoTickets
	}
	pdf := fpdf.NewCustom(&fpdf.InitType{OrientationStr: "P", UnitStr: "mm", Size: fpdf.SizeType{Wd: pageW, Ht: pageH}})
	pdf.SetMargins(margin, margin, margin)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetTitle("Tickets · "+o.EventName, true)
	pdf.SetCreator("Boxoffice", false)
	pdf.SetLang("en")
	f := FactsOf(o)
	for _, t := range o.Tickets {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := drawTicket(pdf, o, f, t); err != nil {
			return err
		}
	}
	return pdf.Output(w)
}

// drawTicket draws one ticket's page, top to bottom.
func drawTicket(pdf *fpdf.Fpdf, o *Order, f Facts, t Ticket) error {
	pdf.AddPage()
	y := 0.0
	if o.Test {
		testBand(pdf, 0)
		y = 8
	}

	// The band: ticket type and "n of N", then the event's name.
	pdf.SetFont("Helvetica", "B", 15)
	name := fit(pdf, o.EventName, pageW-2*margin, 3)
	bandH := 5 + 5 + 6.2*float64(len(name)) + 4
	fill(pdf, ink)
	pdf.Rect(0, y, pageW, bandH, "F")
	pdf.SetFont("Helvetica", "B", 9)
	textColor(pdf, onInk2)
	pos := cp1252(t.Of())
	typeW := pageW - 2*margin - pdf.GetStringWidth(pos) - 3
	pdf.SetXY(margin, y+4)
	pdf.CellFormat(typeW, 5, fit(pdf, t.TicketName, typeW, 1)[0], "", 0, "L", false, 0, "")
	pdf.SetXY(margin, y+4)
	pdf.CellFormat(pageW-2*margin, 5, pos, "", 0, "R", false, 0, "")
	pdf.SetFont("Helvetica", "B", 15)
	textColor(pdf, onInk)
	for i, l := range name {
		pdf.SetXY(margin, y+10+6.2*float64(i))
		pdf.CellFormat(pageW-2*margin, 6.2, l, "", 0, "L", false, 0, "")
	}
	y += bandH + 4

	// The facts, a label column and a value column.
	status := green
	switch t.Status {
	case StatusCheckedIn:
		status = blue
	case StatusVoid:
		status = red
	}
	y = fact(pdf, y, "DATE", f.Day, "", ink, 2)
	if f.Time != "" {
		y = fact(pdf, y, "TIME", f.Time, "", ink, 2)
	}
	y = fact(pdf, y, "VENUE", f.Place, "B", ink, 2)
	if f.Address != "" {
		y = fact(pdf, y-1.2, "", f.Address, "", muted, 2)
	}
	y = fact(pdf, y, "STATUS", StatusLabel(t.Status), "B", status, 1)

	// The perforation.
	y += 1
	draw(pdf, line)
	pdf.SetLineWidth(0.3)
	pdf.SetDashPattern([]float64{1.2, 1}, 0)
	pdf.Line(0, y, pageW, y)
	pdf.SetDashPattern(nil, 0)
	y += 3

	// The stub: the QR code (or VOID) and the code under it, in the middle
	// of the space above the footer.
	bottom := pageH - 9
	if o.Test {
		bottom -= 7
	}
	code, codeSize := codeLines(pdf, t.Code)
	lineH := codeSize * 0.45 // mm: the size in points, with some leading
	codeH := lineH * float64(len(code))
	const gap = 3
	size := min(bottom-y-gap-codeH-2, 64)
	y += (bottom - y - size - gap - codeH) / 2
	if t.Status == StatusVoid {
		voidStamp(pdf, y, y+size)
	} else {
		m, err := NewQR(t.Code)
		if err != nil {
			return fmt.Errorf("ticket %s: %w", t.Of(), err)
		}
		drawQR(pdf, m, (pageW-size)/2, y, size)
	}
	y += size + gap
	pdf.SetFont("Courier", "B", codeSize)
	textColor(pdf, ink)
	if t.Status == StatusVoid {
		textColor(pdf, muted)
	}
	for i, l := range code {
		pdf.SetXY(margin, y+lineH*float64(i))
		pdf.CellFormat(pageW-2*margin, lineH, l, "", 0, "C", false, 0, "")
	}

	// The footer.
	pdf.SetFont("Helvetica", "", 7.5)
	textColor(pdf, muted)
	pdf.SetXY(margin, bottom+2)
	pdf.CellFormat(pageW-2*margin, 4, cp1252("Order "+o.Reference+" · Ticket "+t.Of()), "", 0, "C", false, 0, "")
	if o.Test {
		testBand(pdf, pageH-8)
	}
	return pdf.Error()
}

// testBand is the amber band that marks a test ticket.
func testBand(pdf *fpdf.Fpdf, y float64) {
	fill(pdf, amber)
	pdf.Rect(0, y, pageW, 8, "F")
	pdf.SetFont("Helvetica", "B", 9)
	textColor(pdf, brown)
	pdf.SetXY(0, y)
	pdf.CellFormat(pageW, 8, cp1252("Test ticket — not valid for entry"), "", 0, "C", false, 0, "")
}

// fact prints a label and its value, wrapped to at most maxLines, and
// returns the y below it.
func fact(pdf *fpdf.Fpdf, y float64, label, value, style string, c [3]int, maxLines int) float64 {
	if label != "" {
		pdf.SetFont("Helvetica", "B", 7)
		textColor(pdf, muted)
		pdf.SetXY(margin, y+0.4)
		pdf.CellFormat(labelW, 4.6, label, "", 0, "L", false, 0, "")
	}
	pdf.SetFont("Helvetica", style, 10)
	textColor(pdf, c)
	w := pageW - 2*margin - labelW
	for _, l := range fit(pdf, value, w, maxLines) {
		pdf.SetXY(margin+labelW, y)
		pdf.CellFormat(w, 4.6, l, "", 0, "L", false, 0, "")
		y += 4.6
	}
	return y + 1.6
}

// drawQR draws m with its quiet zone as a size×size square at x, y: a
// white square and a black rectangle per run of dark modules. Each run
// reaches a hair into the row below, so no viewer shows seams between
// rows.
func drawQR(pdf *fpdf.Fpdf, m QR, x, y, size float64) {
	s := size / float64(len(m)+2*QuietZone)
	fill(pdf, onInk)
	pdf.Rect(x, y, size, size, "F")
	pdf.SetFillColor(0, 0, 0)
	m.runs(func(mx, my, n int) {
		pdf.Rect(x+float64(mx+QuietZone)*s, y+float64(my+QuietZone)*s, float64(n)*s, s+0.02, "F")
	})
}

// voidStamp fills the QR code's place, between top and bottom, with a
// red VOID and why there is no code to scan.
func voidStamp(pdf *fpdf.Fpdf, top, bottom float64) {
	mid := (top + bottom) / 2
	pdf.SetFont("Helvetica", "B", 44)
	w := pdf.GetStringWidth("VOID") + 10
	draw(pdf, red)
	textColor(pdf, red)
	pdf.SetLineWidth(1.4)
	pdf.TransformBegin()
	pdf.TransformRotate(8, pageW/2, mid-4)
	pdf.Rect((pageW-w)/2, mid-14, w, 20, "D")
	pdf.SetXY((pageW-w)/2, mid-14)
	pdf.CellFormat(w, 20, "VOID", "", 0, "C", false, 0, "")
	pdf.TransformEnd()
	pdf.SetFont("Helvetica", "B", 8.5)
	pdf.SetXY(margin, mid+12)
	pdf.CellFormat(pageW-2*margin, 5, "This ticket was voided and will not be admitted.", "", 0, "C", false, 0, "")
}

// codeLines splits the code, in groups of four, into as few lines as fit
// the page, the same number of groups on each but the last, and returns
// them with the font size they fit at: at most three lines, in a smaller
// font for a code far longer than the service makes.
func codeLines(pdf *fpdf.Fpdf, code string) (lines []string, size float64) {
	g := Groups(cp1252(code))
	text := []byte(strings.Join(g, " "))
	n := 1
	for _, size = range []float64{11, 9, 7.5, 6} {
		pdf.SetFont("Courier", "B", size)
		if n = len(pdf.SplitLines(text, pageW-2*margin-10)); n <= 3 {
			break
		}
	}
	per := (len(g) + n - 1) / max(n, 1)
	for len(g) > 0 {
		k := min(per, len(g))
		lines = append(lines, strings.Join(g[:k], " "))
		g = g[k:]
	}
	return lines, size
}

// fit translates s for the current font and splits it into lines of width
// w, at least one and at most max: a longer text ends its last line
// with "…".
func fit(pdf *fpdf.Fpdf, s string, w float64, max int) []string {
	var out []string
	for _, l := range pdf.SplitLines([]byte(cp1252(s)), w) {
		out = append(out, string(l))
	}
	if len(out) == 0 {
		return []string{""}
	}
	if len(out) <= max {
		return out
	}
	out = out[:max]
	last := strings.TrimRight(out[max-1], " ")
	const ellipsis = "\x85" // … in Windows-1252
	for last != "" && pdf.GetStringWidth(last+ellipsis) > w-2*pdf.GetCellMargin() {
		last = strings.TrimRight(last[:len(last)-1], " ")
	}
	out[max-1] = last + ellipsis
	return out
}

// cp1252 returns s in Windows-1252, the core fonts' encoding: a letter
// with a mark the code page lacks becomes its base letter, a combining
// mark left over is dropped, a control character becomes a space (line
// breaks stay), anything else becomes "?".
func cp1252(s string) string {
	var b strings.Builder
	for _, r := range norm.NFC.String(s) {
		if c, ok := latin(r); ok {
			b.WriteByte(c)
			continue
		}
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		base := []rune(norm.NFD.String(string(r)))[0]
		if c, ok := latin(base); ok && base != r {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('?')
	}
	return b.String()
}

// latin encodes one rune in Windows-1252, control characters as spaces.
func latin(r rune) (byte, bool) {
	switch {
	case r == '\n':
		return '\n', true
	case r < 0x20 || r == 0x7f:
		return ' ', true
	case r < 0x80:
		return byte(r), true
	}
	return charmap.Windows1252.EncodeRune(r)
}

func textColor(pdf *fpdf.Fpdf, c [3]int) { pdf.SetTextColor(c[0], c[1], c[2]) }
func fill(pdf *fpdf.Fpdf, c [3]int)      { pdf.SetFillColor(c[0], c[1], c[2]) }
func draw(pdf *fpdf.Fpdf, c [3]int)      { pdf.SetDrawColor(c[0], c[1], c[2]) }
