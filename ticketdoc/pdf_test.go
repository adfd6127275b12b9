package ticketdoc_test

import (
	"bytes"
	"compress/zlib"
	"image"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/ticketdoc/ticketdoctest"
	"github.com/stretchr/testify/require"
)

// mustPDF renders o's PDF; with BOXOFFICE_SCREENSHOTS set it keeps a copy
// there as name, to look at.
func mustPDF(tb testing.TB, o *ticketdoc.Order, name string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	require.NoError(tb, ticketdoc.RenderPDF(&buf, o))
	if dir := os.Getenv("BOXOFFICE_SCREENSHOTS"); dir != "" && name != "" {
		require.NoError(tb, os.MkdirAll(dir, 0o755))
		require.NoError(tb, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644))
	}
	return buf.Bytes()
}

// pageContents returns the content stream of each page, inflated, in
// order: the streams that draw (fonts are not embedded, so there are no
// others that do).
func pageContents(tb testing.TB, pdf []byte) []string {
	tb.Helper()
	var out []string
	for _, m := range regexp.MustCompile(`(?s)/Filter /FlateDecode /Length \d+>>\nstream\n(.*?)\nendstream`).FindAllSubmatch(pdf, -1) {
		zr, err := zlib.NewReader(bytes.NewReader(m[1]))
		require.NoError(tb, err)
		b, err := io.ReadAll(zr)
		require.NoError(tb, err)
		if s := string(b); strings.Contains(s, " re f") || strings.Contains(s, "BT ") {
			out = append(out, s)
		}
	}
	return out
}

var rectOp = regexp.MustCompile(`^([\d.-]+) ([\d.-]+) ([\d.-]+) ([\d.-]+) re f$`)

// qrFromPage finds the black rectangles of a page's content stream, the QR
// code's modules (nothing else on the page is pure black), and draws them
// as a picture at 4 pixels per point with a white border; ok is false for a
// page without any.
func qrFromPage(tb testing.TB, content string) (img *image.Gray, ok bool) {
	tb.Helper()
	type rect struct{ x0, y0, x1, y1 float64 }
	var rects []rect
	black := false
	for _, l := range strings.Split(content, "\n") {
		switch {
		case l == "0.000 g":
			black = true
		case strings.HasSuffix(l, " g") || strings.HasSuffix(l, " rg"):
			black = false
		case black && rectOp.MatchString(l):
			m := rectOp.FindStringSubmatch(l)
			var v [4]float64
			for i := range v {
				f, err := strconv.ParseFloat(m[i+1], 64)
				require.NoError(tb, err)
				v[i] = f
			}
			rects = append(rects, rect{v[0], math.Min(v[1], v[1]+v[3]), v[0] + v[2], math.Max(v[1], v[1]+v[3])})
		}
	}
	if len(rects) == 0 {
		return nil, false
	}
	box := rects[0]
	for _, r := range rects {
		box = rect{math.Min(box.x0, r.x0), math.Min(box.y0, r.y0), math.Max(box.x1, r.x1), math.Max(box.y1, r.y1)}
	}
	const scale, border = 4.0, 40
	w := int(math.Ceil((box.x1-box.x0)*scale)) + 2*border
	h := int(math.Ceil((box.y1-box.y0)*scale)) + 2*border
	img = image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for _, r := range rects {
		// PDF's y runs up; the picture's down.
		for y := int(math.Round((box.y1 - r.y1) * scale)); y < int(math.Round((box.y1-r.y0)*scale)); y++ {
			for x := int(math.Round((r.x0 - box.x0) * scale)); x < int(math.Round((r.x1-box.x0)*scale)); x++ {
				img.SetGray(x+border, y+border, color.Gray{})
			}
		}
	}
	return img, true
}

// has checks that a page's content stream holds s, failing without
// printing the whole stream.
func has(tb testing.TB, content, s string, why ...string) {
	tb.Helper()
	require.True(tb, strings.Contains(content, s), "the page shows %q %s", s, strings.Join(why, " "))
}

// hasNot checks that a page's content stream does not hold s.
func hasNot(tb testing.TB, content, s string) {
	tb.Helper()
	require.False(tb, strings.Contains(content, s), "the page does not show %q", s)
}

func TestRenderPDF(t *testing.T) {
	t.Parallel()
	t.Run("TestOrder", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, true)
		pdf := mustPDF(t, o, "tickets-test.pdf")
		require.True(t, bytes.HasPrefix(pdf, []byte("%PDF-")))
		require.Equal(t, 3, ticketdoctest.PDFPages(pdf), "one page per ticket")
		pages := pageContents(t, pdf)
		require.Len(t, pages, 3)
		for i, p := range pages {
			has(t, p, "(Test ticket \x97 not valid for entry)", "on every page")
			has(t, p, "(Caf\xe9 \xd1o\xf1o \x97 New Year\x92s Eve Gala)", "UTF-8 printed in Windows-1252")
			has(t, p, "("+strconv.Itoa(i+1)+" of 3)")
			has(t, p, "(Thu, 24 Dec 2026)")
			has(t, p, "(6:00 PM \x96 11:00 PM GMT \\(Africa/Accra\\))")
			has(t, p, "(National Theatre)")
			has(t, p, "(Accra, Ghana)")
			has(t, p, "("+o.Tickets[i].TicketName+")")
			has(t, p, "("+strings.Join(ticketdoc.Groups(o.Tickets[i].Code)[:3], " "))
		}
		has(t, pages[0], "(Valid)")
		has(t, pages[1], "(Checked in)")
		for i := range 2 {
			img, ok := qrFromPage(t, pages[i])
			require.True(t, ok, "page %d has a QR code", i+1)
			require.Equal(t, o.Tickets[i].Code, ticketdoctest.Decode(t, img), "the PDF's QR code reads as the code")
		}
		_, ok := qrFromPage(t, pages[2])
		require.False(t, ok, "a void ticket's page has no QR code")
		has(t, pages[2], "(VOID)")
	})
	t.Run("LiveOrder", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, false)
		o.Venue = ""
		o.Tickets = o.Tickets[:1]
		pdf := mustPDF(t, o, "tickets-live.pdf")
		require.Equal(t, 1, ticketdoctest.PDFPages(pdf))
		pages := pageContents(t, pdf)
		hasNot(t, pages[0], "not valid for entry")
		has(t, pages[0], "(Online)")
		img, ok := qrFromPage(t, pages[0])
		require.True(t, ok)
		require.Equal(t, o.Tickets[0].Code, ticketdoctest.Decode(t, img))
	})
	t.Run("LongAndForeign", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, true)
		o.EventName = strings.Repeat("Łódź Jazz 🎷 Festiwal — ", 12)
		o.Venue = strings.Repeat("Filharmonia im. Artura Rubinsteina ", 5)
		o.Address = "ul. Narutowicza 20/22\n90-135 Łódź\n\x00\x1b[31m Poland"
		o.Tickets[0].TicketName = strings.Repeat("Karnet 3-dniowy ", 10)
		o.Tickets[0].Code = strings.Repeat("Z9", 64)
		pdf := mustPDF(t, o, "tickets-long.pdf")
		require.Equal(t, 3, ticketdoctest.PDFPages(pdf))
		p := pageContents(t, pdf)[0]
		has(t, p, "(?\xf3dz Jazz ? Festiwal \x97 ?\xf3dz Jazz)", "a letter the fonts lack is its base letter or ?")
		has(t, p, "\x85)", "a name too long for three lines ends in …")
		img, ok := qrFromPage(t, p)
		require.True(t, ok)
		require.Equal(t, o.Tickets[0].Code, ticketdoctest.Decode(t, img))
	})
	t.Run("ErrNoTickets", func(t *testing.T) {
		t.Parallel()
		o := ticketdoctest.NewOrder(t, false)
		o.Tickets = nil
		require.ErrorIs(t, ticketdoc.RenderPDF(&bytes.Buffer{}, o), ticketdoc.ErrNoTickets)
	})
}

func TestCP1252(t *testing.T) {
	for in, want := range map[string]string{
		"Café Ñoño":          "Caf\xe9 \xd1o\xf1o",
		"6:00 PM – 11:00 PM": "6:00 PM \x96 11:00 PM",
		"€5 · “VIP”":         "\x805 \xb7 \x93VIP\x94",
		"Łódź":               "?\xf3dz",
		"Cafe\u0301":         "Caf\xe9", // decomposed é
		"a\u0327\u0301":      "\xe1",    // á, and the cedilla it cannot carry goes
		"日本 🎉":               "?? ?",
		"tab\tand\x00nul":    "tab and nul",
		"two\nlines":         "two\nlines",
		"\u0085\u009d":       "??",
	} {
		require.Equal(t, want, ticketdoc.CP1252(in), "%q", in)
	}
}
