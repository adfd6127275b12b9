package ticketdoc_test

import (
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/ticketdoc/ticketdoctest"
	"github.com/stretchr/testify/require"
)

func TestQRScans(t *testing.T) {
	t.Parallel()
	for _, code := range []string{ticketdoctest.FixedTestCode, ticketdoctest.FixedLiveCode} {
		m, err := ticketdoc.NewQR(code)
		require.NoError(t, err)
		// go-qrcode scores the eight masks in goroutines and keeps the
		// first lowest score to arrive, so a code with tied masks may draw
		// differently from one call to the next (each drawing valid).
		// These codes have one best mask: the detector sees the same
		// picture every run.
		for range 10 {
			again, err := ticketdoc.NewQR(code)
			require.NoError(t, err)
			require.Equal(t, m, again)
		}
		for _, px := range []int{1, 2, 3, 4, 6, 8} {
			require.Equal(t, code, ticketdoctest.Scan(t, ticketdoctest.Raster(m, px)), "%s at %d px per module", code, px)
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
		{"Test", ticketdoctest.NewCode(t, true), 33},
		{"Live", ticketdoctest.NewCode(t, false), 33},
		{"Short", "ABCDEFGHJKLMNPQRSTUVWXYZ23", 29},
		{"Longest", strings.Repeat("Z9", 64), 57},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := ticketdoc.NewQR(tc.code)
			require.NoError(t, err)
			require.LessOrEqual(t, len(m), tc.most)
			for _, row := range m {
				require.Len(t, row, len(m))
			}
			require.Equal(t, tc.code, ticketdoctest.Decode(t, ticketdoctest.Raster(m, 4)))
			require.Equal(t, tc.code, ticketdoctest.Decode(t, ticketdoctest.Raster(m, 1)), "one pixel per module still reads")

			svg := string(m.SVG("QR code of ticket 1 of 3"))
			require.Equal(t, m, ticketdoctest.FromSVG(t, svg), "the SVG draws exactly the modules")
			require.Contains(t, svg, `shape-rendering="crispEdges"`)
			require.Equal(t, 1, strings.Count(svg, "<path"))
		})
	}
}
