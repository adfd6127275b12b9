package main

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// ticketQR opens the buyer's ticket page at pageURL (an order's
// tickets_url) in a Chromium of its own at a phone's size and returns the
// QR code of the ticket at position as the phone's screen shows it, quiet
// zone included.
func ticketQR(t *testing.T, execPath, pageURL string, position int) image.Image {
	t.Helper()
	ctx := newChromium(t, execPath)
	var shot []byte
	sel := fmt.Sprintf(`#ticket-%d svg.qr`, position)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Screenshot(sel, &shot, chromedp.ByQuery),
	), "the ticket page's QR code")
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	return img
}

// writeY4M writes a short video for Chromium's fake camera
// (--use-file-for-fake-video-capture): YUV4MPEG2, 640×480, 4:2:0, 10
// frames a second, a light grey scene with img (a phone's screen held up
// to the camera) in the middle; each frame moves it by a pixel, as a hand
// does. Chromium plays the file in a loop.
func writeY4M(t *testing.T, img image.Image) string {
	t.Helper()
	const width, height, frames = 640, 480, 6
	b := img.Bounds()
	require.Less(t, b.Dy(), height-2*frames, "the code fits the frame")
	require.Less(t, b.Dx(), width-2*frames)
	path := filepath.Join(t.TempDir(), "ticket.y4m")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	w := bufio.NewWriter(f)
	_, err = fmt.Fprintf(w, "YUV4MPEG2 W%d H%d F10:1 Ip A1:1 C420jpeg\n", width, height)
	require.NoError(t, err)
	luma := make([]byte, width*height)
	chroma := make([]byte, width*height/2) // U and V, both neutral
	for i := range chroma {
		chroma[i] = 128
	}
	for n := range frames {
		x0, y0 := (width-b.Dx())/2+n-frames/2, (height-b.Dy())/2+n%3-1
		for y := range height {
			for x := range width {
				v := uint8(190) // the scene around the phone
				if x >= x0 && x < x0+b.Dx() && y >= y0 && y < y0+b.Dy() {
					v = color.GrayModel.Convert(img.At(b.Min.X+x-x0, b.Min.Y+y-y0)).(color.Gray).Y
				}
				luma[y*width+x] = v
			}
		}
		_, err = w.WriteString("FRAME\n")
		require.NoError(t, err)
		_, err = w.Write(luma)
		require.NoError(t, err)
		_, err = w.Write(chroma)
		require.NoError(t, err)
	}
	require.NoError(t, w.Flush())
	return path
}
