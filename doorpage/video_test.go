package doorpage

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	qrcode "github.com/yeqown/go-qrcode/v2"
)

// qrModules encodes code as the ticket page does (error correction level
// Q) and returns its modules, row by row, true for dark, without the quiet
// zone.
func qrModules(t *testing.T, code string) [][]bool {
	t.Helper()
	q, err := qrcode.NewWith(code, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionQuart))
	require.NoError(t, err)
	var w matrixWriter
	require.NoError(t, q.Save(&w))
	require.NotEmpty(t, w.m)
	return w.m
}

type matrixWriter struct{ m [][]bool }

func (w *matrixWriter) Write(m qrcode.Matrix) error { w.m = m.Bitmap(); return nil }
func (w *matrixWriter) Close() error                { return nil }

// writeY4M writes a short video for Chromium's fake camera
// (--use-file-for-fake-video-capture): YUV4MPEG2, 640×480, 4:2:0, 10
// frames a second, a light grey scene with the QR code of code in the
// middle, 7 pixels a module, on its white quiet zone, as a phone's screen
// held up to the camera; each frame moves it by a pixel, as a hand does.
// Chromium plays the file in a loop.
func writeY4M(t *testing.T, code string) string {
	t.Helper()
	const width, height, px, quiet, frames = 640, 480, 7, 4, 6
	m := qrModules(t, code)
	side := (len(m) + 2*quiet) * px
	require.Less(t, side, height-2*frames, "the code fits the frame")
	path := filepath.Join(t.TempDir(), "ticket.y4m")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	b := bufio.NewWriter(f)
	_, err = fmt.Fprintf(b, "YUV4MPEG2 W%d H%d F10:1 Ip A1:1 C420jpeg\n", width, height)
	require.NoError(t, err)
	luma := make([]byte, width*height)
	chroma := make([]byte, width*height/2) // U and V, both neutral
	for i := range chroma {
		chroma[i] = 128
	}
	for n := range frames {
		x0, y0 := (width-side)/2+n-frames/2, (height-side)/2+n%3-1
		for y := range height {
			for x := range width {
				v := byte(190) // the scene around the phone
				if x >= x0 && x < x0+side && y >= y0 && y < y0+side {
					v = 250 // the quiet zone, a lit screen
					mx, my := (x-x0)/px-quiet, (y-y0)/px-quiet
					if my >= 0 && my < len(m) && mx >= 0 && mx < len(m) && m[my][mx] {
						v = 20
					}
				}
				luma[y*width+x] = v
			}
		}
		_, err = b.WriteString("FRAME\n")
		require.NoError(t, err)
		_, err = b.Write(luma)
		require.NoError(t, err)
		_, err = b.Write(chroma)
		require.NoError(t, err)
	}
	require.NoError(t, b.Flush())
	return path
}
