// Package ticketdoctest holds what the tests of ticket rendering share:
// orders and codes as the service makes them, and ZXing's QR reader to
// read codes back from a matrix, the page's SVG, a PDF's rectangles or a
// browser's screenshot.
package ticketdoctest

import (
	"crypto/rand"
	"encoding/base32"
	"image"
	"image/color"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/makiuchi-d/gozxing"
	gzqr "github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/require"
)

// NewCode returns a fresh ticket code as the service makes them: 32
// base32 characters (160 random bits), after TEST for a test ticket.
func NewCode(tb testing.TB, test bool) string {
	tb.Helper()
	b := make([]byte, 20)
	_, err := rand.Read(b)
	require.NoError(tb, err)
	code := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
	if test {
		return "TEST" + code
	}
	return code
}

// MustZone loads an IANA zone.
func MustZone(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(tb, err)
	return loc
}

// NewOrder returns an order of three tickets of a date in Accra: valid,
// checked in, void; a test order when test is set.
func NewOrder(tb testing.TB, test bool) *ticketdoc.Order {
	tb.Helper()
	accra := MustZone(tb, "Africa/Accra")
	o := &ticketdoc.Order{
		Reference: "ORD-7QK2M9", Test: test,
		EventName: "Café Ñoño — New Year’s Eve Gala",
		Start:     time.Date(2026, 12, 24, 18, 0, 0, 0, accra),
		End:       time.Date(2026, 12, 24, 23, 0, 0, 0, accra),
		Venue:     "National Theatre", Address: "South Liberia Road\nAccra, Ghana",
	}
	for i, st := range []string{ticketdoc.StatusValid, ticketdoc.StatusCheckedIn, ticketdoc.StatusVoid} {
		o.Tickets = append(o.Tickets, ticketdoc.Ticket{Code: NewCode(tb, test), TicketName: []string{"VIP", "General admission", "General admission"}[i],
			Position: i + 1, Total: 3, Status: st})
	}
	return o
}

// Decode reads the QR code of a picture that holds exactly one code and
// its quiet zone (a raster of the matrix, the PDF's rectangles, the
// browser's drawing of the SVG) with ZXing's reader, told so
// (PURE_BARCODE): it reads the modules where the picture says they are, so
// the payload is checked for every random code, never missed. ZXing's
// finder-pattern detector, which searches a picture for a code, misses a
// few sharp synthetic codes in a thousand at 4 or more pixels per module
// (it finds them at 1 or 2, and the pure reader reads them all), so Scan
// runs it on fixed codes, where its answer never changes.
func Decode(tb testing.TB, img image.Image) string {
	tb.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(tb, err)
	res, err := gzqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	require.NoError(tb, err, "the QR code decodes")
	return res.GetText()
}

// Scan finds and reads the QR code in img as a door scanner would: the
// detector looks for the code's finder patterns anywhere in the picture.
func Scan(tb testing.TB, img image.Image) string {
	tb.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(tb, err)
	res, err := gzqr.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(tb, err, "the QR code is found and decodes")
	return res.GetText()
}

// Fixed codes for the detector: a test one and a live one, each with one
// best mask (see ticketdoc's TestQRScans).
const (
	// FixedTestCode is a test ticket's code.
	FixedTestCode = "TESTK7Q2M9XRV4H8PZ3WJ6N5BDFGC2LTYA"
	// FixedLiveCode is a live ticket's code.
	FixedLiveCode = "QE7K2M9XRV4H8PZ3WJ6N5BDFGC2LTYAQ"
)

// Raster draws m as a scanner's camera might see it: px pixels per module,
// the quiet zone around it.
func Raster(m ticketdoc.QR, px int) *image.Gray {
	n := (len(m) + 2*ticketdoc.QuietZone) * px
	img := image.NewGray(image.Rect(0, 0, n, n))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for y, row := range m {
		for x, dark := range row {
			if !dark {
				continue
			}
			for yy := (y + ticketdoc.QuietZone) * px; yy < (y+ticketdoc.QuietZone+1)*px; yy++ {
				for xx := (x + ticketdoc.QuietZone) * px; xx < (x+ticketdoc.QuietZone+1)*px; xx++ {
					img.SetGray(xx, yy, color.Gray{})
				}
			}
		}
	}
	return img
}

var pageObject = regexp.MustCompile(`/Type /Page[^s]`)

// PDFPages counts the pages of a PDF that ticketdoc.RenderPDF wrote.
func PDFPages(pdf []byte) int { return len(pageObject.FindAll(pdf, -1)) }

var svgRun = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`)

// FromSVG reads the modules back from the page's SVG (ticketdoc.QR.SVG):
// what the browser draws.
func FromSVG(tb testing.TB, svg string) ticketdoc.QR {
	tb.Helper()
	vb := regexp.MustCompile(`viewBox="0 0 (\d+) (\d+)"`).FindStringSubmatch(svg)
	require.NotNil(tb, vb, svg)
	require.Equal(tb, vb[1], vb[2], "square")
	n, _ := strconv.Atoi(vb[1])
	n -= 2 * ticketdoc.QuietZone
	m := make(ticketdoc.QR, n)
	for i := range m {
		m[i] = make([]bool, n)
	}
	d := regexp.MustCompile(`<path fill="#000" d="([^"]*)"/>`).FindStringSubmatch(svg)
	require.NotNil(tb, d, "one path of dark modules")
	require.Equal(tb, len(d[1]), len(strings.Join(svgRun.FindAllString(d[1], -1), "")), "the path is runs only")
	for _, r := range svgRun.FindAllStringSubmatch(d[1], -1) {
		x, _ := strconv.Atoi(r[1])
		y, _ := strconv.Atoi(r[2])
		l, _ := strconv.Atoi(r[3])
		require.Equal(tb, r[3], r[4])
		for i := 0; i < l; i++ {
			m[y-ticketdoc.QuietZone][x-ticketdoc.QuietZone+i] = true
		}
	}
	return m
}
