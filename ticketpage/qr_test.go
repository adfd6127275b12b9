package ticketpage

import (
	"image"
	"image/color"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gzqr "github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/require"
)

// decode reads the QR code of a picture that holds exactly one code and
// its quiet zone (a raster of the matrix, the PDF's rectangles, the
// browser's drawing of the SVG) with ZXing's reader, told so
// (PURE_BARCODE): it reads the modules where the picture says they are, so
// the payload is checked for every random code, never missed. ZXing's
// finder-pattern detector, which searches a picture for a code, misses a
// few sharp synthetic codes in a thousand at 4 or more pixels per module
// (it finds them at 1 or 2, and the pure reader reads them all), so scan
// runs it on fixed codes, where its answer never changes.
func decode(tb testing.TB, img image.Image) string {
	tb.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(tb, err)
	res, err := gzqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	require.NoError(tb, err, "the QR code decodes")
	return res.GetText()
}

// scan finds and reads the QR code in img as a door scanner would: the
// detector looks for the code's finder patterns anywhere in the picture.
func scan(tb testing.TB, img image.Image) string {
	tb.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(tb, err)
	res, err := gzqr.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(tb, err, "the QR code is found and decodes")
	return res.GetText()
}

// Fixed codes for the detector: a test one and a live one, each with one
// best mask (see TestQRScans).
const (
	fixedTestCode = "TESTK7Q2M9XRV4H8PZ3WJ6N5BDFGC2LTYA"
	fixedLiveCode = "QE7K2M9XRV4H8PZ3WJ6N5BDFGC2LTYAQ"
)

// raster draws m as a scanner's camera might see it: px pixels per module,
// the quiet zone around it.
func raster(m qrMatrix, px int) *image.Gray {
	n := (len(m) + 2*quietZone) * px
	img := image.NewGray(image.Rect(0, 0, n, n))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	m.runs(func(x, y, l int) {
		for yy := (y + quietZone) * px; yy < (y+quietZone+1)*px; yy++ {
			for xx := (x + quietZone) * px; xx < (x+quietZone+l)*px; xx++ {
				img.SetGray(xx, yy, color.Gray{})
			}
		}
	})
	return img
}

var svgRun = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`)

// fromSVG reads the modules back from the page's SVG: what the browser
// draws.
func fromSVG(tb testing.TB, svg string) qrMatrix {
	tb.Helper()
	vb := regexp.MustCompile(`viewBox="0 0 (\d+) (\d+)"`).FindStringSubmatch(svg)
	require.NotNil(tb, vb, svg)
	require.Equal(tb, vb[1], vb[2], "square")
	n, _ := strconv.Atoi(vb[1])
	n -= 2 * quietZone
	m := make(qrMatrix, n)
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
			m[y-quietZone][x-quietZone+i] = true
		}
	}
	return m
}

func TestQRScans(t *testing.T) {
	t.Parallel()
	for _, code := range []string{fixedTestCode, fixedLiveCode} {
		m, err := newQR(code)
		require.NoError(t, err)
		// go-qrcode scores the eight masks in goroutines and keeps the
		// first lowest score to arrive, so a code with tied masks may draw
		// differently from one call to the next (each drawing valid).
		// These codes have one best mask: the detector sees the same
		// picture every run.
		for range 10 {
			again, err := newQR(code)
			require.NoError(t, err)
			require.Equal(t, m, again)
		}
		for _, px := range []int{1, 2, 3, 4, 6, 8} {
			require.Equal(t, code, scan(t, raster(m, px)), "%s at %d px per module", code, px)
		}
	}
}

func TestQR(t *testing.T) {
	for _, tc := range []struct {
		name string
		code string
		// most is the largest size a code of this kind may take: 33
		// modules (version 4) holds TEST and 32 characters at level Q
		// only in alphanumeric mode.
		most int
	}{
		{"Test", newCode(t, true), 33},
		{"Live", newCode(t, false), 33},
		{"Short", "ABCDEFGHJKLMNPQRSTUVWXYZ23", 29},
		{"Longest", strings.Repeat("Z9", 64), 57},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := newQR(tc.code)
			require.NoError(t, err)
			require.LessOrEqual(t, len(m), tc.most)
			for _, row := range m {
				require.Len(t, row, len(m))
			}
			require.Equal(t, tc.code, decode(t, raster(m, 4)))
			require.Equal(t, tc.code, decode(t, raster(m, 1)), "one pixel per module still reads")

			svg := string(m.svg("QR code of ticket 1 of 3"))
			require.Equal(t, m, fromSVG(t, svg), "the SVG draws exactly the modules")
			require.Contains(t, svg, `shape-rendering="crispEdges"`)
			require.Equal(t, 1, strings.Count(svg, "<path"))
		})
	}
}
